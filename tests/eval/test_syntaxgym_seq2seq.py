"""SyntaxGym on encoder-decoder models: each sentence given the empty source; special tokens in no region, but
``final_eos`` adds the scored EOS to the last non-empty region. Checked against the teacher-forced oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pllscore
from pllscore import Seq2SeqScorer
from pllscore.errors import InputError
from pllscore.eval.syntaxgym.suite import read_suite
from tests.eval.test_syntaxgym_formula import DATA
from tests.oracle import seq2seq_logprobs

SUITES = [DATA / "agreement.json", DATA / "npz_garden_path.json"]


def independent_regions(model, tok, contents, final_eos, metric):
    sentence = " ".join(c.strip() for c in contents if c.strip())
    logprobs = seq2seq_logprobs(model, tok, sentence)
    enc = tok(sentence, return_offsets_mapping=True, return_special_tokens_mask=True)
    ranges, at = [], 0
    for content in contents:
        text = content.strip()
        if not text:
            ranges.append(None)
            continue
        start = sentence.index(text, at)
        ranges.append((start, start + len(text)))
        at = start + len(text)
    last = max(k for k, r in enumerate(ranges) if r is not None)
    bits = [[] for _ in contents]
    for (a, _), special, lp in zip(enc["offset_mapping"], enc["special_tokens_mask"], logprobs):
        if special:
            continue
        first = next((i for i in range(a, len(sentence)) if not sentence[i].isspace()), None)
        region = last if first is None else next(k for k, r in enumerate(ranges) if r and r[0] <= first < r[1])
        bits[region].append(-lp / math.log(2))
    if final_eos:
        bits[last].append(-logprobs[-1] / math.log(2))  # the closing </s>
    how = {"sum": np.sum, "mean": np.mean}[metric]
    return [float(how(b)) if b else (0.0 if metric == "sum" else math.nan) for b in bits]


@pytest.mark.parametrize("family", ["t5-unigram", "bart-bpe"])
@pytest.mark.parametrize("final_eos", [False, True])
def test_seq2seq_regions_match_the_teacher_forced_oracle(seq2seq_models, family, final_eos):
    model, tok = seq2seq_models[family]
    result = pllscore.syntaxgym(SUITES, Seq2SeqScorer(model, tok), final_eos=final_eos)
    assert set(result.regions["metric"]) == {"seq2seq"}
    for path in SUITES:
        suite = read_suite(path)
        rows = result.regions[result.regions["suite"] == suite.name]
        for item in suite.items:
            for cond in item.conditions:
                mine = rows[(rows["item_number"] == item.number) & (rows["condition_name"] == cond.name)]
                got = mine.sort_values("region_number")["surprisal_bits"].to_numpy()
                expected = independent_regions(model, tok, cond.contents, final_eos, suite.metric)
                np.testing.assert_allclose(got, expected, atol=1e-3, rtol=0, err_msg=f"{path.name} {cond.name}")


def test_final_eos_needs_the_scored_eos(seq2seq_models):
    model, tok = seq2seq_models["t5-unigram"]
    with pytest.raises(InputError, match="drop --no-eos"):
        pllscore.syntaxgym(SUITES[:1], Seq2SeqScorer(model, tok, eos=False), final_eos=True)


def test_cli_on_an_encoder_decoder_folder(tmp_path, seq2seq_models):
    import pandas as pd

    from tests.test_cli import run

    model, tok = seq2seq_models["bart-bpe"]
    model.save_pretrained(tmp_path / "bart")
    tok.save_pretrained(tmp_path / "bart")
    out = tmp_path / "out"
    done = run("syntaxgym", str(SUITES[0]), "-m", str(tmp_path / "bart"), "-o", str(out), "-q", "--final-eos")
    assert done.returncode == 0, done.stderr
    regions = pd.read_csv(out / "regions.csv", keep_default_na=False)
    direct = pllscore.syntaxgym(SUITES[0], Seq2SeqScorer(model, tok), final_eos=True).regions
    np.testing.assert_allclose(
        regions["surprisal_bits"].to_numpy(float), direct["surprisal_bits"].to_numpy(float), atol=1e-9
    )
    assert set(regions["metric"]) == {"seq2seq"}
