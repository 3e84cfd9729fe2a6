"""Encode once: ``Scorer.encode`` gives the encoding ``score`` and ``check`` use, and ``score(encodings)``
scores it without tokenizing again, to the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

import pllscore.scoring.base
from pllscore import CausalScorer, InputError, MaskedScorer
from pllscore.scoring import Encodings

TEXTS = ["The cat sat on the mat.", "A dog barked.", "Carnivores eat meat."]
WORDS = [["The", "cat", "sat", "on", "the", "mat."], ["A", "dog", "barked."], ["Carnivores", "eat", "meat."]]


@pytest.fixture(scope="module")
def scorers(tiny_bert, causal_models):
    return {"masked": MaskedScorer(*tiny_bert), "causal": CausalScorer(*causal_models["gpt2-bpe"])}


@pytest.mark.parametrize("kind", ["masked", "causal"])
@pytest.mark.parametrize(
    "options",
    [{}, {"context": "She said", "sep": ": "}, {"words": WORDS, "mask_by": "words"}, {"convention": "lm-eval"}],
)
def test_scoring_encodings_gives_the_numbers_of_scoring_texts(scorers, kind, options, monkeypatch):
    scorer = scorers[kind]
    if kind == "causal" and options.get("mask_by"):
        options = {**options, "mask_by": None}
    want = scorer.score(TEXTS, outputs=["entropy"], **options)
    encodings = scorer.encode(TEXTS, **options)
    assert len(encodings) == 3 and encodings.n_tokens == scorer.check(TEXTS, **options)

    def no_tokenizing(*args, **kwargs):
        raise AssertionError("score(encodings) tokenized again")

    monkeypatch.setattr(pllscore.scoring.base, "encode", no_tokenizing)
    got = scorer.score(encodings, outputs=["entropy"])
    for a, b in zip(want, got):
        assert (a.metric, a.text, a.pieces) == (b.metric, b.text, b.pieces)
        np.testing.assert_array_equal(a.logprobs, b.logprobs)
        np.testing.assert_array_equal(a.entropy, b.entropy)
        assert [w.text for w in a.words] == [w.text for w in b.words]
    # a slice scores as the texts it holds, spans included (batches differ in shape: float32 rounding)
    part = scorer.score(encodings[1:], spans=[None, (0, 10)])
    np.testing.assert_allclose(part[0].logprobs, got[1].logprobs, atol=1e-5, rtol=0)


def test_encodings_join_and_refuse_mixing(scorers):
    scorer = scorers["masked"]
    a = scorer.encode(TEXTS[:1], context="Hi")
    b = scorer.encode(TEXTS[1:])
    joined = Encodings.concat([a, b])
    assert list(joined.texts) == TEXTS and list(joined.context) == ["Hi", "", ""]
    np.testing.assert_array_equal(scorer.score(joined).totals, scorer.score(TEXTS, context=["Hi", "", ""]).totals)
    with pytest.raises(InputError, match="different options"):
        Encodings.concat([a, scorer.encode(TEXTS[1:], words="whitespace")])
    assert "3 texts" in repr(joined) and "per text" in repr(joined)


def test_encoding_options_are_not_given_twice(scorers):
    scorer = scorers["masked"]
    encodings = scorer.encode(TEXTS, context="Hi")
    with pytest.raises(InputError, match="already encoded; give context, mask_by to encode"):
        scorer.score(encodings, context="Hi", mask_by="words")
    with pytest.raises(InputError, match="encode the texts with the scorer that scores them"):
        scorers["causal"].score(encodings)


def test_encode_raises_what_score_raises(scorers):
    scorer = scorers["masked"]
    with pytest.raises(InputError, match="text 1 is empty"):
        scorer.encode(["fine", ""])
    with pytest.raises(InputError, match="unknown convention"):
        scorer.encode([], convention="nope")  # no texts: the options are still checked
    assert len(scorer.score(scorer.encode([]))) == 0
