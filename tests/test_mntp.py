"""kind="mntp": every PLL metric masks what the masked kind masks, and each target is read one position before
it (masked next-token prediction, GPT-BERT's); checked against a naive loop written from that definition: one
unbatched forward pass per masked copy, full logits, the target's log-probability at position t - 1."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import pllscore
from pllscore import MaskedScorer, MntpScorer, ModelError
from pllscore.metrics import METRICS
from tests import oracle
from tests import tokenizers_fixtures as tf
from tests.conftest import SENTENCES, TINY_BERT, TINY_GPT2
from tests.device import reference

pytestmark = pytest.mark.gpu  # make test-gpu: the same on CUDA (tests/device.py)

ATOL = 1e-5


@torch.inference_mode()
def naive_mntp(model, tok, text: str, metric: str, prefix: int | None = None) -> list[tuple[float, float, int]]:
    """Per non-special token t of ``text``: (log-probability, entropy, rank) of ids[t] from the logits at t - 1 of
    the copy with ``oracle.mask_set(metric, t)`` masked; ``prefix``: a token id put before the tokenizer's ids."""
    model = reference(model)
    enc = tok(text)
    ids, word_ids = list(enc["input_ids"]), list(enc.word_ids())
    if prefix is not None:
        ids, word_ids = [prefix, *ids], [None, *word_ids]
    out = []
    for t in range(len(ids)):
        if word_ids[t] is None:
            continue
        assert t >= 1
        x = torch.tensor([ids])
        x[0, sorted(oracle.mask_set(metric, t, word_ids))] = tok.mask_token_id
        logits = model(input_ids=x).logits[0, t - 1].double()
        logp = torch.log_softmax(logits, -1)
        entropy = -(logp.exp() * logp).sum().item()
        out.append((logp[ids[t]].item(), entropy, 1 + int((logits > logits[ids[t]]).sum())))
    return out


def _check(results, model, tok, texts, metrics, prefix=None) -> None:
    assert len(results) == len(metrics) * len(texts)
    for k, metric in enumerate(metrics):
        for i, text in enumerate(texts):
            got = results[k * len(texts) + i]
            assert (got.metric, got.text) == (metric, text)
            want = [lp for lp, _, _ in naive_mntp(model, tok, text, metric, prefix)]
            np.testing.assert_allclose(got.logprobs, want, atol=ATOL, rtol=0, err_msg=f"{metric} {text!r}")


# bert: its last layer only at the reads; distilbert: the whole encoder, then the head at the reads
@pytest.mark.parametrize("family", ["bert-wordpiece", "roberta-bpe", "distilbert-wordpiece"])
def test_every_metric_equals_the_naive_reading(masked_models, family):
    model, tok = masked_models[family]
    scorer = MntpScorer(model, tok, max_tokens=64)  # small budget: many padded batches
    assert scorer.kind == "mntp" and scorer.engine.read_offset == 1
    _check(scorer.score(SENTENCES, metric="all"), model, tok, SENTENCES, list(METRICS))


def test_generic_fallback_equals_the_naive_reading(tiny_bert):
    model, tok = tiny_bert
    scorer = MntpScorer(model, tok, max_tokens=48)
    scorer.engine.parts = None  # as for a family without a known head: full logits, read at t - 1
    _check(scorer.score(SENTENCES[:3], metric="all"), model, tok, SENTENCES[:3], list(METRICS))


@pytest.mark.shared
def test_shared_tiny_bert_cased(shared_bert):
    scorer = pllscore.load(TINY_BERT, kind="mntp", device="cpu")
    assert isinstance(scorer, MntpScorer) and scorer.kind == "mntp"
    texts = ["The hooligan wrecked the vehicle.", "Unbelievable: the marauders didn't return."]
    _check(scorer.score(texts, metric="all"), scorer.model, scorer.tokenizer, texts, list(METRICS))
    # the same copies, another read: the masked kind's scores differ
    masked = shared_bert.score(texts[0], metric="original")[0].logprobs
    assert not np.allclose(scorer.score(texts[0], metric="original")[0].logprobs, masked)


def test_entropy_and_rank_are_those_of_the_distribution_read(tiny_bert):
    model, tok = tiny_bert
    scorer = MntpScorer(model, tok)
    for r in scorer.score(SENTENCES[:2], metric=["original", "word-l2r"], outputs=["entropy", "rank"]):
        want = naive_mntp(model, tok, r.text, r.metric)
        np.testing.assert_allclose([t.entropy for t in r.tokens], [e for _, e, _ in want], atol=ATOL, rtol=0)
        assert [t.rank for t in r.tokens] == [k for _, _, k in want]


