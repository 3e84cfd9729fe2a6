"""Conditional scores: ``score(texts, context=...)`` equals the naive oracle run on the joint string
``context + sep + text`` with only the text's tokens scored, split from the context by
lm-evaluation-harness's rule (written out again here, from its ``_encode_pair``)."""

from __future__ import annotations

import numpy as np
import pytest

from pllscore import CausalScorer, InputError, MaskedScorer
from pllscore.metrics import METRICS
from pllscore.scoring.encoding import context_size
from tests import oracle

ATOL = 1e-5

TEXTS = ["sat on the mat.", "wrecked the vehicle.", "Carnivores eat meat, and the marauder ran.", "lost the souvenir."]
# a plain one, one ending in a space, one ending in a newline and a space, and none
CONTEXTS = ["The cat", "The hooligan ", "She said:\n ", ""]


def lm_eval_continuation(tok, context: str, continuation: str) -> list[int]:
    """The continuation's ids as lm-eval's ``TemplateLM._encode_pair`` makes them."""
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces > 0:
        continuation = context[-n_spaces:] + continuation
        context = context[:-n_spaces]
    if not context:  # no context: plain scoring of the text itself
        return tok(continuation.removeprefix(" "), add_special_tokens=False)["input_ids"]
    whole = tok(context + continuation, add_special_tokens=False)["input_ids"]
    context_enc = tok(context, add_special_tokens=False)["input_ids"]
    return whole[len(context_enc) :]


def joint(context: str, text: str, sep: str = " ") -> str:
    return context + sep + text if context else text


class _Fixed:
    """A stand-in tokenizer for tests/oracle.py: the joint ids, with the context's word ids None."""

    def __init__(self, tok, ids: list[int], word_ids: list[int | None]) -> None:
        self.ids, self.wids, self.mask_token_id = ids, word_ids, tok.mask_token_id

    def __call__(self, text: str, **kwargs: object) -> _Fixed:
        return self

    def __getitem__(self, key: str) -> list[int]:
        return self.ids

    def word_ids(self) -> list[int | None]:
        return self.wids


def masked_oracle(model, tok, context: str, text: str, metric: str) -> tuple[list[float], list[int]]:
    """(log-probabilities of the text's tokens, their ids): the oracle on the joint ids, context never masked."""
    enc = tok(joint(context, text))
    ids, word_ids = enc["input_ids"], enc.word_ids()
    cont = lm_eval_continuation(tok, context, " " + text)
    content = [j for j, w in enumerate(word_ids) if w is not None]
    assert [ids[j] for j in content[len(content) - len(cont) :]] == cont
    hidden = set(content[: len(content) - len(cont)])
    fixed = _Fixed(tok, ids, [None if j in hidden else w for j, w in enumerate(word_ids)])
    return oracle.masked_logprobs(model, fixed, "", metric), cont


@pytest.mark.parametrize("family", ["bert-wordpiece", "roberta-bpe", "xlmr-unigram", "modernbert-wordpiece"])
def test_masked_context_equals_oracle_for_all_metrics(masked_models, family):
    model, tok = masked_models[family]
    scorer = MaskedScorer(model, tok, max_tokens=64)
    results = scorer.score(TEXTS, context=CONTEXTS, metric="all")
    for k, metric in enumerate(METRICS):
        for i, (c, t) in enumerate(zip(CONTEXTS, TEXTS)):
            got = results[k * len(TEXTS) + i]
            want, cont = masked_oracle(model, tok, c, t, metric)
            assert got.text == t and tok.convert_tokens_to_ids(list(got.pieces)) == cont, (family, c)
            np.testing.assert_allclose(got.logprobs, want, atol=ATOL, rtol=0, err_msg=f"{family} {metric} {c!r}")
            # spans index into the text alone
            assert all(0 <= a <= b <= len(t) for a, b in got.offsets)
            assert [w.text for w in got.words if w.text][-1] in t


