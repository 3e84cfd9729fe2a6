"""convention="lm-eval": a text read as lm-evaluation-harness reads a continuation, against hand-built ids and lm-eval.

The hand-checked tests build lm-eval's token ids by hand (``TemplateLM.loglikelihood`` and
``_encode_pair`` in lm_eval/api/model.py, HFLM's ``prefix_token_id``) and score them with a plain
forward pass; the lm-eval tests compare with HFLM.loglikelihood itself on the same requests.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from pllscore import CausalScorer, MaskedScorer
from pllscore.errors import InputError
from tests import oracle
from tests.conftest import SENTENCES, TINY_GPT2

CONTEXTS = ["", "Question: who was it?", "Some context ", "A"]


@torch.inference_mode()
def _chain(model, ids: list[int], first: int) -> float:
    """Sum of log p(ids[i] | ids[:i]) for i >= first, float64, one unpadded pass."""
    logits = model(input_ids=torch.tensor([ids])).logits[0].double()
    return sum(torch.log_softmax(logits[i - 1], -1)[ids[i]].item() for i in range(first, len(ids)))


def _lm_eval_ids(tok, context: str, continuation: str) -> tuple[list[int], int]:
    """lm-eval's (context_enc + continuation_enc) and where the continuation starts, written from its source."""
    if context == "":
        prefix = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        cont = tok(continuation, add_special_tokens=False)["input_ids"]
        return [prefix, *cont], 1
    n = len(context) - len(context.rstrip())
    if n:
        context, continuation = context[:-n], context[-n:] + continuation
    whole, own = tok(context + continuation)["input_ids"], tok(context)["input_ids"]
    return [*own, *whole[len(own) :]], len(own)  # context_enc + whole_enc[len(context_enc):]


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram"])
def test_causal_lm_eval_convention_equals_hand_built_ids(causal_models, family):
    model, tok = causal_models[family]
    scorer = CausalScorer(model, tok)
    texts = SENTENCES[: len(CONTEXTS)]
    for context, text in zip(CONTEXTS, texts):
        ids, first = _lm_eval_ids(tok, context, " " + text)
        got = scorer.score(text, context=context, convention="lm-eval")[0].total
        assert got == pytest.approx(_chain(model, ids, first), abs=1e-4)


def test_lm_eval_convention_differs_from_paper_only_by_the_leading_space(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    scorer = CausalScorer(model, tok)
    text = SENTENCES[2]
    paper = scorer.score(text)[0]
    lm_eval = scorer.score(text, convention="lm-eval")[0]
    assert paper.total == pytest.approx(sum(oracle.causal_logprobs(model, tok, text)), abs=1e-4)
    assert lm_eval.total == pytest.approx(sum(oracle.causal_logprobs(model, tok, " " + text)), abs=1e-4)
    assert not paper.pieces[0].startswith("\u0120") and lm_eval.pieces[0].startswith("\u0120")
    # spans index into the text as given, under both conventions
    assert lm_eval.word_spans == paper.word_spans
    assert all(0 <= a <= b <= len(text) for a, b in lm_eval.offsets)
    assert [text[a:b] for a, b in lm_eval.word_spans][:2] == ["The", "cat"]


def test_masked_lm_eval_convention_is_the_text_after_a_space(masked_models):
    model, tok = masked_models["roberta-bpe"]
    scorer = MaskedScorer(model, tok)
    text = SENTENCES[0]
    got = scorer.score(text, metric="original", convention="lm-eval")[0]
    ref = oracle.masked_logprobs(model, tok, " " + text, "original")
    assert got.total == pytest.approx(sum(ref), abs=1e-4)
    assert got.pieces[0].startswith("\u0120") and got.word_spans[0] == (0, 3)
    assert got.total != pytest.approx(scorer.score(text, metric="original")[0].total, abs=1e-4)


def test_unknown_convention_and_bos_false_are_one_line_errors(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    with pytest.raises(InputError, match="unknown convention 'lmeval'.*'paper'.*'lm-eval'"):
        CausalScorer(model, tok).score("a b", convention="lmeval")
    with pytest.raises(InputError, match="drop bos=False"):
        CausalScorer(model, tok, bos=False).score("a b", convention="lm-eval")


def _hflm_loglikelihood(model, tok, pairs):
    pytest.importorskip("lm_eval", reason="lm_eval not installed (pip install 'pllscore[lm-eval]')")
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=model, tokenizer=tok, device="cpu", batch_size=3)
    reqs = [Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)]
    return [ll for ll, _ in lm.loglikelihood(reqs, disable_tqdm=True)]


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram"])
def test_causal_lm_eval_convention_equals_hflm(causal_models, family):
    model, tok = causal_models[family]
    texts = SENTENCES[: len(CONTEXTS)]
    ref = _hflm_loglikelihood(model, tok, [(c, " " + t) for c, t in zip(CONTEXTS, texts)])
    scorer = CausalScorer(model, tok)
    got = [scorer.score(t, context=c, convention="lm-eval")[0].total for c, t in zip(CONTEXTS, texts)]
    np.testing.assert_allclose(got, ref, atol=1e-4)


