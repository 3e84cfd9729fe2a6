"""``pllscore reading-times`` with models: Natural Stories (the first words of each story) through the command
line with the shared tiny causal and masked models.

* fits.csv is recomputed from words.csv alone by an independent implementation (numpy least squares, the
  lags, the exclusion rules and the leave-one-text-out folds written again from the definitions);
* each word's surprisal is what ``pllscore score --words whitespace --mask-by words --long window --level word
  --base 2 --surprisal`` gives for its text (within 1e-3 bits), for a causal, a masked and an encoder-decoder LM;
* a masked LM masks each displayed word whole: ``don't`` equals a chain written with transformers alone;
* a shuffled word table with two measures and a word ``None`` gives the same rows as the sorted one;
* bad input is one line on stderr, a non-zero exit, and the output folder keeps what it held.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import pllscore
from pllscore.eval.reading_times.run import surprisal_column
from tests.conftest import TINY_BERT, TINY_GPT2
from tests.test_cli import run

pytestmark = pytest.mark.shared

NATURAL_STORIES = "../shared/data/naturalstories/processed_wordinfo.tsv"
WORDS_PER_STORY = 25
TOL_BITS = 1e-3
COLUMNS = ["--text-column", "item", "--position-column", "zone", "--word-column", "word"]


@pytest.fixture(scope="module")
def ns_run(tmp_path_factory):
    """The first words of every Natural Stories story, and reading-times' folder with tiny-gpt2 and tiny-bert."""
    if not TINY_GPT2.is_dir() or not TINY_BERT.is_dir():
        pytest.skip("the shared models must sit beside the repository")
    tmp = tmp_path_factory.mktemp("rt")
    ns = pd.read_csv(NATURAL_STORIES, sep="\t", keep_default_na=False)
    small = ns[ns["zone"] <= WORDS_PER_STORY].sort_values(["item", "zone"])
    small.to_csv(tmp / "ns.csv", index=False)
    out = tmp / "out"
    done = run("reading-times", str(tmp / "ns.csv"), *COLUMNS, "--measure", "meanItemRT", "--measure", "gmeanItemRT",
               "-m", str(TINY_GPT2), "-m", str(TINY_BERT), "-o", str(out), "--plot")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return tmp, out, done


def _words(out):
    return pd.read_csv(out / "words.csv", keep_default_na=False, dtype={"text_key": str, "word": str})


def test_tables_and_lines(ns_run):
    tmp, out, done = ns_run
    words, fits = _words(out), pd.read_csv(out / "fits.csv")
    assert list(words.columns) == [
        "text_key", "position", "word", "length", "zipf", "meanItemRT", "gmeanItemRT",
        "tiny_gpt2_surprisal_bits", "tiny_bert_cased_surprisal_bits", "meanItemRT_included", "gmeanItemRT_included",
    ]  # fmt: skip
    assert len(words) == 10 * WORDS_PER_STORY
    assert list(dict.fromkeys(words["text_key"])) == [str(i) for i in range(1, 11)]  # the texts in input order
    assert list(fits.columns) == ["model", "measure", "n", "delta_ll", "delta_ll_se", "coef", "coef_se"]
    assert list(zip(fits["model"], fits["measure"])) == [
        (m, k) for m in ("tiny_gpt2", "tiny_bert_cased") for k in ("meanItemRT", "gmeanItemRT")
    ]
    assert len(done.stdout.strip().splitlines()) == 4
    assert (out / "meta.json").is_file() and (out / "delta_ll.png").is_file() and (out / "rt-surprisal.png").is_file()
    # logical cells as R's read.csv, pandas and spreadsheets read them (R reads it in r/tests/testthat/test-eval.R)
    cells = {line.rsplit(",", 2)[-2] for line in (out / "words.csv").read_text().splitlines()[1:]}
    assert cells == {"TRUE", "FALSE"} and words["meanItemRT_included"].dtype == bool
    meta = json.loads((out / "meta.json").read_text())
    assert meta["settings"]["mask_by"] == "words"
    assert [m["mask_by"] for m in meta["models"]] == [None, "words"]  # a causal LM masks nothing