@pytest.mark.parametrize("family", ["gpt2-bpe", "llama-unigram"])
def test_causal_context_equals_oracle(causal_models, family):
    model, tok = causal_models[family]
    scorer = CausalScorer(model, tok, max_tokens=40)
    results = scorer.score(TEXTS, context=CONTEXTS)
    for i, (c, t) in enumerate(zip(CONTEXTS, TEXTS)):
        got = results[i]
        cont = lm_eval_continuation(tok, c, " " + t)
        want = oracle.causal_logprobs(model, tok, joint(c, t))[-len(cont) :]
        assert tok.convert_tokens_to_ids(list(got.pieces)) == cont, (family, c)
        np.testing.assert_allclose(got.logprobs, want, atol=ATOL, rtol=0, err_msg=f"{family} {c!r}")
        assert got.text == t and all(0 <= a <= b <= len(t) for a, b in got.offsets)


def test_context_ending_in_space_moves_the_space_to_the_text(causal_models):
    # lm-eval's rule: "The hooligan " + " " + text -> context "The hooligan", continuation "  wrecked ..."
    model, tok = causal_models["gpt2-bpe"]
    scorer = CausalScorer(model, tok)
    r = scorer.score("wrecked the vehicle.", context="The hooligan ")[0]
    plain = scorer.score("wrecked the vehicle.", context="The hooligan")[0]
    assert r.n_tokens == plain.n_tokens + 1 and r.offsets[0] == (0, 0)  # the extra space, scored, spans nothing
    assert r.words[1].text == "wrecked" and np.isfinite(r.logprobs).all()


def test_one_context_for_all_equals_one_per_text(masked_models, causal_models):
    for scorer in (MaskedScorer(*masked_models["bert-wordpiece"]), CausalScorer(*causal_models["gpt2-bpe"])):
        one = scorer.score(TEXTS, context="Yesterday, at noon,")
        each = scorer.score(TEXTS, context=["Yesterday, at noon,"] * len(TEXTS))
        alone = [scorer.score(t, context="Yesterday, at noon,")[0] for t in TEXTS]
        for a, b, c in zip(one, each, alone):
            assert np.array_equal(a.logprobs, b.logprobs) and a.pieces == b.pieces
            np.testing.assert_allclose(a.logprobs, c.logprobs, atol=ATOL, rtol=0)


@pytest.mark.parametrize("metric", ["word-l2r", "sentence-l2r"])
def test_empty_context_is_plain_scoring(masked_models, causal_models, metric):
    masked = MaskedScorer(*masked_models["roberta-bpe"])
    causal = CausalScorer(*causal_models["llama-unigram"])
    for scorer, kw in ((masked, {"metric": metric}), (causal, {})):
        plain = scorer.score(TEXTS, **kw)
        for context in ("", [""] * len(TEXTS)):
            got = scorer.score(TEXTS, context=context, sep="--", **kw)
            for a, b in zip(got, plain):
                assert a.pieces == b.pieces and a.offsets == b.offsets
                assert np.array_equal(a.logprobs, b.logprobs)


def test_context_changes_the_score_and_sep_is_used(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    scorer = CausalScorer(model, tok)
    a = scorer.score("sat on the mat.", context="The cat")[0]
    b = scorer.score("sat on the mat.", context="The cat", sep="\n")[0]
    want = oracle.causal_logprobs(model, tok, "The cat\nsat on the mat.")[-b.n_tokens :]
    np.testing.assert_allclose(b.logprobs, want, atol=ATOL, rtol=0)
    assert a.total != b.total and a.pieces[0] != b.pieces[0]


def test_causal_without_bos_scores_every_text_token_after_a_context(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    r = CausalScorer(model, tok, bos=False).score("sat on the mat.", context="The cat")[0]
    assert r.n_scored == r.n_tokens
    ids = tok("The cat sat on the mat.")["input_ids"]
    full = oracle.causal_logprobs(model, tok, "The cat sat on the mat.")  # after BOS
    import torch

    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids])).logits[0].double()
    want = [torch.log_softmax(logits[j - 1], -1)[ids[j]].item() for j in range(len(ids) - r.n_tokens, len(ids))]
    np.testing.assert_allclose(r.logprobs, want, atol=ATOL, rtol=0)
    assert len(full) == len(ids)


