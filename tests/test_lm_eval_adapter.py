"""The lm-evaluation-harness adapter (model "pllscore") and `pllscore lm-eval`, against lm-eval's own hf model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from pllscore.errors import ModelError
from tests.conftest import TINY_BERT, TINY_GPT2
from tests.test_cli import run

PARADIGMS = ("anaphor_gender_agreement", "determiner_noun_agreement_2")
BLIMP = Path(__file__).resolve().parents[2] / "shared" / "data" / "blimp"
LIMIT = 8


def _need_lm_eval():
    return pytest.importorskip("lm_eval", reason="lm_eval not installed (pip install 'pllscore[lm-eval]')")


def test_without_lm_eval_the_command_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "lm_eval", None)  # import lm_eval now raises ImportError
    monkeypatch.delitem(sys.modules, "pllscore.integrations.lm_eval", raising=False)
    res = run("lm-eval", "--tasks", "x")
    assert res.returncode == 1
    assert res.stderr.strip().count("\n") == 0 and "pip install 'pllscore[lm-eval]'" in res.stderr


@pytest.fixture(scope="module")
def tasks(tmp_path_factory):
    """A folder of lm-eval task files reading local BLiMP paradigms (dataset_path: json), as lm-eval's blimp."""
    if not BLIMP.is_dir():
        pytest.skip(f"{BLIMP} not found")
    folder = tmp_path_factory.mktemp("tasks")
    for p in PARADIGMS:
        (folder / f"local_{p}.yaml").write_text(
            f"task: local_{p}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    train: {BLIMP / p}.jsonl\n"
            'output_type: multiple_choice\nvalidation_split: train\ndoc_to_text: ""\ndoc_to_target: 0\n'
            'doc_to_choice: "{{[sentence_good, sentence_bad]}}"\nnum_fewshot: 0\n'
            "metric_list:\n  - metric: acc\n    aggregation: mean\n    higher_is_better: true\n"
        )
    return folder


def _evaluate(model, model_args, tasks):
    lm_eval = _need_lm_eval()
    from lm_eval.tasks import TaskManager

    import pllscore.integrations.lm_eval  # noqa: F401

    out = lm_eval.simple_evaluate(
        model=model,
        model_args=model_args,
        tasks=[f"local_{p}" for p in PARADIGMS],
        task_manager=TaskManager(include_path=str(tasks)),
        limit=LIMIT,
        device="cpu",
        log_samples=True,
    )
    accs = {p: out["results"][f"local_{p}"]["acc,none"] for p in PARADIGMS}
    # per paradigm, per doc: [(ll_good, greedy_good), (ll_bad, greedy_bad)]
    resps = {p: [[tuple(r[0]) for r in s["resps"]] for s in out["samples"][f"local_{p}"]] for p in PARADIGMS}
    return accs, resps


@pytest.mark.shared
def test_causal_via_pllscore_equals_lm_eval_hf(tasks):
    hf_acc, hf = _evaluate("hf", f"pretrained={TINY_GPT2}", tasks)
    ours_acc, ours = _evaluate("pllscore", f"pretrained={TINY_GPT2}", tasks)
    assert ours_acc == hf_acc
    for p in PARADIGMS:
        np.testing.assert_allclose(np.array(ours[p])[..., 0], np.array(hf[p])[..., 0], atol=1e-4)
        assert [[g for _, g in d] for d in ours[p]] == [[bool(g) for _, g in d] for d in hf[p]]


@pytest.mark.shared
def test_masked_via_pllscore_equals_blimp_with_lm_eval_convention(tasks, shared_bert):
    from pllscore.eval.runs import run_blimp

    accs, resps = _evaluate("pllscore", f"pretrained={TINY_BERT},metric=word-l2r", tasks)
    res = run_blimp([shared_bert], data=BLIMP, paradigms=list(PARADIGMS), limit=LIMIT, convention="lm-eval")
    for p in PARADIGMS:
        rows = res.pairs[res.pairs["paradigm"] == p]
        got = np.array(resps[p])[..., 0]
        np.testing.assert_allclose(got, rows[["good_logprob", "bad_logprob"]].to_numpy(), atol=1e-4)
        assert accs[p] == pytest.approx(rows["correct"].mean())
    paper = run_blimp([shared_bert], data=BLIMP, paradigms=list(PARADIGMS), limit=LIMIT)
    # BERT's WordPiece drops a leading space, so for it the two conventions agree (byte-level BPE: they differ)
    np.testing.assert_allclose(paper.pairs["good_logprob"], res.pairs["good_logprob"], atol=1e-4)