@pytest.mark.shared
def test_tiny_gpt2_lm_eval_convention_equals_hflm(shared_gpt2):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model, tok = AutoModelForCausalLM.from_pretrained(TINY_GPT2), AutoTokenizer.from_pretrained(TINY_GPT2)
    ref = _hflm_loglikelihood(model, tok, [("", " " + t) for t in SENTENCES])
    got = shared_gpt2.score(SENTENCES, convention="lm-eval").totals
    np.testing.assert_allclose(got, ref, atol=1e-4)
    assert not np.allclose(shared_gpt2.score(SENTENCES).totals, ref, atol=1e-2)  # the paper's convention differs


@pytest.mark.shared
def test_blimp_records_the_convention_and_refuses_another(tmp_path, shared_gpt2):
    from pllscore.eval.runs import run_blimp

    data = tmp_path / "blimp"
    data.mkdir()
    rows = [
        {"sentence_good": g, "sentence_bad": b, "linguistics_term": "anaphor_agreement", "UID": "p1"}
        for g, b in [("Mary saw herself.", "Mary saw himself."), ("The men saw themselves.", "The men saw himself.")]
    ]
    (data / "p1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    res = run_blimp([shared_gpt2], data=data, output=out, convention="lm-eval")
    good = shared_gpt2.score([r["sentence_good"] for r in rows], convention="lm-eval").totals
    np.testing.assert_allclose(res.pairs["good_logprob"], good, atol=1e-4)  # batches differ in shape
    meta = json.loads((out / "meta.json").read_text())
    assert meta["settings"]["text_convention"] == "lm-eval"
    assert meta["runs"][0]["settings"]["text"]["convention"] == "lm-eval"
    with pytest.raises(InputError, match="text_convention=lm-eval; this run has text_convention=paper"):
        run_blimp([shared_gpt2], data=data, output=out)


@pytest.mark.shared
def test_score_file_records_the_convention_and_resume_refuses_another(tmp_path, shared_gpt2):
    import pandas as pd

    from pllscore.jobs.local import score_file

    src, out = tmp_path / "in.txt", tmp_path / "out.csv"
    src.write_text("\n".join(SENTENCES[:3]) + "\n")
    score_file(src, out, model=shared_gpt2, convention="lm-eval", progress=False)
    want = shared_gpt2.score(SENTENCES[:3], convention="lm-eval").totals
    np.testing.assert_allclose(pd.read_csv(out)["causal_logprob"], want, atol=1e-4)
    with pytest.raises(InputError, match="convention=.lm-eval., this run has convention=.paper."):
        score_file(src, out, model=shared_gpt2, resume=True, progress=False)
    with pytest.raises(InputError, match="unknown convention"):
        score_file(src, tmp_path / "o2.csv", model=shared_gpt2, convention="harness")


# a token of the whole string that crosses the join of context and text (sep=""): lm-eval's split is its own
JOINS = [("The c", "at sat."), ("She we", "nt home."), ("The cat", "s sat.")]


def _crosses(tok, context: str, text: str) -> bool:
    """Whether the whole string's first tokens are not the context's own: a token crosses the join."""
    own = tok(context, add_special_tokens=False)["input_ids"]
    return tok(context + text, add_special_tokens=False)["input_ids"][: len(own)] != own


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram"])
def test_causal_lm_eval_split_at_a_crossing_token_equals_hflm(causal_models, family):
    model, tok = causal_models[family]
    assert any(_crosses(tok, c, t) for c, t in JOINS)  # the case is there to test
    ref = _hflm_loglikelihood(model, tok, JOINS)
    scorer = CausalScorer(model, tok)
    got = [scorer.score(t, context=c, sep="", convention="lm-eval")[0].total for c, t in JOINS]
    np.testing.assert_allclose(got, ref, atol=1e-4)
    np.testing.assert_allclose(got, [_chain(model, *_lm_eval_ids(tok, c, t)) for c, t in JOINS], atol=1e-4)


@pytest.mark.shared
def test_tiny_gpt2_crossing_token_lm_eval_is_hflm_and_paper_keeps_the_whole_string(shared_gpt2):
    pytest.importorskip("lm_eval", reason="lm_eval not installed (pip install 'pllscore[lm-eval]')")
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM
    from transformers import AutoModelForCausalLM, AutoTokenizer

    pairs = [("The cat", "s sat"), ("The cat", "s"), ("The c", "at sat")]
    hf = HFLM(pretrained=str(TINY_GPT2), device="cpu", batch_size=2)  # lm-eval loads the folder itself
    ref = [ll for ll, _ in hf.loglikelihood([Instance("loglikelihood", {}, p, i) for i, p in enumerate(pairs)])]
    got = [shared_gpt2.score(t, context=c, sep="", convention="lm-eval")[0].total for c, t in pairs]
    np.testing.assert_allclose(got, ref, atol=1e-4)
    assert ref[0] == pytest.approx(-17.4070, abs=1e-3)  # issue 26's number
    # paper (the default): BOS, then the whole string's tokens; the token across the join and all after it scored
    model, tok = AutoModelForCausalLM.from_pretrained(TINY_GPT2), AutoTokenizer.from_pretrained(TINY_GPT2)
    whole = tok("The cats sat", return_offsets_mapping=True)
    first = next(k for k, (_, b) in enumerate(whole["offset_mapping"]) if b > len("The cat"))
    paper = shared_gpt2.score("s sat", context="The cat", sep="")[0]
    assert paper.total == pytest.approx(_chain(model, [tok.bos_token_id, *whole["input_ids"]], 1 + first), abs=1e-4)
    assert abs(paper.total - ref[0]) > 0.1