def test_report_shows_the_fits_and_figures(ns_run):
    tmp, out, _ = ns_run
    done = run("report", str(out), "-o", str(tmp / "report.html"))
    assert done.returncode == 0, done.stderr
    page = (tmp / "report.html").read_text()
    assert "Reading times" in page and page.count("<img") == 2 and "tiny_bert_cased" in page
    assert "| tiny_gpt2       | meanItemRT" in (tmp / "report.md").read_text()


# --- the independent recomputation -------------------------------------------------------------------------------

_CLOSING = "\"'”’»)]}"


def _fitted(words: pd.DataFrame, measure: str, lo: float = 100, hi: float = 3000) -> np.ndarray:
    """The exclusion rules, written again: range, not the first two words, not at a sentence's edge."""
    ok = []
    for _, text in words.groupby("text_key", sort=False):
        ws = list(text["word"])
        final = [w.rstrip(_CLOSING).endswith((".", "!", "?")) for w in ws]
        for i, y in enumerate(text[measure]):
            start = i == 0 or final[i - 1]
            end = final[i] or i == len(ws) - 1
            ok.append(i >= 2 and not start and not end and lo <= float(y) <= hi)
    return np.array(ok)


def _lagged(words: pd.DataFrame, column: str, k: int) -> np.ndarray:
    out = []
    for _, text in words.groupby("text_key", sort=False):
        v = text[column].to_numpy(float)
        out.extend([math.nan] * min(k, len(v)) + list(v[: max(len(v) - k, 0)]))
    return np.array(out)


def _recompute(words: pd.DataFrame, label: str, measure: str) -> dict:
    keep = _fitted(words, measure)
    base = [_lagged(words, c, k) for c in ("length", "zipf") for k in range(3)]
    surp = [_lagged(words, surprisal_column(label), k) for k in range(3)]
    ones = np.ones(len(words))
    X0 = np.column_stack([ones, *base])[keep]
    X1 = np.column_stack([ones, *surp, *base])[keep]
    y = words[measure].to_numpy(float)[keep]
    texts = words["text_key"].to_numpy()[keep]
    diffs = np.empty(len(y))
    for t in dict.fromkeys(words["text_key"]):  # ten texts: leave one text out
        test = texts == t
        ll = []
        for X in (X0, X1):
            beta = np.linalg.lstsq(X[~test], y[~test], rcond=None)[0]
            var = np.mean((y[~test] - X[~test] @ beta) ** 2)
            r = y[test] - X[test] @ beta
            ll.append(-0.5 * np.log(2 * np.pi * var) - r**2 / (2 * var))
        diffs[test] = ll[1] - ll[0]
    beta, *_ = np.linalg.lstsq(X1, y, rcond=None)
    resid = y - X1 @ beta
    s2 = resid @ resid / (len(y) - X1.shape[1])
    se = np.sqrt(s2 * np.linalg.inv(X1.T @ X1)[1, 1])
    return {"n": len(y), "delta_ll": diffs.mean(), "delta_ll_se": diffs.std(ddof=1) / np.sqrt(len(y)),
            "coef": beta[1], "coef_se": se, "keep": keep}  # fmt: skip


def test_fits_are_recomputed_from_words_csv(ns_run):
    _, out, _ = ns_run
    words, fits = _words(out), pd.read_csv(out / "fits.csv", keep_default_na=False)
    for row in fits.itertuples():
        want = _recompute(words, row.model, row.measure)
        assert list(words[f"{row.measure}_included"]) == list(want["keep"])
        assert row.n == want["n"]
        for key in ("delta_ll", "delta_ll_se", "coef", "coef_se"):
            assert getattr(row, key) == pytest.approx(want[key], rel=1e-6, abs=1e-9), (row.model, row.measure, key)


