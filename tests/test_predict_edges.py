"""predict at its edges, against independent references: candidates of several tokenizer words are the chain
over all their tokens (one forward per masked copy); the token level reads a glued slot as the fill-mask
pipeline does; duplicates, missing cells, text ids under skip_empty; the search's step budget says when it cut;
texts at the model's limit, glued slots, empty input and Ctrl-C are one line or a correct output."""

from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from pllscore import InputError, MaskedScorer
from pllscore.jobs.predict import predict_file
from pllscore.results.predictions import PredictionWarning
from pllscore.scoring.predict import top_words

pytestmark = pytest.mark.shared

MULTI = ["New York", "dog", "dog's", "e-mail", "ice cream", "(dog)", "dog,"]


def chain(model, tok, left: str, word: str, right: str) -> float:
    """The documented chain, written out: the word's tokens (those that start in its characters, a lone space
    marker among them) all masked, then read left to right, each with the later ones still masked: one forward
    pass per masked copy."""
    text = left + word + right
    enc = tok(text, return_offsets_mapping=True)
    ids, offsets = enc["input_ids"], enc["offset_mapping"]
    start, stop = len(left), len(left) + len(word)
    special = set(tok.all_special_ids)
    at = [j for j, (a, _) in enumerate(offsets) if ids[j] not in special and start <= a < stop]
    total = 0.0
    for n, j in enumerate(at):
        copy = list(ids)
        for m in at[n:]:
            copy[m] = tok.mask_token_id
        with torch.no_grad():
            logits = model(torch.tensor([copy])).logits[0, j].double()
        total += float(torch.log_softmax(logits, -1)[ids[j]])
    return total


@pytest.mark.parametrize("frame", ["___ is a good idea.", "She moved to ___ last year."])
def test_masked_candidates_are_the_chain_over_all_their_tokens(shared_bert, frame):
    (p,) = shared_bert.predict(frame, candidates=MULTI)
    left, right = frame.split("___")
    want = [chain(shared_bert.model, shared_bert.tokenizer, left, w, right) for w in MULTI]
    np.testing.assert_allclose([w.logprob for w in p.words], want, atol=1e-5, rtol=0)
    assert abs(p.covered - sum(math.exp(v) for v in want)) < 1e-6
    assert [w.rank for w in p.words] == list(np.argsort(np.argsort(-np.array(want))) + 1)


def test_masked_candidates_chain_on_a_bpe_tokenizer(masked_models):
    model, tok = masked_models["roberta-bpe"]
    frame = "The cat sat on the ___ with a knife."
    (p,) = MaskedScorer(model, tok).predict(frame, candidates=MULTI)
    left, right = frame.split("___")
    want = [chain(model, tok, left, w, right) for w in MULTI]
    np.testing.assert_allclose([w.logprob for w in p.words], want, atol=1e-5, rtol=0)


@pytest.mark.parametrize("frame", ["The ___s are here.", "It was un___able.", "The chef tasted the ___ before."])
def test_token_level_reads_the_slot_as_the_fill_mask_pipeline(shared_bert, frame):
    from transformers import pipeline

    tok = shared_bert.tokenizer
    (p,) = shared_bert.predict(frame, level="token", k=5)
    fill = pipeline("fill-mask", model=shared_bert.model, tokenizer=tok, top_k=5, device="cpu")
    given = frame.replace("___", tok.mask_token)
    want = fill(given)
    assert [w.tokens[0] for w in p.words] == [tok.convert_ids_to_tokens(r["token"]) for r in want]
    np.testing.assert_allclose([w.prob for w in p.words], [r["score"] for r in want], atol=1e-6, rtol=0)
    enc = tok(given, return_tensors="pt")
    at = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0, 0])
    with torch.no_grad():
        probs = torch.softmax(shared_bert.model(**enc).logits[0, at].double(), -1)
    assert abs(p.entropy - float(-(probs * probs.log()).sum())) < 1e-5


def test_glued_slots_are_refused_for_words_in_one_line(shared_bert, shared_gpt2):
    for scorer, text in [(shared_bert, "The ___s are here."), (shared_bert, "un___able"), (shared_gpt2, "un___")]:
        for options in ({"k": 3}, {"candidates": ["dog"]}):
            with pytest.raises(InputError, match="glued to the text around it") as err:
                scorer.predict(text, **options)
            assert "\n" not in str(err.value) and "level='token'" in str(err.value)
    (tok,) = shared_gpt2.predict("un___", level="token", k=3)  # the next token right after "un"
    ids = shared_gpt2.tokenizer("un")["input_ids"]
    with torch.no_grad():
        logits = shared_gpt2.model(torch.tensor([[shared_gpt2.tokenizer.bos_token_id, *ids]])).logits[0, -1]
    best = torch.topk(torch.softmax(logits.double(), -1), 3)
    np.testing.assert_allclose([w.prob for w in tok.words], best.values.numpy(), atol=1e-6, rtol=0)
    (ok,) = shared_bert.predict("After dinner, ___, she left.", k=2, word_tokens=1)  # punctuation is apart
    assert len(ok.words) == 2


def test_duplicate_candidates_count_once_and_say_so(shared_bert):
    with pytest.warns(PredictionWarning, match="1 candidates repeat a word of the same text"):
        (p,) = shared_bert.predict("The ___ barked.", candidates=["dog", " dog ", "cat"])
    assert [w.word for w in p.words] == ["dog", "cat"]
    (once,) = shared_bert.predict("The ___ barked.", candidates=["dog", "cat"])
    assert p.covered == pytest.approx(once.covered, rel=1e-12)


