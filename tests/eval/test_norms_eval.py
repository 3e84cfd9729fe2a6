"""Minimal pairs counted by normalised scores: one accuracy column per norm, worked out by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pllscore import InputError
from pllscore.eval.runs import run_blimp, run_pairs
from pllscore.results.scores import Results, SentenceScore
from tests.fakes import encode_words, texts_of

# text -> per-token log-probabilities; tokens are the words
LOGPROBS = {"a b c": (-1, -1, -1), "a b": (-1, -1.5), "x": (-2,), "x y": (-1, -1.5)}
# a 4, b 2, c 1, x 1, y 1: N = 9, V = 5, add-one denominator 9 + 5 + 1 = 15
COUNTS = "token,count\na,4\nb,2\nc,1\nx,1\ny,1\n"
P = {"a": 5 / 15, "b": 3 / 15, "c": 2 / 15, "x": 2 / 15, "y": 2 / 15}


class WordScorer:
    """A stand-in scorer: each word is one token with the log-probability in LOGPROBS."""

    kind, name, revision, metric = "masked", "words", None, ("word-l2r",)

    def check(self, texts, **options):
        return len(list(texts))

    def encode(self, texts, **options):
        return encode_words(texts, **options)

    def score(self, texts, *, metric=None, progress=None, spans=None, **options):
        items = []
        for i, t in enumerate(texts_of(texts)):
            words = t.split()
            offsets, at = [], 0
            for w in words:
                start = t.index(w, at)
                offsets.append((start, start + len(w)))
                at = start + len(w)
            items.append(SentenceScore(
                index=i, text=t, metric="word-l2r", model="words", pieces=tuple(words), offsets=tuple(offsets),
                word_index=np.arange(len(words)), word_spans=tuple(offsets),
                logprobs=np.array(LOGPROBS[t], dtype=np.float64),
            ))  # fmt: skip
        return Results(tuple(items))


def _by_hand(text, norm):
    lp, words = LOGPROBS[text], text.split()
    total, u = sum(lp), sum(math.log(P[w]) for w in words)
    return {"sum": total, "mean": total / len(lp), "slor": (total - u) / len(lp), "norm-lp": total / -u,
            "per-char": total / len(text)}[norm]  # fmt: skip


PAIRS = [("a b c", "a b"), ("x", "x y")]


def test_pairs_accuracy_per_norm(tmp_path):
    (tmp_path / "pairs.csv").write_text("g,b\n" + "".join(f"{g},{b}\n" for g, b in PAIRS))
    (tmp_path / "counts.csv").write_text(COUNTS)
    norms = ["sum", "mean", "slor", "norm-lp", "per-char"]
    res = run_pairs(tmp_path / "pairs.csv", [WordScorer()], good="g", bad="b", norm=norms,
                    unigram=tmp_path / "counts.csv", output=tmp_path / "out")  # fmt: skip
    for n in norms:
        right = [_by_hand(g, n) > _by_hand(b, n) for g, b in PAIRS]
        name = n.replace("-", "_")  # per_char, norm_lp in column names
        col = "correct" if n == "sum" else f"correct_{name}"
        assert res.pairs[col].tolist() == right, n
        if n != "sum":
            assert res.pairs[f"good_logprob_{name}"].tolist() == pytest.approx([_by_hand(g, n) for g, _ in PAIRS])
            assert res.summary[f"Overall_{name}"].iloc[0] == round(100 * np.mean(right), 1)
            assert res.accuracy[f"accuracy_{name}"].iloc[0] == np.mean(right)
    # sum gets pair 2 right, mean and slor pair 1 (the longer good sentence)
    assert res.pairs["correct"].tolist() == [False, True] and res.pairs["correct_slor"].tolist() == [True, False]
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["settings"]["norms"] == norms and meta["settings"]["unigram"].startswith("sha256:")
    with pytest.raises(InputError, match="norms"):  # the folder's rows were made with other norms
        run_pairs(tmp_path / "pairs.csv", [WordScorer()], good="g", bad="b", output=tmp_path / "out")


def test_blimp_one_accuracy_column_per_norm(tmp_path):
    data = tmp_path / "blimp"
    data.mkdir()
    for uid, pairs in (("p1", PAIRS), ("p2", PAIRS[:1])):
        with open(data / f"{uid}.jsonl", "w") as f:
            for g, b in pairs:
                f.write(json.dumps({"sentence_good": g, "sentence_bad": b, "UID": uid, "linguistics_term": "binding"}))
                f.write("\n")
    (tmp_path / "counts.csv").write_text(COUNTS)
    res = run_blimp([WordScorer()], data=data, norm=["sum", "mean", "slor"], unigram=tmp_path / "counts.csv",
                    output=tmp_path / "out")  # fmt: skip
    assert list(res.summary.columns[:5]) == ["model", "metric", "Overall", "Overall_mean", "Overall_slor"]
    row = res.summary.iloc[0]
    # p1: sum 1/2, mean 1/2, slor 1/2; p2: sum 0, mean 1, slor 1; Overall is the mean of the paradigms
    assert (row["Overall"], row["Overall_mean"], row["Overall_slor"]) == (25.0, 75.0, 75.0)
    assert row["binding"] == 25.0  # the phenomena are under sum
    assert list(res.accuracy.columns[-2:]) == ["accuracy_mean", "accuracy_slor"]
    plain = run_blimp([WordScorer()], data=data)  # sum alone: the tables are as before
    assert "Overall_mean" not in plain.summary.columns and "accuracy_mean" not in plain.accuracy.columns


def test_norm_mistakes_before_any_model_is_loaded(tmp_path):
    with pytest.raises(InputError, match="needs unigram"):
        run_blimp(["no/such/model"], data=tmp_path, norm=["slor"])
    with pytest.raises(InputError, match="unknown norm"):
        run_blimp(["no/such/model"], data=tmp_path, norm=["best"])
    with pytest.raises(InputError, match="not found"):
        run_blimp(["no/such/model"], data=tmp_path, norm=["slor"], unigram=tmp_path / "none.tsv")


def test_diagnose_length_per_norm():
    from pllscore.analysis import diagnostics as dx
    from pllscore.analysis.stats import pearson
    from pllscore.results.unigram import TokenUnigram

    texts = list(LOGPROBS)
    res = WordScorer().score(texts)
    uni = TokenUnigram({"a": 4, "b": 2, "c": 1, "x": 1, "y": 1})
    summary, data = dx.length(res, norms=("sum", "mean", "slor"), unigram=uni)
    assert summary["analysis"].tolist() == ["length", "length:mean", "length:slor"]
    n = [len(LOGPROBS[t]) for t in texts]
    for norm, row in zip(("sum", "mean", "slor"), summary.itertuples()):
        assert row.r == pytest.approx(pearson(n, [-_by_hand(t, norm) for t in texts])["r"])
    assert data[data["norm"] == "slor"]["surprisal"].tolist() == pytest.approx([-_by_hand(t, "slor") for t in texts])


def test_report_shows_the_normalised_columns(tmp_path):
    from pllscore.analysis.report import make_report

    data = tmp_path / "blimp"
    data.mkdir()
    with open(data / "p1.jsonl", "w") as f:
        for g, b in PAIRS:
            f.write(json.dumps({"sentence_good": g, "sentence_bad": b, "UID": "p1", "linguistics_term": "binding"}))
            f.write("\n")
    run_blimp([WordScorer()], data=data, norm=["sum", "mean"], output=tmp_path / "with")
    run_blimp([WordScorer()], data=data, output=tmp_path / "plain")
    page, md = make_report([tmp_path / "with", tmp_path / "plain"], tmp_path / "r.html")
    text = md.read_text()
    with_part, plain_part = text.split("## BLiMP accuracy (plain)")
    assert "Overall_mean" in with_part and "per scored token" in with_part
    assert "words word-l2r mean" in page.read_text()  # the per-paradigm table, per norm
    assert "Overall_" not in plain_part and "&gt;" not in text


def test_norms_keyword_is_deprecated_for_norm(tmp_path):
    from pllscore.eval.settings import EvalSettings

    with pytest.warns(DeprecationWarning, match="use norm="):
        settings = EvalSettings.merge(norms=["mean"])
    assert settings.table.norm == EvalSettings.merge(norm=["mean"]).table.norm == ("mean",)


def test_evaluation_options_are_merged_by_gather_with_one_line_errors():
    from pllscore.errors import InputError
    from pllscore.eval.settings import EvalSettings

    with pytest.raises(InputError, match=r"run_pairs\(\) got an unknown option 'metric'; did you mean 'metrics'\?"):
        EvalSettings.merge(metric=["PLL"], what="run_pairs")
    with pytest.raises(InputError, match=r"run_blimp\(\) does not read the option 'words'"):
        EvalSettings.merge(words="whitespace")
    with pytest.raises(InputError, match="unsupported dtype 'int8'"):  # each value checked by its settings group
        EvalSettings.merge(dtype="int8")
    merged = EvalSettings.merge(revision="main", bos=False, norm="mean", metrics=None)
    assert (merged.model.revision, merged.model.bos, merged.table.norm) == ("main", False, ("mean",))
    assert merged.text.metrics == EvalSettings().text.metrics  # None keeps the default