# --- surprisal = pllscore score ------------------------------------------------------------------------------------


def _score_command(tmp, model, texts, name, long=True):
    """`pllscore score --words whitespace --mask-by words --long window --level word --base 2 --surprisal` of the
    texts (an encoder-decoder LM takes no windows: without --long window)."""
    path = tmp / f"{name}.txt"
    path.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    scores = tmp / f"{name}-scores.csv"
    window = ["--long", "window"] if long else []
    done = run("score", str(path), "-m", str(model), "--words", "whitespace", "--mask-by", "words", *window,
               "--level", "word", "--base", "2", "--surprisal", "-o", str(scores), "-q", "--force")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return pd.read_csv(scores, keep_default_na=False)


def _check_equal(words, label, scored):
    """words.csv's surprisals against the score command's table (one row per word; the value column is named
    after the metric and what it holds: causal_surprisal_bits, word_l2r_surprisal_bits, seq2seq_surprisal_bits)."""
    names = [f"{m}_surprisal_bits" for m in ("causal", "word_l2r", "seq2seq")]
    (value,) = [c for c in scored.columns if c in names]
    assert len(scored) == len(words)
    assert list(scored["word"].astype(str)) == list(words["word"])
    got = words[surprisal_column(label)].to_numpy(float)
    want = scored[value].to_numpy(float)
    assert np.isfinite(got).all() and np.isfinite(want).all()
    np.testing.assert_allclose(got, want, atol=TOL_BITS, rtol=0)


@pytest.mark.parametrize("label, model", [("tiny_gpt2", TINY_GPT2), ("tiny_bert_cased", TINY_BERT)])
def test_surprisal_is_the_score_command(ns_run, label, model):
    tmp, out, _ = ns_run
    words = _words(out)
    texts = [" ".join(g["word"]) for _, g in words.groupby("text_key", sort=False)]
    _check_equal(words, label, _score_command(tmp, model, texts, label))


