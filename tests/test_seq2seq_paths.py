"""Every path on an encoder-decoder LM (tiny random T5 and BART saved to folders): ``pllscore score`` with contexts,
``explain``, ``pairs`` and ``blimp``, ``rescore`` with a source column, the lm-eval adapter, the Ray engine, resume
and provenance. Every number equals ``Seq2SeqScorer(...).score(...)`` on the same model."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import pllscore
from pllscore import InputError, ModelError, Seq2SeqScorer
from pllscore.jobs.local import Interrupted, score_file
from pllscore.rescore import rescore
from tests.conftest import TINY_BERT
from tests.test_cli import run

FAMILIES = ["t5-unigram", "bart-bpe"]
TEXTS = ["The cat sat on the mat.", "A dog ran.", "The chef cut the onion.", "She went to the store."]
SOURCES = ["Die Katze sass auf der Matte.", "", "Der Koch schnitt die Zwiebel.", "Die Katze sass auf der Matte."]
LONG = " ".join(["The cat sat on the mat."] * 20)  # over the tiny models' 64 tokens


@pytest.fixture(scope="module")
def folders(seq2seq_models, tmp_path_factory):
    """Each tiny model saved as a folder the CLI loads, with the model and tokenizer loaded from it: the reference
    scorer runs the very model every path loads (the model as built differs from it in float rounding, ~1e-6)."""
    root = tmp_path_factory.mktemp("seq2seq")
    out = {}
    for name, (model, tok) in seq2seq_models.items():
        model.save_pretrained(root / name)
        tok.save_pretrained(root / name)
        loaded = pllscore.load(root / name, device="cpu")
        out[name] = (str(root / name), loaded.model, loaded.tokenizer)
    return out


@pytest.fixture(params=FAMILIES)
def family(request, folders):
    return folders[request.param]


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "in.csv"
    pd.DataFrame({"text": TEXTS, "src": SOURCES}).to_csv(path, index=False)
    return path


def _as_scored(scorer, texts, context=None, **options):
    """The totals of ``texts`` as a path scores them: each distinct (text, context) once, in one call."""
    contexts = context if isinstance(context, list) else [context] * len(texts)
    keys = list(dict.fromkeys(zip(texts, contexts)))
    given = None if all(c is None for _, c in keys) else [c or "" for _, c in keys]
    totals = scorer.score([t for t, _ in keys], context=given, **options).totals
    where = {k: i for i, k in enumerate(keys)}
    return np.array([totals[where[k]] for k in zip(texts, contexts)])


def _one_line(done):
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stderr


# --- pllscore score ----------------------------------------------------------------------------------------


def test_cli_score_with_a_context_column_equals_the_scorer(family, table, tmp_path):
    path, model, tok = family
    out = tmp_path / "out.csv"
    done = run("score", str(table), "-m", path, "--context-column", "src", "--device", "cpu", "-o", str(out), "-q")
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(out, keep_default_na=False)
    ref = Seq2SeqScorer(model, tok).score(TEXTS, context=SOURCES)
    np.testing.assert_allclose(frame["seq2seq_logprob"], ref.totals, rtol=0, atol=1e-9)
    assert frame["n_tokens"].tolist() == [r.n_scored for r in ref]
    meta = json.loads((tmp_path / "out.csv.meta.json").read_text())  # provenance: the kind, eos, the metric
    assert (meta["kind"], meta["eos"], meta["metrics"], meta["context_column"]) == ("seq2seq", True, ["seq2seq"], "src")


def test_cli_score_with_one_context_no_eos_at_token_level(family, tmp_path):
    path, model, tok = family
    out = tmp_path / "tok.parquet"
    done = run("score", *[a for t in TEXTS for a in ("-t", t)], "-m", path, "--context", "Hallo Welt.", "--no-eos",
               "--level", "token", "--device", "cpu", "-o", str(out), "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    frame = pd.read_parquet(out)
    ref = Seq2SeqScorer(model, tok, eos=False).score(TEXTS, context="Hallo Welt.")
    np.testing.assert_allclose(
        frame["seq2seq_logprob"], np.concatenate([r.token_scores for r in ref]), rtol=0, atol=1e-9
    )
    assert "special" not in frame.columns  # eos=False: no special token is scored
    meta = json.loads((tmp_path / "tok.parquet.meta.json").read_text())
    assert meta["eos"] is False and meta["context"] == "Hallo Welt."


def test_cli_score_refuses_a_metric_and_windows_in_one_line(folders, table):
    path = folders["t5-unigram"][0]
    assert "encoder-decoder LM" in _one_line(run("score", str(table), "-m", path, "--metric", "original", "-q"))
    assert "not available for encoder-decoder" in _one_line(
        run("score", "-t", "A dog.", "-m", path, "--long", "window")
    )


@pytest.mark.parametrize(("column", "part"), [("src", "source"), ("text", "text")])
def test_long_source_or_text_is_one_line_and_nothing_is_written(family, tmp_path, column, part):
    path = family[0]
    rows = {"text": ["A dog ran.", "The cat sat.", "A dog ran."], "src": ["Hallo.", "Hallo.", "Hallo."]}
    rows[column][2] = LONG
    pd.DataFrame(rows).to_csv(tmp_path / "in.csv", index=False)
    out = tmp_path / "out.csv"
    done = run("score", str(tmp_path / "in.csv"), "-m", path, "--context-column", "src", "-o", str(out), "-q")
    message = _one_line(done)
    assert f"the {part} of line 4 of" in message and "but the model allows at most 64" in message
    assert "window" not in message and not out.exists()  # every text checked before any is scored


# --- explain ----------------------------------------------------------------------------------------------


def test_explain_refuses_an_encoder_decoder_lm_as_the_masked_one_and_shows_it_beside(folders, shared_bert, tmp_path):
    path, model, tok = folders["t5-unigram"]
    with pytest.raises(ModelError, match="is a seq2seq LM; explain needs a masked LM"):
        pllscore.explain("A dog ran.", Seq2SeqScorer(model, tok))
    assert "explain needs a masked LM" in _one_line(run("explain", "A dog ran.", "-m", path, "--device", "cpu"))
    beside = Seq2SeqScorer(model, tok)
    text = "The cat sat on the mat."
    shown = pllscore.explain(text, shared_bert, causal_model=beside, plot=tmp_path / "e.png")
    direct = beside.score(text)[0]
    assert shown.causal[0].total == direct.total
    words = shown.causal_word_scores(0)  # the </s> is in the total, in no word
    assert np.nansum(words) == pytest.approx(direct.total - direct.logprobs[direct.is_special].sum())
    assert (tmp_path / "e.png").stat().st_size > 0
    done = run("explain", text, "-m", str(TINY_BERT), "--causal-model", path, "--device", "cpu")
    assert done.returncode == 0, done.stderr


# --- pairs and blimp --------------------------------------------------------------------------------------

GOOD = ["The cat sat on the mat.", "A dog ran.", "The keys are on the table."]
BAD = ["The cat sat on mat the.", "A dog run.", "The keys is on the table."]


def test_pairs_cli_scores_each_sentence_with_the_empty_source_or_the_context(family, tmp_path):
    path, model, tok = family
    pd.DataFrame({"good": GOOD, "bad": BAD}).to_csv(tmp_path / "pairs.csv", index=False)
    scorer = Seq2SeqScorer(model, tok)
    for extra, context in (((), None), (("--context", "Ein Satz."), "Ein Satz.")):
        both = _as_scored(scorer, GOOD + BAD, context)  # the distinct sentences, scored together
        out = tmp_path / f"out{len(extra)}"
        done = run("pairs", str(tmp_path / "pairs.csv"), "--good", "good", "--bad", "bad", "-m", path, "--device",
                   "cpu", "-o", str(out), "-q", *extra)  # fmt: skip
        assert done.returncode == 0, done.stderr
        scored = pd.read_parquet(out / "pairs.parquet")
        assert scored["metric"].unique().tolist() == ["seq2seq"]
        np.testing.assert_allclose(scored["good_logprob"], both[: len(GOOD)], rtol=0, atol=1e-9)
        np.testing.assert_allclose(scored["bad_logprob"], both[len(GOOD) :], rtol=0, atol=1e-9)
        meta = json.loads((out / "meta.json").read_text())
        assert meta["runs"][0]["models"][0]["kind"] == "seq2seq" and meta["runs"][0]["models"][0]["eos"] is True
        assert meta["settings"].get("context") == context


def test_blimp_with_no_eos_equals_the_scorer(family, tmp_path):
    from pllscore.eval.runs import run_blimp

    _, model, tok = family
    with open(tmp_path / "p_agreement.jsonl", "w") as f:
        for k, (g, b) in enumerate(zip(GOOD, BAD)):
            f.write(json.dumps({"sentence_good": g, "sentence_bad": b, "UID": "p_agreement", "pairID": str(k),
                                "linguistics_term": "s-selection", "field": "syntax"}) + "\n")  # fmt: skip
    scorer = Seq2SeqScorer(model, tok, eos=False)
    result = run_blimp([scorer], data=tmp_path, output=tmp_path / "out")
    both = _as_scored(scorer, GOOD + BAD)
    np.testing.assert_allclose(result.pairs["good_logprob"], both[: len(GOOD)], rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.pairs["bad_logprob"], both[len(GOOD) :], rtol=0, atol=1e-9)
    assert json.loads((tmp_path / "out" / "meta.json").read_text())["runs"][0]["models"][0]["eos"] is False


# --- rescore: an n-best list of translations of one source each ---------------------------------------------

NBEST = pd.DataFrame(
    {
        "utt_id": ["a", "a", "a", "b", "b", "c"],
        "src": ["Die Katze sass auf der Matte."] * 3 + ["Der Hund lief."] * 2 + ["Der Hund lief."],
        "hyp": [
            "The cat sat on the mat.",
            "The cat sat the mat on.",
            "A cat sat on a mat.",
            "The dog ran.",
            "A dog ran.",
            "The dog ran.",
        ],  # fmt: skip
        "score": [-1.0, -0.5, -0.8, -0.3, -0.2, -0.3],
        "ref": ["The cat sat on the mat."] * 3 + ["The dog ran."] * 3,
    }
)


def test_rescore_scores_each_hypothesis_given_its_source(family, tmp_path):
    path, model, tok = family
    NBEST.to_csv(tmp_path / "nbest.csv", index=False)
    out = tmp_path / "out.csv"
    done = run("rescore", str(tmp_path / "nbest.csv"), "-m", path, "--source-column", "src", "--device", "cpu",
               "-o", str(out), "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(out)
    hyps, srcs = NBEST["hyp"].tolist(), NBEST["src"].tolist()
    np.testing.assert_allclose(
        frame["lm_logprob"], _as_scored(Seq2SeqScorer(model, tok), hyps, srcs), rtol=0, atol=1e-9
    )
    ref = Seq2SeqScorer(model, tok).score(hyps, context=srcs)
    np.testing.assert_allclose(frame["lm_logprob"], ref.totals, rtol=0, atol=1e-5)  # batched otherwise: 1e-5
    assert frame["n_tokens"].tolist() == [r.n_scored for r in ref]
    assert frame.groupby("utt_id")["chosen"].sum().tolist() == [1, 1, 1]
    lm_meta = json.loads((tmp_path / "out.csv.lm.parquet.meta.json").read_text())
    assert (lm_meta["kind"], lm_meta["eos"], lm_meta["context_column"]) == ("seq2seq", True, "source")
    # the same text under another source is another score; without the column, the empty source
    result = rescore(NBEST, model=Seq2SeqScorer(model, tok, eos=False), source_column="src")
    no_eos = _as_scored(Seq2SeqScorer(model, tok, eos=False), hyps, srcs)
    np.testing.assert_allclose(result.frame["lm_logprob"], no_eos, rtol=0, atol=1e-9)
    plain = rescore(NBEST, model=Seq2SeqScorer(model, tok))
    np.testing.assert_allclose(
        plain.frame["lm_logprob"], _as_scored(Seq2SeqScorer(model, tok), hyps), rtol=0, atol=1e-9
    )


def test_rescore_source_column_errors_are_one_line(folders, tmp_path):
    path = folders["t5-unigram"][0]
    bad = NBEST.assign(src=["Die Katze."] + NBEST["src"].tolist()[1:])
    bad.to_csv(tmp_path / "nbest.csv", index=False)
    message = _one_line(run("rescore", str(tmp_path / "nbest.csv"), "-m", path, "--source-column", "src", "-q"))
    assert "utterance 'a'" in message and "2 different sources" in message
    message = _one_line(run("rescore", str(tmp_path / "nbest.csv"), "-m", path, "--source-column", "nope", "-q"))
    assert "no column 'nope'" in message and "--source-column" in message


def test_rescore_interrupted_then_resumed_equals_uninterrupted(folders, tmp_path, monkeypatch):
    _, model, tok = folders["bart-bpe"]
    scorer = Seq2SeqScorer(model, tok)
    opts = dict(model=scorer, source_column="src", chunk_size=2, progress=False)
    whole = rescore(NBEST, tmp_path / "whole.csv", **opts)
    real, calls = scorer.score, {"n": 0}

    def first_chunk_only(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    with monkeypatch.context() as mp:
        mp.setattr(scorer, "score", first_chunk_only)
        with pytest.raises(Interrupted):
            rescore(NBEST, tmp_path / "part.csv", **opts)
    resumed = rescore(NBEST, tmp_path / "part.csv", resume=True, **opts)
    assert (tmp_path / "part.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()
    pd.testing.assert_frame_equal(resumed.frame, whole.frame)
    with pytest.raises(InputError, match="input_sha256"):  # other sources are another input
        rescore(NBEST.assign(src="Etwas anderes."), tmp_path / "part.csv", resume=True, **opts)


# --- resume and provenance of pllscore score -----------------------------------------------------------------


def test_score_file_interrupted_then_resumed_equals_uninterrupted(folders, table, tmp_path, monkeypatch):
    _, model, tok = folders["t5-unigram"]
    scorer = Seq2SeqScorer(model, tok)
    opts = dict(model=scorer, context_column="src", level="word", chunk_size=2, progress=False)
    score_file(table, tmp_path / "whole.tsv", **opts)
    real, seen = scorer.score, {"n": 0}

    def score(*args, **kwargs):
        seen["n"] += 1
        if seen["n"] > 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    with monkeypatch.context() as mp:
        mp.setattr(scorer, "score", score)
        with pytest.raises(Interrupted, match="interrupted after 2 of 4 texts"):
            score_file(table, tmp_path / "part.tsv", **opts)
    summary = score_file(table, tmp_path / "part.tsv", resume=True, **opts)
    assert summary.resumed_from == 2
    assert (tmp_path / "part.tsv").read_bytes() == (tmp_path / "whole.tsv").read_bytes()
    with pytest.raises(InputError, match="eos"):  # eos is recorded: another value is another run
        score_file(table, tmp_path / "part.tsv", resume=True, **{**opts, "model": Seq2SeqScorer(model, tok, eos=False)})


# --- the lm-eval adapter -------------------------------------------------------------------------------------


def test_lm_eval_adapter_equals_hflm_seq2seq(family):
    pytest.importorskip("lm_eval")
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from pllscore.integrations.lm_eval import PllscoreLM

    path, model, tok = family
    pairs = [("The keys are on the table.", " The cat sat."), ("", " A dog ran."), ("Is it ready? ", "Yes it is.")]
    pairs += [("The keys are on the table.", " The dog sat."), ("Question:", " the answer")]
    reqs = [Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)]
    hf = HFLM(pretrained=model, tokenizer=tok, backend="seq2seq", device="cpu", batch_size=2)
    ours = PllscoreLM(pretrained=path, device="cpu")
    expected, got = hf.loglikelihood(reqs, disable_tqdm=True), ours.loglikelihood(reqs, disable_tqdm=True)
    np.testing.assert_allclose([ll for ll, _ in got], [ll for ll, _ in expected], atol=1e-4)
    assert [g for _, g in got] == [bool(g) for _, g in expected]
    scorer, direct = Seq2SeqScorer(model, tok), []  # one call per context, as the adapter groups requests
    for context, text in pairs:
        group = [t for c, t in pairs if c == context]
        direct.append(scorer.score(group, context=context, sep="", convention="lm-eval")[group.index(text)].total)
    np.testing.assert_allclose([ll for ll, _ in got], direct, rtol=0, atol=1e-9)
    rolling = ours.loglikelihood_rolling([Instance("loglikelihood_rolling", {}, (t,), i) for i, t in enumerate(TEXTS)])
    np.testing.assert_allclose(rolling, Seq2SeqScorer(model, tok).score(TEXTS).totals, rtol=0, atol=1e-9)
    with pytest.raises(InputError, match="encoder-decoder LM"):
        PllscoreLM(pretrained=path, device="cpu", metric="original")


# --- the Ray engine ------------------------------------------------------------------------------------------


def test_ray_engine_equals_the_local_engine(folders, table, tmp_path, ray_cluster):
    from tests.ray_session import score_dataset  # keeps its actors between calls

    path, model, tok = folders["bart-bpe"]
    folder = tmp_path / "in"
    folder.mkdir()
    table.rename(folder / "in.csv")
    opts = dict(model=path, context_column="src", eos=False, device="cpu")
    summary = score_dataset(folder, tmp_path / "out", workers=1, block_rows=3, **opts)  # on the run's local Ray
    assert summary.rows == 4 and summary.blocks == 2
    got = pd.read_parquet(tmp_path / "out").sort_values("text_id")
    ref = Seq2SeqScorer(model, tok, eos=False).score(TEXTS, context=SOURCES)
    np.testing.assert_allclose(got["seq2seq_logprob"], ref.totals, rtol=0, atol=1e-5)  # other batches: 1e-5
    meta = json.loads((tmp_path / "out" / "_meta.json").read_text())
    assert (meta["kind"], meta["eos"], meta["metrics"]) == ("seq2seq", False, ["seq2seq"])