def test_spans_with_a_context_refer_to_the_text(masked_models):
    scorer = MaskedScorer(*masked_models["bert-wordpiece"])
    full = scorer.score("wrecked the vehicle.", context="The hooligan")[0]
    part = scorer.score("wrecked the vehicle.", context="The hooligan", spans=[(12, 19)])[0]
    assert [w.text for w in part.words if np.isfinite(w.score)] == ["vehicle"]
    scored = part.scored
    np.testing.assert_allclose(part.logprobs[scored], full.logprobs[scored], atol=ATOL, rtol=0)


def test_windows_with_a_context_equal_plain_when_it_fits(masked_models, causal_models):
    for scorer in (MaskedScorer(*masked_models["bert-wordpiece"]), CausalScorer(*causal_models["gpt2-bpe"])):
        a = scorer.score(TEXTS, context=CONTEXTS)
        b = scorer.score(TEXTS, context=CONTEXTS, long="window")
        for x, y in zip(a, b):
            np.testing.assert_allclose(x.logprobs, y.logprobs, atol=ATOL, rtol=0)


def test_long_context_in_windows_scores_only_the_text(masked_models, causal_models):
    context = " ".join(["The cat sat on the mat."] * 12)  # longer than the models' 64 positions
    masked = MaskedScorer(*masked_models["bert-wordpiece"])
    causal = CausalScorer(*causal_models["gpt2-bpe"], stride=16)
    for scorer in (masked, causal):
        with pytest.raises(InputError, match="tokens long"):
            scorer.score("The dog barked.", context=context)
        r = scorer.score("The dog barked.", context=context, long="window")[0]
        assert r.text == "The dog barked." and r.n_scored == r.n_tokens and np.isfinite(r.logprobs).all()
        assert "".join(p.lstrip("Ġ#") for p in r.pieces) == "Thedogbarked."


@pytest.mark.parametrize(
    ("context", "message"),
    [
        (3, "context must be a string or a list of strings"),
        (b"bytes", "context must be a string or a list of strings"),
        (["a", "b"], "2 contexts for 4 texts"),
        (["a", None, "c", "d"], "context 1 is a NoneType"),
    ],
)
def test_invalid_context_is_one_line_input_error(masked_models, causal_models, context, message):
    for scorer in (MaskedScorer(*masked_models["bert-wordpiece"]), CausalScorer(*causal_models["gpt2-bpe"])):
        for call in (scorer.score, scorer.check):
            with pytest.raises(InputError, match=message) as err:
                call(TEXTS, context=context)
            assert "\n" not in str(err.value)


def test_invalid_sep_and_context_check(masked_models):
    scorer = MaskedScorer(*masked_models["bert-wordpiece"])
    with pytest.raises(InputError, match="sep must be a string"):
        scorer.score(TEXTS, context="x", sep=None)  # type: ignore[arg-type]
    assert scorer.check(TEXTS[0], context="The cat") == scorer.check("The cat " + TEXTS[0])


def test_a_token_crossing_the_join_belongs_to_the_text():
    # content tokens "un" (0, 2), "##bel" (2, 5), ...: with a context "u" (1 token alone), "un" crosses
    offsets = [(0, 0), (0, 2), (2, 5), (5, 9), (0, 0)]
    content = [1, 2, 3]
    assert context_size(content, offsets, n_context=1, end=1) == 0
    assert context_size(content, offsets, n_context=1, end=2) == 1  # lm-eval's split when nothing crosses
    assert context_size(content, offsets, n_context=2, end=5) == 2