@pytest.mark.shared
def test_cli_hands_the_arguments_to_lm_eval(tasks, tmp_path):
    _need_lm_eval()
    out = tmp_path / "out"
    res = run(
        "lm-eval", "--model_args", f"pretrained={TINY_GPT2}", "--tasks", f"local_{PARADIGMS[0]}",
        "--include_path", str(tasks), "--limit", "3", "--device", "cpu", "--output_path", str(out),
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    results = json.loads(next(out.rglob("results_*.json")).read_text())
    assert results["config"]["model"] == "pllscore" and results["config"]["limit"] == 3
    assert 0 <= results["results"][f"local_{PARADIGMS[0]}"]["acc,none"] <= 1


def _requests(pairs):
    from lm_eval.api.instance import Instance

    return [Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)]


def test_generate_until_is_refused_and_unknown_args_named(causal_models):
    _need_lm_eval()
    from pllscore import CausalScorer
    from pllscore.errors import InputError
    from pllscore.integrations.lm_eval import PllscoreLM

    lm = PllscoreLM(pretrained=CausalScorer(*causal_models["gpt2-bpe"]))
    with pytest.raises(ModelError, match="cannot generate"):
        lm.generate_until([])
    with pytest.raises(InputError, match="unknown model_args temperature"):
        PllscoreLM(pretrained=lm.scorer, temperature="0")


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram"])
def test_causal_loglikelihood_and_greedy_equal_hflm(causal_models, family):
    _need_lm_eval()
    from lm_eval.models.huggingface import HFLM

    from pllscore import CausalScorer
    from pllscore.integrations.lm_eval import PllscoreLM

    model, tok = causal_models[family]
    context = "The cat sat on"
    ids = tok(context)["input_ids"]
    with torch.inference_mode():  # the model's own greedy next tokens: a continuation that is greedy
        for _ in range(2):
            ids = ids + [int(model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())]
    greedy = tok.decode(ids, skip_special_tokens=True)[len(context) :]
    assert tok(context + greedy)["input_ids"] == ids  # the text reads back as the greedy tokens
    pairs = [(context, greedy), (context, " the mat."), ("", " The cat sat."), ("A", " b c")]
    ref = HFLM(pretrained=model, tokenizer=tok, device="cpu", batch_size=2).loglikelihood(
        _requests(pairs), disable_tqdm=True
    )
    got = PllscoreLM(pretrained=CausalScorer(model, tok)).loglikelihood(_requests(pairs))
    np.testing.assert_allclose([g[0] for g in got], [r[0] for r in ref], atol=1e-4)
    assert [g[1] for g in got] == [bool(r[1]) for r in ref]
    assert got[0][1] is True and got[1][1] is False  # greedy continuations are told apart from others


def test_masked_greedy_by_hand_and_rolling_is_the_full_text_score(masked_models):
    _need_lm_eval()
    from pllscore import MaskedScorer
    from pllscore.integrations.lm_eval import PllscoreLM

    model, tok = masked_models["bert-wordpiece"]
    scorer = MaskedScorer(model, tok)
    lm = PllscoreLM(pretrained=scorer, metric="original")
    context = "the cat sat on the"
    with torch.inference_mode():  # the top prediction for one masked token after the context, by hand
        ids = tok(context + " " + tok.mask_token)["input_ids"]
        top = int(model(input_ids=torch.tensor([ids])).logits[0, ids.index(tok.mask_token_id)].argmax())
    word = tok.convert_ids_to_tokens(top)
    other = next(w for w in ("mat", "dog", "cat", "the") if tok.convert_tokens_to_ids(w) != top)
    pairs = [(context, " " + word), (context, " " + other)]
    got = lm.loglikelihood(_requests(pairs))
    assert tok(context + " " + word)["input_ids"] == ids[:-2] + [top, ids[-1]]  # the word is one whole token
    assert got[0][1] is True and got[1][1] is False
    assert got[0][0] == pytest.approx(scorer.score(" " + word, context=context, sep="", metric="original")[0].total)
    from lm_eval.api.instance import Instance

    rolled = lm.loglikelihood_rolling([Instance("loglikelihood_rolling", {}, ("the cat sat.",), 0)])
    assert rolled[0] == pytest.approx(scorer.score("the cat sat.", metric="original")[0].total)


