"""Bad input gets a clear one-line error that names the problem and the fix."""

from __future__ import annotations

import pytest

from pllscore import CausalScorer, InputError, InputTooLongError, MaskedScorer, ModelError


def _one_line(excinfo) -> str:
    msg = str(excinfo.value)
    assert "\n" not in msg
    return msg


@pytest.mark.parametrize(
    ("texts", "match"),
    [
        (["fine", ""], "text 1 is empty"),
        (["   \t"], "text 0 is whitespace only"),
        (["ok", 3], "text 1 is a int"),
        (["ok", None], "text 1 is a NoneType"),
        (b"bytes", "texts must be a string or a list of strings"),
        (42, "texts must be a string or a list of strings"),
    ],
)
def test_bad_texts(tiny_bert, causal_models, texts, match):
    for scorer in (MaskedScorer(*tiny_bert), CausalScorer(*causal_models["gpt2-bpe"])):
        with pytest.raises(InputError, match=match) as e:
            scorer.score(texts)
        _one_line(e)


def test_over_long_text_names_index_length_and_limit(tiny_bert, causal_models):
    long = " ".join(["cat"] * 70)
    with pytest.raises(InputTooLongError, match=r"text 1 is 72 tokens long .* at most 64") as e:
        MaskedScorer(*tiny_bert).score(["The cat.", long])
    assert (e.value.index, e.value.n_tokens, e.value.limit) == (1, 72, 64)
    with pytest.raises(InputTooLongError, match="text 0"):
        CausalScorer(*causal_models["gpt2-bpe"]).score([long])


def test_empty_list_gives_empty_results(tiny_bert):
    assert len(MaskedScorer(*tiny_bert).score([])) == 0


def test_wrong_kind_of_model(tiny_bert, causal_models):
    gpt, gtok = causal_models["gpt2-bpe"]
    with pytest.raises(ModelError, match="causal LM.*CausalScorer") as e:
        MaskedScorer(gpt, gtok)
    _one_line(e)
    with pytest.raises(ModelError, match="masked LM.*MaskedScorer"):
        CausalScorer(*tiny_bert)


def test_metric_on_causal_model_is_refused(causal_models):
    with pytest.raises(InputError, match="leave metric out"):
        CausalScorer(*causal_models["gpt2-bpe"]).score(["The cat."], metric="word-l2r")


def test_unknown_metric(tiny_bert):
    with pytest.raises(InputError, match="did you mean 'whole-word'"):
        MaskedScorer(*tiny_bert).score(["The cat."], metric="whole_wrd")


class _SlowTokenizer:
    """Stands for a Python-only tokenizer: no word_ids(), no offsets."""

    is_fast = False
    mask_token_id = 4


def test_slow_tokenizer_refused(tiny_bert):
    with pytest.raises(ModelError, match="slow tokenizer.*needs a fast one") as e:
        MaskedScorer(tiny_bert[0], _SlowTokenizer())
    _one_line(e)


def test_bad_max_tokens(tiny_bert):
    with pytest.raises(InputError, match="max_tokens"):
        MaskedScorer(*tiny_bert, max_tokens=0)