def _whole_word_chain(words: list[str]) -> list[float]:
    """Each displayed word's word-l2r surprisal (bits) with the whole word masked, by transformers alone: token j
    of a word is read with itself and the word's later tokens masked, everything else visible."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(TINY_BERT)
    model = AutoModelForMaskedLM.from_pretrained(TINY_BERT).eval()
    enc = tok(" ".join(words), return_offsets_mapping=True)
    ids, offsets = torch.tensor(enc["input_ids"]), enc["offset_mapping"]
    out, start = [], 0
    for w in words:
        pos = [i for i, (s, e) in enumerate(offsets) if e > s and start <= s < start + len(w)]
        total = 0.0
        for j, p in enumerate(pos):
            masked = ids.clone()
            masked[pos[j:]] = tok.mask_token_id
            with torch.no_grad():
                total += torch.log_softmax(model(masked[None]).logits[0, p].double(), -1)[ids[p]].item()
        out.append(-total / math.log(2))
        start += len(w) + 1
    return out


def test_a_masked_lm_masks_each_displayed_word_whole():
    from pllscore.eval.reading_times.surprisal import word_surprisals

    words = ["I", "don't", "know", "NASA's", "plan."]  # BERT reads don ' t, NASA ' s, plan .
    want = _whole_word_chain(words)
    scorer = pllscore.load(TINY_BERT, device="cpu")
    (got,) = word_surprisals(scorer, [" ".join(words)], [words])
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)
    (by_tokenizer,) = word_surprisals(scorer, [" ".join(words)], [words], mask_by="tokenizer")
    assert by_tokenizer[1] < want[1] - 1  # the tokenizer's words: "don" read with "'" and "t" visible
    assert by_tokenizer[0] == pytest.approx(want[0], abs=1e-4)  # a one-token word is the same either way


def test_encoder_decoder_surprisal_is_the_score_command(tmp_path):
    from tests.seq2seq_models import save

    save(str(tmp_path / "t5"))
    rows = []
    sentences = [
        "the cat sat on the mat today and the dog ran in the park , fast !",
        "we ate it , then the cat sat down on the mat by the door .",
        "a dog ran in the park and we sat on the grass by the old tree .",
        "then it ran on , and the cat sat , and we ate the cake today .",
    ]
    for t, sentence in enumerate(sentences):
        rows += [(f"s{t}", i + 1, w, 300.0 + 7 * ((i * 5 + t) % 11)) for i, w in enumerate(sentence.split())]
    table = pd.DataFrame(rows, columns=["sid", "pos", "w", "rt"])
    table.to_csv(tmp_path / "t.csv", index=False)
    res = pllscore.reading_times(tmp_path / "t.csv", tmp_path / "t5", text_column="sid", position_column="pos",
                                 word_column="w", measures="rt", output=tmp_path / "out", spillover=0)  # fmt: skip
    words = _words(tmp_path / "out")
    assert list(words["word"]) == list(table["w"]) and res.labels == ("t5",)
    texts = [" ".join(g["word"]) for _, g in words.groupby("text_key", sort=False)]
    _check_equal(words, "t5", _score_command(tmp_path, tmp_path / "t5", texts, "t5", long=False))


# --- order and the word None ---------------------------------------------------------------------------------------


def test_shuffled_table_gives_the_same_rows(tmp_path):
    ns = pd.read_csv(NATURAL_STORIES, sep="\t", keep_default_na=False)
    small = ns[(ns["zone"] <= 14) & (ns["item"] <= 3)].sort_values(["item", "zone"]).reset_index(drop=True)
    small.loc[5, "word"] = "None"  # a word pandas reads as missing by default
    small.loc[8, "word"] = "NA"
    order = list(small.sample(frac=1.0, random_state=1).index)
    first = next(i for i in order if small.loc[i, "item"] == 1)
    shuffled = small.loc[[first] + [i for i in order if i != first]]
    outs = []
    for name, frame in (("sorted", small), ("shuffled", shuffled)):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
        done = run("reading-times", str(tmp_path / f"{name}.csv"), *COLUMNS, "--measure", "meanItemRT",
                   "--measure", "gmeanItemRT", "-m", str(TINY_GPT2), "-o", str(tmp_path / name), "-q")  # fmt: skip
        assert done.returncode == 0, done.stderr
        outs.append(((tmp_path / name / "words.csv").read_text(), (tmp_path / name / "fits.csv").read_text()))
    assert outs[0] == outs[1]
    words = _words(tmp_path / "sorted")
    assert words["word"].iloc[5] == "None" and words["word"].iloc[8] == "NA"
    assert list(words["meanItemRT"]) == pytest.approx(list(small["meanItemRT"]))


# --- errors --------------------------------------------------------------------------------------------------------


def _bad_tables():
    base = pd.DataFrame({"sid": ["a"] * 4 + ["b"] * 4, "pos": [1, 2, 3, 4] * 2,
                         "w": "The cat sat down A dog ran off".split(), "rt": [300.0] * 8})  # fmt: skip
    return {
        "missing column": (base.drop(columns=["rt"]), "column 'rt' not in"),
        "non-numeric measure": (base.assign(rt=["300", "slow"] + ["300"] * 6), "measure 'rt' is not a number"),
        "empty text": (base.assign(w=["The", "cat", "sat", "down"] + [""] * 4), "empty word"),
        "duplicate positions": (base.assign(pos=[1, 2, 2, 4] * 2), "has position 2 twice"),
        "unplaceable word": (base.assign(w=["The", "cat", "\u200b", "down", "A", "dog", "ran", "off"]), "cannot place"),
    }


@pytest.mark.parametrize("case", list(_bad_tables()))
def test_bad_input_is_one_line_and_keeps_the_output_folder(tmp_path, case):
    frame, message = _bad_tables()[case]
    frame.to_csv(tmp_path / "t.csv", index=False)
    out = tmp_path / "out"
    out.mkdir()
    (out / "fits.csv").write_text("kept\n")  # an earlier run, which --force would replace
    (out / "meta.json").write_text('{"kind": "reading-times"}')
    model = TINY_BERT if case == "unplaceable word" else TINY_GPT2
    done = run("reading-times", str(tmp_path / "t.csv"), "--text-column", "sid", "--position-column", "pos",
               "--word-column", "w", "--measure", "rt", "-m", str(model), "-o", str(out), "-q", "--force")  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], done.stderr
    assert (out / "fits.csv").read_text() == "kept\n" and sorted(p.name for p in out.iterdir()) == [
        "fits.csv", "meta.json",
    ]  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "t.csv"]  # no temporary folder left


# --- per-reader rows -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def readers(tmp_path_factory):
    """Per-reader reading times made from tiny-gpt2's own surprisal: 200 + 10 ms/bit + a reader's offset + noise."""
    tmp = tmp_path_factory.mktemp("readers")
    ns = pd.read_csv(NATURAL_STORIES, sep="\t", keep_default_na=False)
    small = ns[(ns["zone"] <= 40) & (ns["item"] <= 4)].sort_values(["item", "zone"]).reset_index(drop=True)
    small[["item", "zone", "word", "meanItemRT"]].to_csv(tmp / "words.csv", index=False)
    first = pllscore.reading_times(tmp / "words.csv", TINY_GPT2, text_column="item", position_column="zone",
                                   word_column="word", measures="meanItemRT")  # fmt: skip
    s = first.words["tiny_gpt2_surprisal_bits"].to_numpy(float)
    rng = np.random.default_rng(0)
    rows = []
    for r, offset in enumerate([-60.0, -20.0, 0.0, 30.0, 80.0]):
        rt = 200 + 10 * s + offset + rng.normal(0, 15, len(s))
        rows.append(small[["item", "zone", "word"]].assign(reader=f"r{r}", rt=rt))
    table = pd.concat(rows).sample(frac=1.0, random_state=2)
    table.to_csv(tmp / "readers.csv", index=False)
    return tmp, table


def test_mixed_model_recovers_the_reading_time_slope(readers):
    tmp, table = readers
    res = pllscore.reading_times(tmp / "readers.csv", TINY_GPT2, text_column="item", position_column="zone",
                                 word_column="word", subject_column="reader", measures="rt")  # fmt: skip
    assert len(res.words) == len(table) and "subject" in res.words.columns
    (fit,) = res.fits.itertuples()
    assert fit.coef == pytest.approx(10.0, abs=1.0) and fit.coef_se < 0.5
    assert fit.delta_ll > 10 * fit.delta_ll_se > 0


def test_aggregated_readers_are_the_per_word_means(readers):
    tmp, table = readers
    columns = dict(text_column="item", position_column="zone", word_column="word", measures="rt")
    res = pllscore.reading_times(tmp / "readers.csv", TINY_GPT2, subject_column="reader", aggregate=True, **columns)
    means = table.groupby(["item", "zone"], as_index=False).agg(word=("word", "first"), rt=("rt", "mean"))
    means = means.sort_values(["item", "zone"])
    means.to_csv(tmp / "means.csv", index=False)
    want = pllscore.reading_times(tmp / "means.csv", TINY_GPT2, **columns)
    # the readers' table starts with another story, so compare by story and position
    got = res.words.sort_values(["text_key", "position"]).reset_index(drop=True)
    exp = want.words.sort_values(["text_key", "position"]).reset_index(drop=True)
    np.testing.assert_allclose(got["rt"], exp["rt"], rtol=1e-12)
    assert list(got["rt_included"]) == list(exp["rt_included"])
    assert res.fits["coef"].iloc[0] == pytest.approx(want.fits["coef"].iloc[0], rel=1e-9)