def test_batches_do_not_change_the_scores(tiny_bert):
    model, tok = tiny_bert
    together = MntpScorer(model, tok, max_tokens=4096).score(SENTENCES, metric="all")
    small = MntpScorer(model, tok, max_tokens=40).score(SENTENCES, metric="all")
    alone = MntpScorer(model, tok)
    for a, b in zip(together, small):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=ATOL, rtol=0)
        np.testing.assert_allclose(a.logprobs, alone.score(a.text, metric=a.metric)[0].logprobs, atol=ATOL, rtol=0)


def test_first_token_is_read_from_a_cls_put_in_front(masked_models):
    model, with_cls = masked_models["xlmr-unigram"]
    bare = tf.unigram(template="$A </s>")  # the same vocabulary, no <s> added
    assert bare("a")["input_ids"][0] != bare.cls_token_id
    scorer = MntpScorer(model, bare)
    texts = SENTENCES[:3]
    got = scorer.score(texts, metric="all")
    _check(got, model, bare, texts, list(METRICS), prefix=bare.cls_token_id)
    for a, b in zip(got, MntpScorer(model, with_cls).score(texts, metric="all")):
        np.testing.assert_allclose(a.logprobs, b.logprobs, atol=ATOL, rtol=0)


def test_no_token_to_read_the_first_from_is_one_line(masked_models):
    from transformers import PreTrainedTokenizerFast

    model, _ = masked_models["xlmr-unigram"]
    backend = tf.unigram(template="$A").backend_tokenizer
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", pad_token="<pad>", mask_token="<mask>")
    with pytest.raises(ModelError) as e:
        MntpScorer(model, tok)
    assert "no CLS or BOS token" in str(e.value) and "kind='masked'" in str(e.value)
    assert "\n" not in str(e.value)


def test_a_causal_model_is_refused_in_one_line(causal_models):
    model, tok = causal_models["gpt2-bpe"]
    with pytest.raises(ModelError, match=r"is a causal LM, but MntpScorer needs a masked one") as e:
        MntpScorer(model, tok)
    assert "\n" not in str(e.value)
    if TINY_GPT2.is_dir():
        with pytest.raises(ModelError) as e:
            pllscore.load(TINY_GPT2, kind="mntp", device="cpu")
        message = str(e.value)
        assert "\n" not in message
        assert "is a causal LM (GPT2LMHeadModel), not a masked one; it cannot be used for mntp scoring" in message


def test_unknown_kind_names_mntp():
    with pytest.raises(pllscore.InputError, match="'seq2seq', 'mntp' or leave it out"):
        pllscore.load(TINY_BERT, kind="hybrid", device="cpu")


def test_masked_scorer_keeps_its_read(tiny_bert):
    model, tok = tiny_bert
    assert MaskedScorer(model, tok).engine.read_offset == 0


def test_predictions_are_the_scores_of_their_words(tiny_bert):
    model, tok = tiny_bert
    scorer = MntpScorer(model, tok)
    text = "The ___ sat on the mat."
    words = scorer.predict(text, k=5, word_tokens=2)[0].words
    assert len(words) == 5
    for w in words:
        filled = text.replace("___", w.word)
        start = text.index("___")
        got = scorer.score(filled, metric="word-l2r", spans=[(start, start + len(w.word))])[0].total
        assert w.logprob == pytest.approx(got, abs=ATOL)
    # level="token": the best tokens at one mask, read one position before it
    tokens = scorer.predict(text, k=3, level="token")[0]
    ids = tok(text.replace("___", tok.mask_token))["input_ids"]
    at = ids.index(tok.mask_token_id)
    with torch.inference_mode():
        logp = torch.log_softmax(reference(model)(input_ids=torch.tensor([ids])).logits[0, at - 1].double(), -1)
    best = torch.topk(logp, 3)
    np.testing.assert_allclose([w.logprob for w in tokens.words], best.values.numpy(), atol=ATOL, rtol=0)
    assert [w.tokens[0] for w in tokens.words] == tok.convert_ids_to_tokens(best.indices.tolist())


def test_predictions_read_the_first_word_from_a_cls_put_in_front(masked_models):
    model, with_cls = masked_models["xlmr-unigram"]
    bare = MntpScorer(model, tf.unigram(template="$A </s>"))
    own = MntpScorer(model, with_cls)
    for level in ("word", "token"):
        a, b = (s.predict("___ cat sat on the mat.", k=4, level=level)[0].words for s in (bare, own))
        assert [w.word for w in a] == [w.word for w in b]
        np.testing.assert_allclose([w.logprob for w in a], [w.logprob for w in b], atol=ATOL, rtol=0)


