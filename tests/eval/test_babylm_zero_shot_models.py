"""BabyLM sentence zero-shot tasks on tiny random models against the naive reference: the encoder-decoder
backends (T5 without BOS or mask token, BART with both), a causal LM whose tokenizer adds BOS, and the
pllscore convention against pllscore's own scorers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from pllscore.errors import InputError
from pllscore.eval.babylm.zero_shot import prepare_zero_shot
from pllscore.scoring.seq2seq import Seq2SeqScorer
from tests.eval.babylm_naive import naive_task_scores

TEMPS = [0.6, 1.0, 1.5]

LINES = {
    "blimp/a.jsonl": [
        {
            "sentence_good": "The cat sat on the mat.",
            "sentence_bad": "The cat sat the on mat.",
            "field": "syntax_semantics",
            "UID": "a",
            "linguistics_term": "t",
        },
        {
            "sentence_good": "She went to the store.",
            "sentence_bad": "She go to the store.",
            "field": "morphology",
            "UID": "a",
            "linguistics_term": "t",
        },
    ],
    "blimp/sup.jsonl": [{"sentence_good": "A: Is it ready?\nB: Yes.", "sentence_bad": "A: Is it ready?\nB: The cat."}],
    "ewok/d.jsonl": [
        {
            "Domain": "d",
            "ContextType": "c",
            "ContextDiff": "x",
            "TargetDiff": "y",
            "Context1": "The chef cut the onion.",
            "Context2": "The chef ate the onion.",
            "Target1": "The onion is cut.",
            "Target2": "The onion is gone.",
        },
        {
            "Domain": "d",
            "ContextType": "k",
            "ContextDiff": "x",
            "TargetDiff": "y",
            "Context1": "The dog ran.",
            "Context2": "The dog sat.",
            "Target1": "It is tired.",
            "Target2": "It is happy.",
        },
    ],
    "entity_tracking/regular.jsonl": [
        {
            "input_prefix": "The keys are on the table. The keys are",
            "options": [" on the table.", " gone.", " on the mat."],
            "numops": 0,
        },
        {"input_prefix": "The cat sat on the mat. The cat is", "options": [" on the mat.", " gone."], "numops": 1},
    ],
    "wug/w.jsonl": [
        {"sentences": "The cat sats.\tThe cat sated.", "ratio": 0.2},
        {"sentences": "The dog rans.\tThe dog raned.", "ratio": 0.7},
        {"sentences": "The chef cuts.\tThe chef cuted.", "ratio": 0.5},
    ],
    "comps/comps_base.jsonl": [
        {"prefix_acceptable": "A dog", "prefix_unacceptable": "A table", "property_phrase": "can run."},
        {"prefix_acceptable": "A chef", "prefix_unacceptable": "A mat", "property_phrase": "can cut the onion."},
    ],
}
TASKS = {"blimp": "blimp", "ewok": "ewok", "entity_tracking": "entity_tracking", "wug_past": "wug", "comps": "comps"}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("babylm")
    for name, lines in LINES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def t5_extra():  # type: ignore[no-untyped-def]
    """T5 whose tokenizer has <extra_id_0> (no mask token, no BOS), as T5 checkpoints do."""
    from transformers import T5Config, T5ForConditionalGeneration

    from tests import tokenizers_fixtures as tf

    tok = tf.t5_unigram()
    tok.add_special_tokens({"additional_special_tokens": ["<extra_id_0>"]})
    torch.manual_seed(0)
    config = T5Config(
        vocab_size=len(tok),
        d_model=32,
        d_kv=8,
        d_ff=37,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
    )
    return T5ForConditionalGeneration(config).eval(), tok


def _check(model, tok, backend: str, data: Path) -> None:  # type: ignore[no-untyped-def]
    for task, folder in TASKS.items():
        prepared = prepare_zero_shot(task, data / folder, tok, backend)
        scores = prepared.scores(model, temperatures=TEMPS, batch_size=3, max_tokens=64)
        naive = naive_task_scores(model, tok, backend, task, data / folder, TEMPS)
        for j in range(len(TEMPS)):
            assert [len(x) for x in scores[j]] == [len(x) for x in naive[j]], (task, backend)
            for ours, ref in zip(scores[j], naive[j]):
                np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5, err_msg=f"{task} {backend}")


@pytest.mark.parametrize("backend", ["enc_dec_mask", "enc_dec_prefix"])
def test_t5_against_naive(backend: str, t5_extra, data: Path) -> None:  # type: ignore[no-untyped-def]
    model, tok = t5_extra
    _check(model, tok, backend, data)


@pytest.mark.parametrize("backend", ["enc_dec_mask", "enc_dec_prefix"])
def test_bart_against_naive(backend: str, seq2seq_models, data: Path) -> None:  # type: ignore[no-untyped-def]
    model, tok = seq2seq_models["bart-bpe"]
    _check(model, tok, backend, data)


def test_causal_with_bos_against_naive(causal_models, data: Path) -> None:  # type: ignore[no-untyped-def]
    """A tokenizer that adds BOS: its BOS is read before the first token, which is then scored."""
    model, tok = causal_models["llama-unigram"]
    _check(model, tok, "causal", data)


def test_enc_dec_prefix_wug_reads_one_sentence(t5_extra, data: Path, tmp_path: Path) -> None:
    """The official reader gives a WUG item one prefix, so enc_dec_prefix scores its first sentence only: every
    share is 1 and rho is nan (where the official code then fails, the first temperature is kept)."""
    model, tok = t5_extra
    result = prepare_zero_shot("wug_past", data / "wug", tok, "enc_dec_prefix").run(model, temperatures=[1.0, 2.0])
    assert result.temperature == 1.0
    assert all(p == 1.0 for p in result.best.probs or ())
    result.write(tmp_path)
    assert (tmp_path / "best_temperature_report.txt").read_text().splitlines()[3] == "avg: nan"


def test_enc_dec_prefix_ewok_pairs_context2_with_target2(t5_extra, data: Path) -> None:
    model, tok = t5_extra
    plan = prepare_zero_shot("ewok", data / "ewok", tok, "enc_dec_prefix").plan
    assert plan is not None
    first, second = (plan.reads[r[0]] for r in plan.sentences[0])
    c1 = tok("The chef cut the onion.", add_special_tokens=False)["input_ids"]
    c2 = tok("The chef ate the onion.", add_special_tokens=False)["input_ids"]
    extra = tok.convert_tokens_to_ids("<extra_id_0>")
    assert first.ids == (*c1, extra, tok.eos_token_id) and second.ids == (*c2, extra, tok.eos_token_id)
    assert first.decoder[:2] == (extra, extra)  # no BOS: the extra token stands for it, then the mask


@torch.no_grad()
def test_pllscore_convention_causal(causal_models, data: Path) -> None:
    """pllscore's convention: BOS, then the prefix and separator as context, the completion scored; naive
    log P(completion tokens | BOS + prefix) from one full pass."""
    model, tok = causal_models["gpt2-bpe"]
    prepared = prepare_zero_shot("comps", data / "comps", tok, "causal", convention="pllscore")
    scores = prepared.scores(model)[0]
    for item, row in zip(prepared.items, scores):
        for prefix, ours in zip(item.prefixes, row):
            ctx = tok(prefix, add_special_tokens=False)["input_ids"]
            whole = tok(prefix + " " + item.completions[0], add_special_tokens=False)["input_ids"]
            ids = [tok.bos_token_id, *whole]
            lp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
            ref = sum(float(lp[i - 1, ids[i]]) for i in range(1 + len(ctx), len(ids)))
            assert ours == pytest.approx(ref, abs=1e-4)
    assert prepared.run(model, temperatures=[0.5, 2.0]).temperature == 1.0  # no temperature in pllscore's metrics


def test_pllscore_convention_seq2seq_and_texts(t5_extra, data: Path) -> None:
    """Entity tracking under pllscore: each option given the story as the source (one Seq2SeqScorer call)."""
    model, tok = t5_extra
    prepared = prepare_zero_shot(
        "entity_tracking", data / "entity_tracking", tok, "enc_dec_prefix", convention="pllscore"
    )
    scores = prepared.scores(model)[0]
    scorer = Seq2SeqScorer(model, tok)
    item = prepared.items[0]
    ref = scorer.score([c.strip() for c in item.completions], context=item.prefixes[0], progress=False)
    np.testing.assert_allclose(scores[0], [r.total for r in ref], rtol=1e-6)


def test_a_sentence_longer_than_the_model_is_named(causal_models, tmp_path: Path) -> None:
    model, tok = causal_models["gpt2-bpe"]  # 64 positions
    long = " ".join(["the cat sat on the mat"] * 30) + "."
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "x.jsonl").write_text(
        json.dumps({"sentence_good": "The cat sat.", "sentence_bad": "Cat the sat."})
        + "\n"
        + json.dumps({"sentence_good": long, "sentence_bad": "The mat."})
        + "\n"
    )
    prepared = prepare_zero_shot("blimp", folder, tok, "causal")
    with pytest.raises(
        InputError, match=r"x\.jsonl:2: a sentence of \d+ tokens is longer than the model's 64 positions"
    ):
        prepared.run(model)


def test_pllscore_splits_a_sentence_at_its_completion() -> None:
    from pllscore.eval.babylm.zero_shot_pll import split_sentence

    assert split_sentence("A dog can run.", "can run.") == ("A dog", " ", "can run.")  # COMPS
    assert split_sentence("Box 1 contains the pen.", " the pen.") == ("Box 1 contains", " ", "the pen.")  # options
    assert split_sentence("The cat sat.", "The cat sat.") == ("", "", "The cat sat.")  # BLiMP: no context
    assert split_sentence("The cats", "s") == ("The cat", "", "s")  # no space at the join
    assert split_sentence("ab  cd", " cd") == ("ab", "  ", "cd")


def test_progress_counts_every_item_once_and_summary_rows(causal_models, data: Path) -> None:
    model, tok = causal_models["gpt2-bpe"]
    prepared = prepare_zero_shot("blimp", data / "blimp", tok, "causal")
    told: list[int] = []
    result = prepared.run(model, temperatures=[1.0, 2.0], batch_size=1, progress=told.append)
    assert sum(told) == prepared.n_items == 3 and all(n > 0 for n in told)
    rows = dict(result.summary())
    assert list(rows)[0] == "blimp/overall" and "blimp/field/syntax/semantics" in rows  # files in listing order
    assert rows["blimp/overall"] == pytest.approx((rows["blimp/uid/a"] + rows["blimp/uid/sup"]) / 2)
    assert set(result.averages) == {1.0, 2.0}
