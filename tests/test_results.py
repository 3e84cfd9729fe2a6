"""Result views and conversions, on hand-made results (no model)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pllscore import InputError, Results, SentenceScore, to_frame


def _result(metric="word-l2r", index=0, logprobs=(-1.0, -2.0, -0.5, np.nan)):
    # "The cat sat." -> The | ca ##t | sat ... with the last token unscored
    return SentenceScore(
        index=index,
        text="The cat sat",
        metric=metric,
        model="m",
        pieces=("The", "ca", "##t", "sat"),
        offsets=((0, 3), (4, 6), (6, 7), (8, 11)),
        word_index=np.array([0, 1, 1, 2]),
        word_spans=((0, 3), (4, 7), (8, 11)),
        logprobs=np.array(logprobs, dtype=np.float64),
    )


def test_sentence_word_token_numbers():
    r = _result()
    assert r.total == -3.5
    assert r.n_tokens == 4 and r.n_scored == 3 and r.n_words == 3
    assert r.mean == pytest.approx(-3.5 / 3)
    assert [w.text for w in r.words] == ["The", "cat", "sat"]
    assert r.words[1].score == -2.5 and r.words[1].n_tokens == 2
    assert math.isnan(r.words[2].score)
    assert r.tokens[2].piece == "##t" and r.tokens[2].span == (6, 7) and r.tokens[2].word == 1
    assert r.span(4, 7) == -2.5


def test_views_bits_and_surprisal():
    r = _result()
    bits = r.view(base=2)
    assert bits.total == pytest.approx(-3.5 / math.log(2))
    assert bits.unit == "bits"
    s = r.view(base=2, surprisal=True)
    assert s.total == pytest.approx(3.5 / math.log(2))
    assert s.words[1].score == pytest.approx(2.5 / math.log(2))
    assert s.view(base="e").total == pytest.approx(3.5)
    assert r.total == -3.5  # views never change the original
    with pytest.raises(InputError, match="log base"):
        r.view(base=1)


def test_to_frame_levels_and_units():
    res = Results((_result("original", 0), _result("word-l2r", 0)))
    sent = to_frame(res)
    assert list(sent["metric"]) == ["original", "word-l2r"] and list(sent["logprob"]) == [-3.5, -3.5]
    words = to_frame(res, level="word", surprisal=True)
    assert "surprisal" in words.columns and len(words) == 6
    tokens = res.to_frame("token")
    assert list(tokens.columns)[:4] == ["text_id", "metric", "token_id", "token"] and len(tokens) == 8
    assert tokens["scored"].tolist().count(False) == 2
    with pytest.raises(InputError, match="unknown level"):
        to_frame(res, level="paragraph")


def test_dicts_are_json():
    text = json.dumps(Results((_result(),)).to_dicts(), allow_nan=False)
    back = json.loads(text)[0]
    assert back["total"] == -3.5 and back["tokens"][3]["score"] is None and back["words"][1]["text"] == "cat"


def test_for_metric_selects_and_complains():
    res = Results((_result("original", 0), _result("word-l2r", 0), _result("original", 1)))
    assert [r.index for r in res.for_metric("original")] == [0, 1]
    assert res.for_metric("within_word_l2r")[0].metric == "word-l2r"
    with pytest.raises(KeyError, match="whole-word"):
        res.for_metric("whole-word")


def test_nothing_scored_totals_nan_not_zero():
    none = _result(logprobs=(np.nan,) * 4)
    assert none.n_scored == 0
    assert math.isnan(none.total) and math.isnan(none.mean)
    assert math.isnan(_result().span(8, 11))  # "sat": its one token was not scored
    assert math.isnan(_result().span(11, 11))  # no token there
    with pytest.raises(InputError, match=r"span \(20, 30\) of text 0 is outside the text"):
        _result().span(20, 30)  # refused, as spans= refuses it
    assert np.isnan(Results((none, _result())).totals).tolist() == [True, False]
    assert json.loads(json.dumps(none.to_dict(), allow_nan=False))["total"] is None
    assert math.isnan(to_frame(Results((none,)))["logprob"][0])
