"""The BabyLM reading task (``pllscore.eval.babylm.reading``).

* On the sample's ``reading_data.csv``, the six files equal what the official pipeline wrote (tiny-gpt2 causal,
  tiny-bert-cased mlm and mntp): surprisals to 1e-5, correlations and the report as printed, the fits' numbers
  to the float noise those surprisals carry; fed the official surprisals, the regressions equal its files to 1e-9.
* Every backend equals the naive reference (tests/eval/babylm_reading_naive.py: one forward pass per read),
  the encoder-decoder backends on tiny random T5 (its sentinel as mask and decoder start) and BART (CLS, mask
  and BOS tokens), while each distinct model input runs once: fewer model rows than words.
* pllscore's convention: a causal LM's BOW-corrected word surprisal equals Pimentel & Meister's definition
  written out; a masked LM's equals the word-l2r oracle with each displayed word masked whole.
* Bad input is one InputError or ModelError naming the file, line and column.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pllscore.errors import InputError, ModelError
from pllscore.eval.babylm.reading import prepare_reading
from pllscore.eval.babylm.reading_stats import FILES, fit_all, read_reading_data
from tests import tokenizers_fixtures as tf
from tests.conftest import TINY_BERT, TINY_GPT2
from tests.eval import babylm_reading_naive as naive
from tests.oracle import masked_logprobs, whitespace_groups

SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "data" / "babylm_sample"
CSV = SAMPLE / "fast_eval" / "reading" / "reading_data.csv"
MODELS = {"causal": TINY_GPT2, "mlm": TINY_BERT, "mntp": TINY_BERT}
TOL = 1e-5


def _need_shared() -> None:
    if not CSV.is_file() or not TINY_GPT2.is_dir() or not TINY_BERT.is_dir():
        pytest.skip("the shared models and BabyLM sample must sit beside the repository")


@pytest.fixture(scope="module")
def shared():
    """backend -> (model, tokenizer) from ../shared/models, as the official pipeline loads them."""
    _need_shared()
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    out = {}
    for backend, path in MODELS.items():
        cls = AutoModelForCausalLM if backend == "causal" else AutoModelForMaskedLM
        out[backend] = (cls.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path))
    return out


def _t5_with_sentinel():
    """A 2-layer T5 whose tokenizer has T5's first sentinel, <extra_id_0>, and no mask, CLS or BOS token."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration

    tok = tf.t5_unigram()
    tok.add_special_tokens({"additional_special_tokens": ["<extra_id_0>"]})
    torch.manual_seed(0)
    config = T5Config(
        vocab_size=len(tok), d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=2, num_heads=4,
        relative_attention_num_buckets=8, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
    )  # fmt: skip
    return T5ForConditionalGeneration(config).eval(), tok


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _close(a, b, tol: float) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return bool(np.array_equal(np.isnan(a), np.isnan(b)) and np.nanmax(np.abs(a - b)) <= tol)


def _same_fits(ours: list[dict], official: list[dict], rtol: float, atol: float) -> None:
    assert [list(r) for r in ours] == [list(r) for r in official]  # same keys, same order
    for r, o in zip(ours, official):
        assert r["Predicted variable"] == o["Predicted variable"]
        for k, v in o.items():
            if k != "Predicted variable":
                assert math.isclose(r[k], v, rel_tol=rtol, abs_tol=atol), (o["Predicted variable"], k, r[k], v)