def test_whitespace_only_continuation_equals_hflm(causal_models):
    _need_lm_eval()
    from lm_eval.models.huggingface import HFLM

    from pllscore import CausalScorer
    from pllscore.integrations.lm_eval import PllscoreLM

    model, tok = causal_models["gpt2-bpe"]
    pairs = [("x", "\n"), ("The cat sat", " on"), ("The cat sat", "\n\n"), ("", "\n"), ("A b ", "\t")]
    pairs += [("The c", "at sat")]  # a token across the join too
    ref = HFLM(pretrained=model, tokenizer=tok, device="cpu", batch_size=2).loglikelihood(
        _requests(pairs), disable_tqdm=True
    )
    got = PllscoreLM(pretrained=CausalScorer(model, tok)).loglikelihood(_requests(pairs))
    np.testing.assert_allclose([g[0] for g in got], [r[0] for r in ref], atol=1e-4)
    assert [g[1] for g in got] == [bool(r[1]) for r in ref]


@pytest.mark.shared
def test_tiny_gpt2_whitespace_only_continuation_equals_hflm():
    _need_lm_eval()
    from lm_eval.models.huggingface import HFLM

    from pllscore.integrations.lm_eval import PllscoreLM

    pairs = [("x", "\n"), ("x", " y"), ("The cat", "s sat"), ("x ", "\n")]
    ref = HFLM(pretrained=str(TINY_GPT2), device="cpu", batch_size=2).loglikelihood(_requests(pairs), disable_tqdm=True)
    got = PllscoreLM(pretrained=str(TINY_GPT2), device="cpu").loglikelihood(_requests(pairs))
    np.testing.assert_allclose([g[0] for g in got], [r[0] for r in ref], atol=1e-4)


def test_a_continuation_without_tokens_fails_nothing(masked_models, capsys):
    _need_lm_eval()
    from pllscore import MaskedScorer
    from pllscore.integrations.lm_eval import PllscoreLM

    model, tok = masked_models["bert-wordpiece"]  # WordPiece drops whitespace: "\n" has no token
    scorer = MaskedScorer(model, tok)
    pairs = [("the cat", " sat"), ("the cat", "\n"), ("the cat", " on"), ("", " \t"), ("the cat", "")]
    got = PllscoreLM(pretrained=scorer, metric="original").loglikelihood(_requests(pairs))
    want = scorer.score([" sat", " on"], context="the cat", sep="", metric="original", convention="lm-eval").totals
    np.testing.assert_allclose([got[0][0], got[2][0]], want, atol=1e-6)
    assert [got[i] for i in (1, 3, 4)] == [(0.0, True)] * 3  # log P of no token; lm-eval's hf fails on them
    err = capsys.readouterr().err
    assert "3 continuation(s) have no token" in err and "request 1, 3, 4" in err


def test_a_continuation_left_without_tokens_by_the_split_fails_not_its_context_group(causal_models, capsys):
    _need_lm_eval()
    from lm_eval.models.huggingface import HFLM

    from pllscore import CausalScorer
    from pllscore.integrations.lm_eval import PllscoreLM

    model, tok = causal_models["gpt2-bpe"]
    # "The ca" + "t" encodes as many tokens as "The ca" alone: lm-eval's split leaves the continuation none
    assert len(tok("The ca")["input_ids"]) >= len(tok("The cat")["input_ids"])
    pairs = [("The ca", "t sat on"), ("The ca", "t"), ("The ca", "r sat")]
    got = PllscoreLM(pretrained=CausalScorer(model, tok)).loglikelihood(_requests(pairs))
    ref = HFLM(pretrained=model, tokenizer=tok, device="cpu", batch_size=2)
    want = ref.loglikelihood(_requests([pairs[0], pairs[2]]), disable_tqdm=True)  # HFLM fails on the middle one
    np.testing.assert_allclose([got[0][0], got[2][0]], [w[0] for w in want], atol=1e-4)
    assert got[1] == (0.0, True)
    assert "1 continuation(s) have no token" in capsys.readouterr().err
