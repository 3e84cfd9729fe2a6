"""Normalised sentence scores and unigram sources, checked against numbers worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pllscore import InputError, Results, SentenceScore, to_frame
from pllscore.results.frames import to_wide_frame
from pllscore.results.norms import NORMS, check_norms
from pllscore.results.unigram import TokenUnigram, WordfreqUnigram, count_corpus, load_unigram, read_counts


def _result(metric="word-l2r", index=0, logprobs=(-1.0, -2.0, -0.5, np.nan)):
    # "The cat sat" -> The | ca ##t | sat, the last token unscored: total -3.5 over 3 scored tokens, 11 characters
    return SentenceScore(
        index=index, text="The cat sat", metric=metric, model="m", pieces=("The", "ca", "##t", "sat"),
        offsets=((0, 3), (4, 6), (6, 7), (8, 11)), word_index=np.array([0, 1, 1, 2]),
        word_spans=((0, 3), (4, 7), (8, 11)), logprobs=np.array(logprobs, dtype=np.float64),
    )  # fmt: skip


# The 5, ca 2, ##t 1, sat 2: N = 10, V = 4 types, add-one: denominator N + V + 1 = 15
TABLE = "token\tcount\nThe\t5\nca\t2\n##t\t1\nsat\t2\n"
U = math.log(6 / 15) + math.log(3 / 15) + math.log(2 / 15)  # the scored tokens The, ca, ##t


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "counts.tsv"
    path.write_text(TABLE)
    return path


def test_every_norm_by_hand(table):
    uni = load_unigram(table)
    r = _result()
    assert uni.logprob(r) == pytest.approx(U)
    assert r.normalised("sum") == -3.5
    assert r.normalised("mean") == pytest.approx(-3.5 / 3)
    assert r.normalised("per-char") == pytest.approx(-3.5 / 11)  # len("The cat sat"): spaces count
    assert r.normalised("slor", uni) == pytest.approx((-3.5 - U) / 3)
    assert r.normalised("norm-lp", uni) == pytest.approx(-3.5 / -U)
    # NormLP (Lau et al. 2017: -log Pm / log Pu) is negative, nearer 0 = better; SLOR here is positive
    assert r.normalised("norm-lp", uni) < 0 < r.normalised("slor", uni)


def test_smoothing_gives_unseen_tokens_one_count(table):
    uni = load_unigram(table)
    assert uni.token_logprob("zebra") == pytest.approx(math.log(1 / 15))
    assert uni.token_logprob("The") == pytest.approx(math.log(6 / 15))
    seen = sum(math.exp(uni.token_logprob(t)) for t in ("The", "ca", "##t", "sat"))
    assert seen + math.exp(uni.token_logprob("unseen")) == pytest.approx(1.0)  # a distribution
    half = TokenUnigram(read_counts(table), alpha=0.5)
    assert half.token_logprob("zebra") == pytest.approx(math.log(0.5 / (10 + 0.5 * 5)))


def test_norms_follow_the_view(table):
    uni = load_unigram(table)
    r = _result()
    bits, surprisal = r.view(base=2), r.view(surprisal=True)
    assert bits.normalised("slor", uni) == pytest.approx((-3.5 - U) / 3 / math.log(2))
    assert bits.normalised("norm-lp", uni) == pytest.approx(-3.5 / -U)  # a ratio of logs: no unit
    assert bits.normalised("per-char") == pytest.approx(-3.5 / 11 / math.log(2))
    assert surprisal.normalised("slor", uni) == pytest.approx(-(-3.5 - U) / 3)
    assert surprisal.normalised("norm-lp", uni) == pytest.approx(3.5 / -U)


def test_nothing_scored_is_nan(table):
    uni = load_unigram(table)
    r = _result(logprobs=(np.nan,) * 4)
    assert all(math.isnan(r.normalised(n, uni)) for n in NORMS)


def test_to_frame_and_wide_frame_columns(table):
    res = Results((_result("original"), _result("word-l2r", logprobs=(-2.0, -1.0, -1.0, -1.0))))
    frame = to_frame(res, norm=["sum", "mean", "slor", "per-char", "norm-lp"], unigram=table)
    assert list(frame.columns) == ["text_id", "text", "metric", "model", "logprob", "logprob_mean", "logprob_slor",
                                   "logprob_per_char", "logprob_norm_lp", "n_tokens", "n_words", "unit"]  # fmt: skip
    assert frame["logprob_slor"].iloc[0] == pytest.approx((-3.5 - U) / 3)
    u2 = U + math.log(3 / 15)  # sat is scored in the second
    assert frame["logprob_slor"].iloc[1] == pytest.approx((-5.0 - u2) / 4)
    wide = to_wide_frame(res, norm=["mean", "slor"], unigram=load_unigram(table))
    assert list(wide.columns) == ["text_id", "n_tokens", "n_words", "original_logprob", "original_logprob_mean",
                                  "original_logprob_slor", "word_l2r_logprob", "word_l2r_logprob_mean",
                                  "word_l2r_logprob_slor"]  # fmt: skip
    assert wide["word_l2r_logprob_slor"].iloc[0] == pytest.approx((-5.0 - u2) / 4)
    assert list(to_wide_frame(res).columns) == list(to_wide_frame(res, norm="sum").columns)  # default unchanged
    assert res.to_frame(norm="per-char")["logprob_per_char"].iloc[0] == pytest.approx(-3.5 / 11)


def test_norm_mistakes_are_one_line(table):
    with pytest.raises(InputError, match="unknown norm 'median'"):
        check_norms(["median"])
    with pytest.raises(InputError, match="--unigram-corpus"):
        to_frame([_result()], norm="slor")
    with pytest.raises(InputError, match="sentence scores"):
        to_frame([_result()], level="word", norm="per-char")
    assert check_norms(None) == ("sum",)
    assert check_norms(["per_char", "NormLP", "sum"], unigram=object()) == ("per-char", "norm-lp", "sum")


def test_read_counts_csv_headerless_and_errors(tmp_path):
    (tmp_path / "c.csv").write_text('"a,b",3\nNA,2\nNA,1\n')
    assert read_counts(tmp_path / "c.csv") == {"a,b": 3, "NA": 3}  # tokens as exact strings; repeats added
    (tmp_path / "d.tsv").write_text("word\tfreq\tcount\ttoken\nx\t1\t4\tthe\n")
    assert read_counts(tmp_path / "d.tsv") == {"the": 4}
    (tmp_path / "bad.tsv").write_text("token\tcount\nthe\tmany\n")
    with pytest.raises(InputError, match="line 2 .*not a non-negative number|line 2 .*no count"):
        read_counts(tmp_path / "bad.tsv")
    with pytest.raises(InputError, match="not found"):
        read_counts(tmp_path / "missing.tsv")


def test_count_corpus_with_a_tiny_tokenizer(tmp_path):
    from tests.tokenizers_fixtures import wordpiece

    tok = wordpiece()
    (tmp_path / "corpus.txt").write_text("The cat sat on the mat.\n\nthe hooligan [MASK]\n")
    counts = count_corpus(tmp_path / "corpus.txt", tok)
    expected: dict[str, int] = {}
    for line in ("The cat sat on the mat.", "the hooligan [MASK]"):
        ids = tok(line, add_special_tokens=False, split_special_tokens=True)["input_ids"]
        for p in tok.convert_ids_to_tokens(ids):
            expected[p] = expected.get(p, 0) + 1
    assert counts == expected
    assert counts["the"] == 2 and counts["The"] == 1 and counts["ho"] == 1 and counts["##gan"] == 1
    assert "[MASK]" not in counts  # a literal [MASK] is text, as in scoring
    uni = load_unigram(corpus=tmp_path / "corpus.txt", tokenizer=tok)
    total = sum(counts.values())
    assert uni.token_logprob("the") == pytest.approx(math.log(3 / (total + len(counts) + 1)))
    assert "corpus" in uni.describe()["source"]
    with pytest.raises(InputError, match="not both"):
        load_unigram(tmp_path / "x.tsv", corpus=tmp_path / "corpus.txt", tokenizer=tok)


def test_wordfreq_is_word_level():
    from wordfreq import word_frequency

    uni = load_unigram("wordfreq")
    assert isinstance(uni, WordfreqUnigram) and uni.describe()["level"] == "word"
    r = _result(logprobs=(-1.0, -2.0, -0.5, -1.0))
    expected = sum(math.log(word_frequency(w, "en")) for w in ("the", "cat", "sat"))
    assert uni.logprob(r) == pytest.approx(expected)
    assert r.normalised("slor", uni) == pytest.approx((-4.5 - expected) / 4)  # |s| is still the scored tokens
    assert uni.word_logprob("qzxjvwq") == pytest.approx(math.log(1e-9))  # unknown word: the floor
    partly = _result()  # "sat" not scored: only "The cat" is read
    assert uni.logprob(partly) == pytest.approx(sum(math.log(word_frequency(w, "en")) for w in ("the", "cat")))


def test_wide_columns_say_what_they_hold():
    """Log-probabilities in nats keep the metric's plain name; surprisal and other bases say so in the name."""
    res = Results((_result("causal"),))
    assert list(to_wide_frame(res).columns)[3:] == ["causal_logprob", "causal_logprob_mean"]
    bits = to_wide_frame(res, base=2, surprisal=True, norm="per-char")
    assert list(bits.columns)[3:] == ["causal_surprisal_bits", "causal_surprisal_bits_mean",
                                      "causal_surprisal_bits_per_char"]  # fmt: skip
    assert bits["causal_surprisal_bits"].iloc[0] == pytest.approx(3.5 / math.log(2))  # -(-3.5 nats) in bits
    assert list(to_wide_frame(res, surprisal=True).columns)[3:5] == ["causal_surprisal", "causal_surprisal_mean"]
    assert list(to_wide_frame(res, base=2).columns)[3] == "causal_logprob_bits"
    assert list(to_wide_frame(res, base=10, level="token").columns)[-1] == "causal_logprob_log10"
    assert list(to_wide_frame(res, base=2, surprisal=True, level="word").columns)[-1] == "causal_surprisal_bits"