@pytest.mark.parametrize("backend", ["causal", "mlm", "mntp"])
def test_files_equal_the_official_pipelines(shared, backend, tmp_path):
    model, tok = shared[backend]
    prepared = prepare_reading(CSV, tok, backend)
    result = prepared.run(model)
    result.write(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES)  # no temporary file left
    official = SAMPLE / "official" / backend / MODELS[backend].name / "main" / "zero_shot" / backend / "reading"
    ours, theirs = _read_jsonl(tmp_path / "prediction.jsonl"), _read_jsonl(official / "prediction.jsonl")
    assert [(r["Index"], r["Sentence"], r["Word"]) for r in ours] == [
        (r["Index"], r["Sentence"], r["Word"]) for r in theirs
    ]
    for key in ("Logprob", "Prev_Logprob"):
        assert _close([r[key] for r in ours], [r[key] for r in theirs], TOL)
    ours_p = json.loads((tmp_path / "predictions.json").read_text())["reading"]["predictions"]
    theirs_p = json.loads((official / "predictions.json").read_text())["reading"]["predictions"]
    assert [r["id"] for r in ours_p] == [r["id"] for r in theirs_p]
    assert _close([r["pred"] for r in ours_p], [r["pred"] for r in theirs_p], TOL)
    assert _close([r["prev_pred"] for r in ours_p], [r["prev_pred"] for r in theirs_p], TOL)
    for name in ("correlations.txt", "report.txt"):
        assert (tmp_path / name).read_text() == (official / name).read_text()
    for name in ("predictive_power.jsonl", "predictive_power_spillover.jsonl"):
        _same_fits(_read_jsonl(tmp_path / name), _read_jsonl(official / name), rtol=1e-4, atol=1e-5)
    report = (official / "report.txt").read_text().split()
    assert [f"{v:.2f}" for _, v in result.summary()] == [report[3], report[7]]
    # the official pipeline runs a pass per token read, words and previous words alike; here each input runs once
    assert prepared.n_items < prepared.official_passes / 1.6
    if backend == "causal":  # every context read inside the longest input that extends it
        assert prepared.n_items < len(result.frame) * 0.65


@pytest.mark.parametrize("backend", ["causal", "mlm", "mntp"])
def test_regressions_from_the_official_surprisals_equal_its_files(backend):
    if not CSV.is_file():
        pytest.skip("the BabyLM sample must sit beside the repository")
    official = SAMPLE / "official" / backend / MODELS[backend].name / "main" / "zero_shot" / backend / "reading"
    preds = json.loads((official / "predictions.json").read_text())["reading"]["predictions"]
    frame = read_reading_data(CSV)
    frame["pred"] = [p["pred"] for p in preds]
    frame["prev_pred"] = [p["prev_pred"] for p in preds]
    fits = fit_all(frame)
    _same_fits(fits.power, _read_jsonl(official / "predictive_power.jsonl"), rtol=1e-9, atol=1e-9)
    _same_fits(fits.spillover, _read_jsonl(official / "predictive_power_spillover.jsonl"), rtol=1e-9, atol=1e-9)
    corr = "".join(f"{k}\t{v:.4f}\n" for k, v in fits.correlations)
    assert corr == (official / "correlations.txt").read_text()


def _against_naive(backend: str, model, tok, csv: Path = CSV) -> None:
    rows, heads = [], []
    hooks = [
        model.register_forward_pre_hook(lambda m, a, kw: rows.append(len(kw["input_ids"])), with_kwargs=True),
        model.get_output_embeddings().register_forward_hook(lambda m, a, out: heads.append(tuple(out.shape[:2]))),
    ]
    try:
        prepared = prepare_reading(csv, tok, backend)
        result = prepared.run(model, batch_size=7)
    finally:
        for hook in hooks:
            hook.remove()
    assert sum(rows) == prepared.n_items  # each distinct input once
    assert max(rows) <= 7
    # the LM head ran on the read positions alone, one row of them per batch
    assert {b for b, _ in heads} == {1} and sum(n for _, n in heads) == len(prepared.plan.reads)
    pred, prev = naive.official_surprisals(csv, "enc_dec" if backend.startswith("enc_dec") else backend, model, tok)
    assert _close(result.frame["pred"], pred, TOL)
    assert _close(result.frame["prev_pred"], prev, TOL)


@pytest.mark.parametrize("backend", ["causal", "mlm", "mntp"])
def test_shared_models_equal_the_naive_reference(shared, backend):
    _against_naive(backend, *shared[backend])


@pytest.mark.parametrize(("family", "backend"), [("t5", "enc_dec_mask"), ("bart", "enc_dec_prefix")])
def test_encoder_decoders_equal_the_naive_reference(family, backend, tmp_path):
    """Both encoder-decoder backends read alike; the sample's first three sentences (their tiny vocabularies split
    each word into many tokens, each a naive pass)."""
    if not CSV.is_file():
        pytest.skip("the BabyLM sample must sit beside the repository")
    from tests.seq2seq_models import bart

    csv = _write(tmp_path, pd.read_csv(CSV, dtype=str).iloc[:34])
    _against_naive(backend, *(_t5_with_sentinel() if family == "t5" else bart()), csv)