def test_a_missing_candidate_cell_is_refused_naming_its_line(shared_bert, tmp_path):
    path = tmp_path / "responses.csv"
    path.write_text("text_id,word\n0,dog\n0,\n1,cat\n")
    with pytest.raises(InputError, match="line 3 of") as err:
        predict_file(
            ["The ___ barked.", "A ___ ran."], None, model=shared_bert, candidates=str(path), stream=io.StringIO()
        )
    assert "\n" not in str(err.value)
    with pytest.raises(InputError, match="not a word"):
        shared_bert.predict("The ___ barked.", candidates=[["dog", None]])


def test_candidate_text_ids_are_input_rows_under_skip_empty(shared_gpt2, tmp_path):
    frames = tmp_path / "frames.csv"
    pd.DataFrame({"text": ["The chef tasted the", "", "She went to the"]}).to_csv(frames, index=False)
    responses = tmp_path / "responses.csv"
    pd.DataFrame({"text_id": [0, 2, 2], "word": ["soup", "store", "park"]}).to_csv(responses, index=False)
    out = io.StringIO()
    predict_file(frames, None, model=shared_gpt2, candidates=str(responses), skip_empty=True, stream=out)
    got = pd.read_csv(io.StringIO(out.getvalue()), sep="\t")
    assert got["text_id"].tolist() == [0, 2, 2]
    assert got["word"].tolist() == ["soup", "store", "park"]
    want = shared_gpt2.predict(["The chef tasted the", "She went to the"], candidates=[["soup"], ["store", "park"]])
    np.testing.assert_allclose(got["logprob"], [w.logprob for p in want for w in p.words], atol=1e-5)


def test_a_search_cut_by_its_step_budget_says_so(shared_bert):
    """(The default budget cuts this search too, after 13 s: 0 of 10 words.)"""
    with pytest.warns(PredictionWarning, match="stopped at their step budget"):
        p = top_words(shared_bert, ["After dinner, ___, she left."], k=10, word_tokens=3, shortest=3, max_steps=40)
    assert len(p[0].words) < 10 and not p[0].complete
    frame = p.to_frame()
    assert not frame["complete"].any() and len(frame) == max(1, len(p[0].words))
    full = shared_bert.predict("After dinner, ___, she left.", k=3, word_tokens=1)
    assert full[0].complete and full.to_frame()["complete"].all()


def _text_of(tok, n: int, special: int) -> str:
    """A masked frame of exactly ``n`` tokens with a one-token word in its slot (special tokens included)."""
    words = ["the"] * (n - special - 2)
    text = " ".join(words) + " ___ ."
    assert len(tok(text.replace("___", "a"))["input_ids"]) == n
    return text


def test_texts_at_the_model_limit_are_one_line(shared_bert, shared_gpt2):
    text = _text_of(shared_bert.tokenizer, shared_bert.max_length, 2)
    (p,) = shared_bert.predict(text, k=2, word_tokens=1)  # one token fits
    assert len(p.words) == 2
    with pytest.raises(InputError, match="lower word_tokens") as err:
        shared_bert.predict(text, k=2, word_tokens=3)
    assert "\n" not in str(err.value)
    context = " ".join(["the"] * (shared_gpt2.max_length - 1))  # with its BOS: the model's length
    with pytest.raises(InputError) as err:
        shared_gpt2.predict(context, k=50, word_tokens=2)
    assert "window" not in str(err.value) and "\n" not in str(err.value)
    context = " ".join(["the"] * (shared_gpt2.max_length - 2))  # 127 tokens with its BOS: the IndexError
    with pytest.raises(InputError, match="lower word_tokens"):
        shared_gpt2.predict(context, k=50, word_tokens=2)
    (p,) = shared_gpt2.predict(context, k=50, word_tokens=1)  # a word of one token fits: 128 tokens
    assert len(p.words) == 50


def test_empty_input_writes_the_header(shared_bert, tmp_path):
    empty = tmp_path / "frames.csv"
    empty.write_text("text\n")
    out = io.StringIO()
    summary = predict_file(empty, None, model=shared_bert, stream=out)
    assert "the input held no text: the output has its columns and no row" in summary.line()
    assert out.getvalue().split("\n")[0].split("\t")[:3] == ["text_id", "text", "rank"]
    predict_file(empty, tmp_path / "out.csv", model=shared_bert)
    assert pd.read_csv(tmp_path / "out.csv").empty and "complete" in pd.read_csv(tmp_path / "out.csv").columns


def test_ctrl_c_names_resume_and_resume_continues(shared_bert, tmp_path, monkeypatch):
    from pllscore.jobs.local import Interrupted

    frames = ["The chef tasted the ___ before serving it.", "She went to the ___ yesterday."]
    scorer = MaskedScorer(shared_bert.model, shared_bert.tokenizer)
    real, calls = scorer.predict, []

    def stopping(texts, **options):
        calls.append(texts)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(texts, **options)

    monkeypatch.setattr(scorer, "predict", stopping)
    with pytest.raises(Interrupted, match="--resume") as err:
        predict_file(frames, tmp_path / "p.tsv", model=scorer, k=2, chunk_size=1)
    assert "after 1 of 2 texts" in str(err.value)
    monkeypatch.setattr(scorer, "predict", real)
    done = predict_file(frames, tmp_path / "p.tsv", model=scorer, k=2, chunk_size=1, resume=True)
    assert done.resumed_from == 1
    assert pd.read_csv(tmp_path / "p.tsv", sep="\t")["text_id"].tolist() == [0, 0, 1, 1]


def test_chunk_errors_name_the_input_row(shared_bert):
    with pytest.raises(InputError, match=r"^text 2 'The cat sat\.'"):
        predict_file(
            ["The ___ sat.", "A ___ ran.", "The cat sat."], None, model=shared_bert, chunk_size=2, stream=io.StringIO()
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an ordinary run warns of nothing
        shared_bert.predict("The ___ sat.", k=2)
