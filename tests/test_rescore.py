"""N-best rescoring: the arithmetic, the choice, WER/BLEU, tuning (no model), then end to end on ../shared/models."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from pllscore.errors import InputError, PllscoreError
from pllscore.rescore import (
    check_nbest,
    choose,
    combine,
    evaluate,
    oracle_wer,
    parse_grid,
    read_nbest,
    rescore,
    rescore_frame,
    tune,
)
from tests.conftest import TINY_BERT, TINY_GPT2
from tests.test_cli import run as cli_run

BERT, GPT2 = str(TINY_BERT), str(TINY_GPT2)

# Two dev utterances (6 + 3 reference words) and one test utterance (2 words), LM scores made up.
# dev u1: h0 deletes "the" (1 error), h1 is right, h2 swaps "on the" (2 substitutions)
# dev u2: h0 inserts "loudly" (1 error), h1 is right; test u3: h0 has one substitution, h1 is right
HAND = pd.DataFrame(
    {
        "utt_id": ["u1", "u1", "u1", "u2", "u2", "u3", "u3"],
        "split": ["dev"] * 5 + ["test"] * 2,
        "hyp": [
            "the cat sat on mat",
            "the cat sat on the mat",
            "the cat sat the on mat",
            "a dog barked loudly",
            "a dog barked",
            "birds sings",
            "birds sing",
        ],
        "score": [-1.0, -1.5, -3.0, 0.0, -0.5, 0.0, -0.2],
        "lm_logprob": [-20.0, -18.0, -30.0, -15.0, -12.0, -10.0, -8.0],
        "n_tokens": [5, 6, 6, 4, 3, 2, 2],
        "ref": ["the cat sat on the mat"] * 3 + ["a dog barked"] * 2 + ["birds sing"] * 2,
    }
)
DEV = HAND[HAND["split"] == "dev"].reset_index(drop=True)


# --- the arithmetic and the choice --------------------------------------------------------------


def test_combined_score_is_first_pass_plus_weighted_lm_and_length():
    frame = pd.DataFrame({"utt_id": ["a", "a"], "score": [1.5, -2.0], "lm_logprob": [-4.0, -1.0], "n_tokens": [3, 1]})
    out = combine(frame, 0.5, 0.25)
    assert out["combined"].tolist() == [1.5 - 2.0 + 0.75, -2.0 - 0.5 + 0.25]
    assert "combined" not in frame.columns  # a copy: the input is left alone
    assert combine(frame, 0.0, 0.0)["combined"].tolist() == [1.5, -2.0]


def test_choice_is_the_highest_per_utterance_and_ties_go_to_input_order():
    frame = pd.DataFrame(
        {
            "utt_id": ["a", "b", "a", "a", "b", "c", "c", "d"],
            "combined": [1.0, 5.0, 3.0, 3.0, 5.0, np.nan, -1.0, np.nan],
        }
    )
    chosen = choose(frame)["chosen"].tolist()
    # a: rows 2 and 3 tie at 3.0 -> row 2; b: rows 1 and 4 tie -> row 1; c: NaN is lowest -> row 6;
    # d: only NaN -> its first row
    assert chosen == [False, True, True, False, False, False, True, True]
    assert choose(frame, by="combined", out="best")["best"].sum() == 4


# --- WER and BLEU --------------------------------------------------------------------------------


def test_wer_before_and_after_on_a_hand_made_case():
    dev = check_nbest(DEV, ref_column="ref")
    first = choose(dev, by="score")
    assert first["chosen"].tolist() == [True, False, False, True, False]
    assert evaluate(first) == pytest.approx(2 / 9)  # one deletion + one insertion over 6 + 3 words
    after = choose(combine(dev, 1.0, 0.0))  # u1: -21, -19.5, -33; u2: -15, -12.5: both right ones
    assert after["chosen"].tolist() == [False, True, False, False, True]
    assert evaluate(after) == 0.0
    weak = choose(combine(dev, 0.1, 0.0))  # u1: -3.0 vs -3.3, u2: -1.5 vs -1.7: the first pass again
    assert evaluate(weak) == pytest.approx(2 / 9)
    assert oracle_wer(dev) == 0.0
    assert oracle_wer(dev.drop(index=[1])) == pytest.approx(1 / 9)  # without u1's right hypothesis

    _, tuning, scores = rescore_frame(dev, lam=1.0, beta=0.0)
    assert tuning is None
    assert scores == {"all": {"n_utterances": 2, "before": pytest.approx(2 / 9), "after": 0.0, "oracle": 0.0}}


def test_bleu_path():
    import sacrebleu

    dev = check_nbest(DEV, ref_column="ref")
    first = choose(dev, by="score")
    expected = sacrebleu.corpus_bleu(
        ["the cat sat on mat", "a dog barked loudly"], [["the cat sat on the mat", "a dog barked"]]
    ).score
    assert evaluate(first, metric="bleu") == pytest.approx(expected)
    assert 0 < expected < 100
    assert evaluate(choose(combine(dev, 1.0, 0.0)), metric="bleu") == pytest.approx(100.0)
    _, _, scores = rescore_frame(dev, eval_metric="bleu")
    assert scores["all"]["before"] == pytest.approx(expected) and "oracle" not in scores["all"]
    with pytest.raises(InputError, match="choose wer or bleu"):
        evaluate(first, metric="cer")


# --- tuning --------------------------------------------------------------------------------------


def test_tune_picks_the_hand_checked_best_of_a_small_grid():
    # WER on dev by hand (u1 choice, u2 choice):
    #   (0, 0): h0, h0 -> 2/9    (0, 1): h1 (4.5 > 4 > 3), h0 (4 > 2.5) -> 1/9
    #   (0.1, 0): h0, h0 -> 2/9  (0.1, 1): h1 (2.7), h0 (2.5 > 1.3) -> 1/9
    #   (1, 0): h1, h1 -> 0      (1, 1): h1 (-13.5), h1 (-9.5 > -11) -> 0
    tuning = tune(DEV, [0, 0.1, 1], [0, 1])
    expected = {(0.0, 0.0): 2 / 9, (0.0, 1.0): 1 / 9, (0.1, 0.0): 2 / 9, (0.1, 1.0): 1 / 9, (1.0, 0.0): 0.0}
    got = {(r.lam, r.beta): r.value for r in tuning.grid.itertuples()}
    assert got == pytest.approx({**expected, (1.0, 1.0): 0.0})
    assert (tuning.lam, tuning.beta, tuning.value) == (1.0, 0.0, 0.0)  # a tie with (1, 1): the smaller |beta|
    # without lambda = 1 the best is beta = 1, at the smallest lambda
    assert (tune(DEV, [0, 0.1], [0, 1]).lam, tune(DEV, [0, 0.1], [0, 1]).beta) == (0.0, 1.0)
    bleu = tune(DEV, [0, 0.1, 1], [0, 1], metric="bleu")
    assert (bleu.lam, bleu.beta, bleu.value) == (1.0, 0.0, pytest.approx(100.0))


def test_tuning_on_dev_is_applied_to_test():
    frame = check_nbest(HAND, ref_column="ref", split_column="split")
    # lam and beta given are ignored when tuning; the tuned (1, 0) applies to every row
    out, tuning, scores = rescore_frame(
        frame, lam=0.0, beta=5.0, tune_on_dev=True, lambda_grid=[0, 0.1, 1], beta_grid=[0, 1], split_column="split"
    )
    assert (tuning.lam, tuning.beta) == (1.0, 0.0)
    assert out["combined"].tolist() == (out["score"] + out["lm_logprob"]).tolist()
    assert out["chosen"].tolist() == [False, True, False, False, True, False, True]
    assert scores["dev"] == {"n_utterances": 2, "before": pytest.approx(2 / 9), "after": 0.0, "oracle": 0.0}
    assert scores["test"] == {"n_utterances": 1, "before": 0.5, "after": 0.0, "oracle": 0.0}


def test_grids():
    assert parse_grid("0:1:0.25") == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert len(parse_grid("0:1:0.05")) == 21 and parse_grid("0:1:0.05")[7] == 0.35
    assert parse_grid("-2:2:0.25")[0] == -2.0 and len(parse_grid("-2:2:0.25")) == 17
    assert parse_grid("0, 0.5,1") == [0.0, 0.5, 1.0]
    assert parse_grid([1, 1, 2]) == [1.0, 2.0]
    for bad in ("0:1", "1:0:0.1", "0:1:0", "a,b", ""):
        with pytest.raises(InputError, match="grid"):
            parse_grid(bad, "lambda")


# --- input errors (no model) ---------------------------------------------------------------------


def _table(**changes):
    frame = HAND.drop(columns=["lm_logprob", "n_tokens"]).copy()
    for col, value in changes.items():
        frame[col] = value
    return frame


@pytest.mark.parametrize(
    "frame, options, message",
    [
        (_table().drop(columns=["hyp"]), {}, r"has no column 'hyp' \(its columns are: utt_id, split, score, ref\); "
         "name the column with --text-column"),
        (_table(), {"score_column": "asr"}, "has no column 'asr'.*--score-column"),
        (_table(), {"ref_column": "reference"}, "has no column 'reference'.*--ref-column"),
        (_table(lm_logprob=1.0), {}, "already has a column 'lm_logprob', which rescoring writes; rename that column"),
        (_table().iloc[:0], {}, "has no rows"),
        (_table(hyp=["x", "y", "z", "", " ", "u", "v"]), {},
         r"utterance 'u2' in .* has no hypotheses \(its 'hyp' cells are empty\); give it at least one"),
        (_table(hyp=["x", "", "z", "a", "b", "u", "v"]), {},
         r"row 1 of .* \(utterance 'u1'\): the hypothesis is empty and an LM cannot score empty text; remove the row"),
        (_table(score=["1", "2", "abc", "0", "0", "0", "0"]), {},
         r"row 2 of .* \(utterance 'u1'\): the first-pass score 'abc' in column 'score' is not a finite number"),
        (_table(score=[1.0, 2.0, np.nan, 0, 0, 0, 0]), {}, "row 2 .* is not a finite number.*--score-column"),
        (_table(score=[1.0, 2.0, np.inf, 0, 0, 0, 0]), {}, "row 2 .* is not a finite number"),
        (_table(utt_id=["u1", None, "u1", "u2", "u2", "u3", "u3"]), {}, "row 1 of .* has no utterance id"),
        (_table(ref=["a", "a", "b", "c", "c", "d", "d"]), {},
         "utterance 'u1' in .* has 2 different references in column 'ref'"),
        (_table(ref=["a", "a", "a", "", "", "d", "d"]), {}, r"row 3 .*\(utterance 'u2'\): the reference .* is empty"),
        (_table(split=["dev", "dev", "dev", "train", "train", "test", "test"]), {"split_column": "split"},
         "split 'train' in column 'split' is neither dev nor test"),
        (_table(split=["dev", "test", "dev", "dev", "dev", "test", "test"]), {"split_column": "split"},
         "utterance 'u1' in .* has 2 different splits"),
    ],
)  # fmt: skip
def test_input_errors_are_one_line(frame, options, message):
    with pytest.raises(InputError, match=message) as e:
        read_nbest(frame, **options)
    assert "\n" not in str(e.value)


def test_scores_read_from_csv_text_are_numbers(tmp_path):
    path = tmp_path / "nbest.csv"
    _table().to_csv(path, index=False)
    frame, ref = read_nbest(path)
    assert ref == "ref" and frame["score"].dtype == np.float64 and frame["score"].tolist() == HAND["score"].tolist()
    frame, ref = read_nbest(_table().drop(columns=["ref"]))
    assert ref is None


def test_missing_jiwer_or_sacrebleu_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "jiwer", None)
    monkeypatch.setitem(sys.modules, "sacrebleu", None)
    for metric in ("wer", "bleu"):
        with pytest.raises(PllscoreError, match=r"needs the (jiwer|sacrebleu) package.*'pllscore\[rescore\]'"):
            evaluate(choose(combine(DEV, 1, 0)), metric=metric)
        # the whole run fails before it loads a model
        with pytest.raises(PllscoreError, match=r"pllscore\[rescore\]"):
            rescore(_table(), model="/nonexistent/model", eval_metric=metric)


def test_tune_needs_references_and_dev_rows():
    with pytest.raises(InputError, match="--tune needs references"):
        rescore(_table().drop(columns=["ref"]), model="/nonexistent", tune_on_dev=True)
    with pytest.raises(InputError, match="has no column 'split'.*--split-column"):
        rescore(_table().drop(columns=["split"]), model="/nonexistent", tune_on_dev=True)
    with pytest.raises(InputError, match="no row has split 'dev'"):
        rescore(_table(split="test"), model="/nonexistent", tune_on_dev=True)
    with pytest.raises(InputError, match="cannot read the beta grid"):
        rescore(_table(), model="/nonexistent", tune_on_dev=True, beta_grid="1:0:1")


def test_import_needs_neither_jiwer_nor_a_model():
    code = "import sys, pllscore.rescore, pllscore.cli; print(any(m in sys.modules for m in ('jiwer', 'torch')))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


# --- end to end on the shared models -------------------------------------------------------------

NBEST = pd.DataFrame(
    {
        "utt_id": ["a", "a", "a", "b", "b", "c", "c", "c"],
        "split": ["dev"] * 5 + ["test"] * 3,
        "hyp": [
            "The traveler lost the souvenir.",
            "The traveler lost souvenir the.",
            "The traveler lost the the souvenir.",
            "The cat sat on the mat.",
            "The cat sat on the mat.",  # the same text twice: scored once
            "She went to the store.",
            "She went the to store.",
            "She went to store.",
        ],
        "score": [-1.0, -0.5, -0.8, 0.0, 0.0, -2.0, -1.0, -1.5],
        "ref": [
            *["The traveler lost the souvenir."] * 3,
            *["The cat sat on the mat."] * 2,
            *["She went to the store."] * 3,
        ],
    }
)


run = cli_run  # the console entry point, in this process (tests/test_cli.py)


@pytest.fixture
def nbest(tmp_path):
    path = tmp_path / "nbest.csv"
    NBEST.to_csv(path, index=False)
    return path


def _check_scored(out: pd.DataFrame, scorer, metric=None, lam=1.0, beta=0.0):
    res = scorer.score(out["hyp"].tolist(), **({} if metric is None else {"metric": metric}))
    assert np.allclose(out["lm_logprob"], res.totals, atol=1e-5, rtol=0)
    assert out["n_tokens"].tolist() == [r.n_scored for r in res]
    assert np.allclose(out["combined"], out["score"] + lam * out["lm_logprob"] + beta * out["n_tokens"], atol=1e-9)
    assert out.groupby("utt_id")["chosen"].sum().tolist() == [1, 1, 1]
    best = out.groupby("utt_id")["combined"].transform("max")
    assert (out.loc[out["chosen"], "combined"] == best[out["chosen"]]).all()


@pytest.mark.shared
def test_causal_end_to_end_with_tuning(shared_gpt2, nbest, tmp_path):
    out = tmp_path / "out.csv"
    done = run("rescore", str(nbest), "--model", GPT2, "--tune", "--lambda-grid", "0:1:0.5", "--beta-grid", "-1,0,1",
               "-o", str(out), "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(out)
    assert list(frame.columns) == [*NBEST.columns, "lm_logprob", "n_tokens", "combined", "chosen"]
    assert (tmp_path / "out.csv.lm.parquet").exists() and (tmp_path / "out.csv.meta.json").exists()
    assert len(pd.read_parquet(tmp_path / "out.csv.lm.parquet")) == 7  # distinct texts
    result = rescore(nbest, model=shared_gpt2, tune_on_dev=True, lambda_grid="0:1:0.5", beta_grid="-1,0,1")
    s = result.summary
    assert s.tuned and s.metric == "causal" and s.n_texts == 7 and s.eval_metric == "wer"
    assert set(s.scores) == {"dev", "test"} and len(s.grid) == 9
    _check_scored(frame, shared_gpt2, lam=s.lam, beta=s.beta)
    pd.testing.assert_frame_equal(result.frame, frame, check_dtype=False)


@pytest.mark.shared
def test_masked_end_to_end_with_a_metric_and_bleu(shared_bert, nbest, tmp_path):
    out = tmp_path / "out.jsonl"
    done = run("rescore", str(nbest), "--model", BERT, "--metric", "original", "--lambda", "0.5", "--beta", "0.25",
               "--metric-eval", "bleu", "-o", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "(original): lambda=0.5 beta=0.25 (given)" in done.stderr
    assert "all: BLEU" in done.stderr and "dev: BLEU" not in done.stderr  # no --split-column: one line, "all"
    frame = pd.read_json(out, lines=True)
    _check_scored(frame, shared_bert, metric="original", lam=0.5, beta=0.25)

    stdout = run("rescore", str(nbest), "--model", BERT, "--split-column", "split", "-q")  # TSV on stdout
    frame = pd.read_csv(io.StringIO(stdout.stdout), sep="\t")
    _check_scored(frame, shared_bert)  # word-l2r, lambda 1, beta 0 by default


@pytest.mark.shared
def test_interrupted_then_resumed_equals_uninterrupted(shared_bert, nbest, tmp_path, monkeypatch):
    from pllscore.jobs.local import Interrupted

    opts = dict(model=shared_bert, chunk_size=3, progress=False, tune_on_dev=True, lambda_grid="0:1:0.25")
    rescore(nbest, tmp_path / "whole.csv", **opts)

    real, calls = shared_bert.score, {"n": 0}

    def first_chunk_only(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    part = tmp_path / "part.csv"
    with monkeypatch.context() as mp:
        mp.setattr(shared_bert, "score", first_chunk_only)
        with pytest.raises(Interrupted, match="interrupted after 3 of 7 texts"):
            rescore(nbest, part, **opts)
    assert not part.exists() and (tmp_path / "part.csv.lm.parquet.parts").is_dir()
    with pytest.raises(InputError, match="already exists.*--resume"):
        rescore(nbest, part, **opts)
    asked = []
    with monkeypatch.context() as mp:
        mp.setattr(
            shared_bert, "score", lambda texts, **kw: asked.extend(getattr(texts, "texts", texts)) or real(texts, **kw)
        )
        rescore(nbest, part, resume=True, **opts)
    assert len(asked) == 4  # only the texts after the first chunk
    assert part.read_bytes() == (tmp_path / "whole.csv").read_bytes()
    with pytest.raises(InputError, match="already exists; pass --force"):
        rescore(nbest, part, **opts)
    rescore(nbest, part, force=True, **opts)
    assert part.read_bytes() == (tmp_path / "whole.csv").read_bytes()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--text-column", "sentence"], "has no column 'sentence' (its columns are: utt_id, split, hyp, score, ref)"),
        (["--tune", "--split-column", "utt_id"], "split 'a' in column 'utt_id' is neither dev nor test"),
        (["--metric-eval", "ter"], "unknown evaluation metric 'ter'; choose wer or bleu"),
        (["-o", "out.xlsx"], "cannot tell the output format"),
    ],
)
def test_cli_errors_are_one_line(nbest, args, message):
    done = run("rescore", str(nbest), "--model", "/nonexistent/model", *args)
    assert done.returncode == 1
    assert done.stderr.startswith("error: ") and message in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.shared
def test_causal_model_with_a_metric_is_refused(nbest):
    done = run("rescore", str(nbest), "--model", GPT2, "--metric", "original")
    assert done.returncode == 1 and "causal LM" in done.stderr and done.stderr.count("\n") == 1


@pytest.mark.shared
@pytest.mark.parametrize("to_file", [False, True])
def test_a_hypothesis_with_nothing_scored_is_never_preferred(tmp_path, to_file):
    import pllscore

    # without BOS a causal LM cannot score a text's first token: a one-token text has no score (NaN)
    clm = pllscore.load(GPT2, device="cpu", bos=False)
    nbest = pd.DataFrame({"utt_id": ["a", "a", "b"], "hyp": ["The", "The cat sat.", "A"], "score": [5.0, 0.0, 0.0]})
    output = tmp_path / "out.tsv" if to_file else None
    frame, summary = rescore(nbest, output, model=clm, lam=1.0, beta=0.0, progress=False)
    assert (
        np.isnan(frame["lm_logprob"][0]) and frame["n_tokens"].tolist()[0] == 0 and np.isfinite(frame["lm_logprob"][1])
    )
    assert frame["n_tokens"][1] == len(clm.tokenizer("The cat sat.")["input_ids"]) - 1
    assert frame["chosen"].tolist() == [False, True, True]  # a NaN loses; alone, it is still chosen
    if to_file:
        pd.testing.assert_frame_equal(pd.read_csv(output, sep="\t"), frame, check_dtype=False)