def test_pllscore_convention_causal_is_the_bow_corrected_word_surprisal(shared):
    model, tok = shared["causal"]
    result = prepare_reading(CSV, tok, "causal", convention="pllscore").run(model)
    frame = result.frame
    for i in frame.index[frame["item"] == "None"]:  # each sentence's rows from its last row
        end = i
        while end + 1 < len(frame) and frame.at[end + 1, "item"] != "None":
            end += 1
        words = frame.at[end, "item"].split() + [frame.at[end, "word"]]
        expected = [-lp for lp in naive.bow_word_logprobs(model, tok, words)]
        assert _close(frame.loc[i:end, "pred"], expected, 1e-4)
        assert _close(frame.loc[i + 2 : end, "prev_pred"], expected[1:-1], 1e-4)
    assert frame["prev_pred"].isna().sum() == (frame["prev_item"].isna()).sum()


def test_pllscore_convention_masked_is_word_l2r_with_whole_words(shared):
    model, tok = shared["mlm"]
    prepared = prepare_reading(CSV, tok, "mlm", convention="pllscore")
    frame = prepared.run(model).frame
    text = " ".join(prepared.plan.texts[0])
    enc = tok(text, return_offsets_mapping=True)
    groups = whitespace_groups(text, enc["offset_mapping"][1:-1])
    lps = masked_logprobs(model, tok, text, "word-l2r", groups=groups)
    words = [-sum(lp for lp, g in zip(lps, groups) if g == k) for k in range(len(prepared.plan.texts[0]))]
    assert _close(frame["pred"][: len(words)], words, 1e-4)


@pytest.mark.parametrize("backend", ["mntp", "enc_dec_prefix"])
def test_pllscore_convention_other_kinds_read_each_sentence_once(shared, backend):
    from pllscore.eval.babylm.reading_pllscore import pllscore_scorer

    model, tok = shared["mntp"] if backend == "mntp" else _t5_with_sentinel()
    prepared = prepare_reading(CSV, tok, backend, convention="pllscore")
    done = []
    result = prepared.run(model, progress=done.append)
    assert sum(done) == prepared.n_items == 6  # the sample's six sentences
    scorer = pllscore_scorer(model, tok, backend)
    text = " ".join(prepared.plan.texts[-1])
    options = {"words": "whitespace", **({"mask_by": "words"} if backend == "mntp" else {})}
    words = scorer.score(text, **options)[0].words
    assert _close(result.frame["pred"][-len(words) :], [-w.score for w in words], TOL)
    assert np.isfinite(result.fits.eye_tracking) and np.isfinite(result.fits.self_paced_reading)


def _write(tmp_path: Path, frame: pd.DataFrame) -> Path:
    path = tmp_path / "reading_data.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture()
def gpt2_tok():
    _need_shared()
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(TINY_GPT2)


def test_bad_tables_are_named_in_one_line(tmp_path, gpt2_tok):
    base = pd.read_csv(CSV, dtype=str)
    cases = [
        (base.drop(columns=["N400"]), "missing column(s) N400"),
        (base.assign(length=["x", *base["length"][1:]]), "line 2, column length: 'x' is not a number"),
        (base.assign(word=[*base["word"][:3], None, *base["word"][4:]]), "line 5: word is empty"),
        (base.iloc[:0], "no rows"),
    ]
    for frame, says in cases:
        with pytest.raises(InputError, match=rf"reading_data\.csv.*{says}".replace("(", r"\(").replace(")", r"\)")):
            prepare_reading(_write(tmp_path, frame), gpt2_tok, "causal")
    with pytest.raises(InputError, match="no such file"):
        prepare_reading(tmp_path / "absent.csv", gpt2_tok, "causal")


def test_bad_backends_and_tokenizers(gpt2_tok):
    with pytest.raises(InputError, match="unknown backend 'enc_dec'; choose one of causal, mlm"):
        prepare_reading(CSV, gpt2_tok, "enc_dec")
    with pytest.raises(InputError, match="unknown convention 'paper'"):
        prepare_reading(CSV, gpt2_tok, "causal", convention="paper")
    with pytest.raises(ModelError, match="mlm backend appends mask tokens"):
        prepare_reading(CSV, gpt2_tok, "mlm")
    with pytest.raises(ModelError, match="neither a mask token nor additional special tokens"):
        prepare_reading(CSV, tf.t5_unigram(), "enc_dec_mask")