@pytest.mark.shared
def test_file_run_records_the_kind(tmp_path, shared_bert):
    texts = ["The cat sat on the mat.", "A dog ran."]
    out = tmp_path / "scores.csv"
    pllscore.score_file(texts, out, model=TINY_BERT, kind="mntp", device="cpu", metrics=["original", "word-l2r"])
    import pandas as pd

    frame = pd.read_csv(out)
    scorer = pllscore.load(TINY_BERT, kind="mntp", device="cpu")
    for metric in ("original", "word-l2r"):
        want = [r.total for r in scorer.score(texts, metric=metric)]
        np.testing.assert_allclose(frame[f"{metric.replace('-', '_')}_logprob"], want, atol=ATOL, rtol=0)
    meta = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert '"kind": "mntp"' in json.dumps(meta)


@torch.inference_mode()
def naive_mntp_windows(model, tok, text: str, metric: str, limit: int) -> list[float]:
    """Each target masked in its own [CLS] window [SEP] of ``limit`` tokens, centred on it and kept inside the
    text, and read one position before it in that window; one unpadded pass per copy."""
    model = reference(model)
    enc = tok(text)
    ids, wids = enc["input_ids"], enc.word_ids()
    content, cwids = ids[1:-1], wids[1:-1]
    size = min(limit - 2, len(content))
    out = []
    for t in range(len(content)):
        s = min(max(t - size // 2, 0), len(content) - size)
        w_ids, w_wids = [ids[0], *content[s : s + size], ids[-1]], [None, *cwids[s : s + size], None]
        target = t - s + 1
        x = torch.tensor([w_ids])
        x[0, sorted(oracle.mask_set(metric, target, w_wids))] = tok.mask_token_id
        logits = model(input_ids=x).logits[0, target - 1].double()
        out.append(torch.log_softmax(logits, -1)[w_ids[target]].item())
    return out


@pytest.mark.parametrize("metric", ["original", "sentence-l2r"])
def test_long_texts_in_centred_windows(masked_models, metric):
    model, tok = masked_models["bert-wordpiece"]
    text = " ".join(["The hooligan wrecked the vehicle, and the cat sat on the mat."] * 6)
    scorer = MntpScorer(model, tok, long="window", max_tokens=300)
    assert len(tok(text)["input_ids"]) > scorer.max_length == 64
    got = scorer.score(text, metric=metric)[0].logprobs
    np.testing.assert_allclose(got, naive_mntp_windows(model, tok, text, metric, 64), atol=ATOL, rtol=0)


@pytest.mark.shared
def test_wug_probabilities_equal_the_official_pipelines_mntp_backend(shared_bert):
    """The BabyLM pipeline's mntp backend scores a WUG sentence (the completion is the whole sentence) by
    PLL-original read at t - 1; its predictions.json holds the softmax of the two sentences' scores."""
    from tests.conftest import SHARED

    sample = SHARED.parent / "data" / "babylm_sample"
    official = sample / "official/mntp/tiny-bert-cased/main/zero_shot/mntp/wug_past/wug_past_tense/predictions.json"
    if not official.is_file():
        pytest.skip(f"{official} not found")
    rows = [json.loads(line) for line in (sample / "fast_eval/wug_past_tense/wug_past_tense.jsonl").open()]
    want = json.loads(official.read_text())["wug_past"]["predictions"]
    scorer = pllscore.load(TINY_BERT, kind="mntp", device="cpu")
    pairs = [r["sentences"].split("\t") for r in rows]
    totals = np.array([r.total for r in scorer.score([s for p in pairs for s in p], metric="original")]).reshape(-1, 2)
    assert len(totals) == len(want) > 0
    prob = 1 / (1 + np.exp(totals[:, 1] - totals[:, 0]))
    np.testing.assert_allclose(prob, [w["prob"] for w in want], atol=1e-5, rtol=0)
    assert [p[int(t[1] > t[0])] for p, t in zip(pairs, totals)] == [w["pred"] for w in want]


@pytest.mark.shared
def test_lm_eval_adapter_takes_kind_mntp(shared_bert):
    pytest.importorskip("lm_eval")
    from lm_eval.api.instance import Instance

    from pllscore.integrations.lm_eval import PllscoreLM

    lm = PllscoreLM(pretrained=str(TINY_BERT), kind="mntp", metric="original", device="cpu")
    assert lm.scorer.kind == "mntp"
    pairs = [("The cat", " sat on the mat."), ("", "A dog ran.")]
    got = lm.loglikelihood([Instance("loglikelihood", {}, p, i) for i, p in enumerate(pairs)])
    scorer = pllscore.load(TINY_BERT, kind="mntp", device="cpu")
    for (context, text), (lp, _) in zip(pairs, got):
        want = scorer.score(text, context=context or None, sep="", metric="original", convention="lm-eval")[0]
        assert lp == pytest.approx(want.total, abs=ATOL)