def test_the_official_reads_by_hand():
    """A word of two tokens, as the official code reads it: WordPiece's ``##terday`` decoded to the text
    ``##terday``, read as its first token ``#`` after ``NoneYes``; GPT-2's ``ctor`` after ``Yesterday thedo``,
    every context read inside the longest input that extends it."""
    _need_shared()
    from transformers import AutoTokenizer

    from pllscore.plan.babylm_reading import plan_reads

    bert = AutoTokenizer.from_pretrained(TINY_BERT)
    for backend, back in (("mlm", 0), ("mntp", 1)):
        plan = plan_reads([("None", "Yesterday")], bert, backend)
        reads = [plan.reads[k] for k in plan.pairs[0]]
        assert [bert.convert_ids_to_tokens(t) for _, _, t in reads] == ["Yes", "#"]
        for (row, pos, _), context in zip(reads, ("None", "NoneYes")):
            ids = plan.inputs[row]
            assert bert.decode(ids) == f"[CLS] {context} [MASK] [MASK] [MASK] [SEP]"
            assert pos == ids.index(bert.mask_token_id) - back
    gpt2 = AutoTokenizer.from_pretrained(TINY_GPT2)
    plan = plan_reads([("Yesterday the", "doctor"), ("Yesterday", "the")], gpt2, "causal")
    reads = [plan.reads[k] for k in plan.pairs[0]]
    assert [gpt2.decode(t) for _, _, t in reads] == ["do", "ctor"]
    for (row, pos, _), context in zip(
        [*reads, plan.reads[plan.pairs[1][0]]], ("Yesterday the", "Yesterday thedo", "Yesterday")
    ):
        assert gpt2.decode(plan.inputs[row][: pos + 1]) == context
    assert plan.n_inputs == 1  # "Yesterday" and "Yesterday the" are read inside "Yesterday thedo"


def test_pllscore_sentences_from_rows():
    """Rows whose words extend the row before make one text; a previous word found at the start of its row's text
    is read there, else from a text of its own; a word holding whitespace is refused (its file line: row + 2)."""
    from pllscore.eval.babylm.reading_pllscore import sentence_plan

    nan = float("nan")
    contexts = [None, "A", "A b", None, "The"]
    words = ["A", "b", "c.", "The", "end"]
    prev_contexts = [nan, nan, "A", nan, "Other"]
    prev_words = [nan, nan, "b", nan, "thing"]
    plan = sentence_plan(contexts, words, prev_contexts, prev_words)
    assert plan.texts == [("A", "b", "c."), ("The", "end"), ("Other", "thing")]
    assert plan.rows == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
    assert plan.prev == [None, None, (0, 1), None, (2, 1)]
    with pytest.raises(InputError, match="line 4: the word 'c d' holds whitespace"):
        sentence_plan(contexts[:3], ["A", "b", "c d"], prev_contexts[:3], prev_words[:3])


@pytest.fixture(scope="module")
def gpt2_tokenizer():
    _need_shared()
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(TINY_GPT2)


WORDS = st.sampled_from(["the", "doctor", "Yesterday", "house.", "a", "zyx", "anywhere", "in", "ball", "Mary"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(WORDS, max_size=6), WORDS), min_size=1, max_size=8))
def test_causal_reads_sit_at_their_contexts_end(gpt2_tokenizer, pairs):
    """Each read of a causal plan is at the last position of its context's tokens within its row (the context
    string chained as the convention says, written again here), no row extends another, and a read's target
    is the token the convention names."""
    from pllscore.plan.babylm_reading import plan_reads

    tok = gpt2_tokenizer
    given_pairs = [(" ".join(ctx) or "None", w) for ctx, w in pairs]
    plan = plan_reads(given_pairs, tok, "causal")
    for (context, word), chain in zip(given_pairs, plan.pairs):
        target = tok(word, add_special_tokens=False)["input_ids"]
        expected, s = [(context, target[0])], context + tok.decode(target[0])
        for t in target[1:]:
            piece = tok.decode(t)
            expected.append((s, tok(piece, add_special_tokens=False)["input_ids"][0]))
            s += piece
        assert len(chain) == len(expected)
        for k, (ctx, t) in zip(chain, expected):
            row, pos, got = plan.reads[k]
            assert list(plan.inputs[row][: pos + 1]) == tok(ctx)["input_ids"] and got == t
    rows = plan.inputs
    assert not any(a != b and b[: len(a)] == a for a in rows for b in rows)
