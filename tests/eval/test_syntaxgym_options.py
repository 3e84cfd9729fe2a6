"""SyntaxGym under the lm-eval convention and with the final EOS: every region value of the tiny causal model
against an independent computation with transformers alone (the model run by hand, its tokenizer's offsets,
regions found by ``str.index``), every prediction against SyntaxGym's own grammar; the options on the command
line, in the provenance and in resume."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import pllscore
from pllscore import InputError
from pllscore.eval.syntaxgym.suite import read_suite
from tests.conftest import TINY_GPT2
from tests.eval.test_syntaxgym_formula import DATA, reference
from tests.eval.test_syntaxgym_scoring import AGGREGATE, SUITES
from tests.test_cli import run

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def hf_gpt2():
    """tiny-gpt2 loaded by transformers itself, not by pllscore."""
    if not TINY_GPT2.is_dir():
        pytest.skip("shared models not found")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    return AutoTokenizer.from_pretrained(TINY_GPT2), AutoModelForCausalLM.from_pretrained(TINY_GPT2).eval()


def by_hand(hf, contents, suite_metric, convention, final_eos):
    """Region values by hand: BOS, then the sentence's tokens (``" " + sentence`` under lm-eval, offsets moved
    back into the sentence), then the EOS token with ``final_eos``, in one forward pass; each token to the region
    of its first non-space character in the sentence, the EOS to the last non-empty region."""
    import torch

    tok, model = hf
    sentence = " ".join(c.strip() for c in contents if c.strip())
    lead = " " if convention == "lm-eval" else ""
    enc = tok(lead + sentence, return_offsets_mapping=True, add_special_tokens=False)
    ids = [tok.bos_token_id, *enc["input_ids"], *([tok.eos_token_id] if final_eos else [])]
    with torch.no_grad():
        logprobs = model(torch.tensor([ids])).logits[0].double().log_softmax(-1)
    bits = [-logprobs[i - 1, ids[i]].item() / math.log(2) for i in range(1, len(ids))]
    ranges, at = [], 0
    for content in contents:
        text = content.strip()
        start = sentence.index(text, at) if text else None
        ranges.append(None if start is None else (start, start + len(text)))
        at = at if start is None else start + len(text)
    per_region = [[] for _ in contents]
    for (start, _), b in zip(enc["offset_mapping"], bits):
        first = next(i for i in range(max(start - len(lead), 0), len(sentence)) if not sentence[i].isspace())
        (region,) = [k for k, r in enumerate(ranges) if r is not None and r[0] <= first < r[1]]
        per_region[region].append(b)
    if final_eos:
        per_region[max(k for k, r in enumerate(ranges) if r is not None)].append(bits[-1])
    empty = 0.0 if suite_metric == "sum" else math.nan
    return [float(AGGREGATE[suite_metric](b)) if b else empty for b in per_region], [len(b) for b in per_region]


@pytest.mark.parametrize(("convention", "final_eos"), [("lm-eval", False), ("paper", True), ("lm-eval", True)])
def test_region_values_match_a_computation_by_hand(shared_gpt2, hf_gpt2, convention, final_eos):
    result = pllscore.syntaxgym(SUITES, shared_gpt2, convention=convention, final_eos=final_eos)
    for path in SUITES:
        suite = read_suite(path)
        rows = result.regions[result.regions["suite"] == suite.name]
        preds = result.predictions[result.predictions["suite"] == suite.name]
        for item in suite.items:
            values = {}
            for cond in item.conditions:
                mine = rows[(rows["item_number"] == item.number) & (rows["condition_name"] == cond.name)]
                mine = mine.sort_values("region_number")
                expected, counts = by_hand(hf_gpt2, cond.contents, suite.metric, convention, final_eos)
                where = f"{path.name} item {item.number} {cond.name}"
                np.testing.assert_allclose(mine["surprisal_bits"], expected, atol=1e-3, rtol=0, err_msg=where)
                assert mine["n_tokens"].tolist() == counts, where
                values.update({(cond.name, n): v for n, v in zip(cond.numbers, expected)})
            for i, formula in enumerate(suite.predictions):
                got = preds[(preds["item_number"] == item.number) & (preds["prediction_id"] == i)]["result"].item()
                theirs = reference(formula.text.replace("[", "(").replace("]", ")"))
                assert bool(got) == bool(theirs(values)), (path.name, item.number, i)


def test_the_options_change_what_they_say_and_nothing_else(shared_gpt2):
    paper = pllscore.syntaxgym(DATA / "agreement.json", shared_gpt2).regions
    eos = pllscore.syntaxgym(DATA / "agreement.json", shared_gpt2, final_eos=True).regions
    last = eos["region_number"] == eos.groupby(["item_number", "condition_name"])["region_number"].transform("max")
    # agreement's last region (the period) is never empty: only it changes, by one token and a positive surprisal
    pd.testing.assert_frame_equal(eos[~last], paper[~last])
    assert (eos[last]["n_tokens"].to_numpy() == paper[last]["n_tokens"].to_numpy() + 1).all()
    assert (eos[last]["surprisal_bits"].to_numpy() > paper[last]["surprisal_bits"].to_numpy()).all()
    lm_eval = pllscore.syntaxgym(DATA / "agreement.json", shared_gpt2, convention="lm-eval").regions
    # the first region's first token is "ĠThe" instead of "The"; the other regions keep their tokens
    assert (lm_eval["n_tokens"] == paper["n_tokens"]).all()
    assert not np.allclose(lm_eval["surprisal_bits"], paper["surprisal_bits"])


def test_final_eos_is_refused_for_a_masked_model(shared_bert):
    with pytest.raises(InputError, match="--final-eos adds a causal or encoder-decoder LM's end-of-sentence surprisal"):
        pllscore.syntaxgym(DATA / "agreement.json", shared_bert, final_eos=True)


def test_cli_convention_and_final_eos_are_recorded_and_resume_tells_them_apart(tmp_path, shared_gpt2):
    out = tmp_path / "out"
    args = ("syntaxgym", str(DATA / "agreement.json"), "-m", str(TINY_GPT2), "-o", str(out))
    done = run(*args, "--convention", "lm-eval", "--final-eos")
    assert done.returncode == 0, done.stderr
    (record,) = json.loads((out / "meta.json").read_text())["runs"]
    assert record["settings"]["final_eos"] is True and record["settings"]["text"]["convention"] == "lm-eval"
    expected = pllscore.syntaxgym(DATA / "agreement.json", shared_gpt2, convention="lm-eval", final_eos=True)
    got = pd.read_csv(out / "regions.csv", keep_default_na=False)
    np.testing.assert_allclose(got["surprisal_bits"], expected.regions["surprisal_bits"], atol=1e-9)
    done = run(*args, "--convention", "lm-eval", "--final-eos")
    assert "suite agreement: already in" in done.stderr
    for other in (("--convention", "lm-eval"), ("--final-eos",)):  # made otherwise: scored again, rows replaced
        done = run(*args, *other)
        assert done.returncode == 0 and "already in" not in done.stderr, done.stderr
    regions = pd.read_csv(out / "regions.csv", keep_default_na=False)
    paper_eos = pllscore.syntaxgym(DATA / "agreement.json", shared_gpt2, final_eos=True).regions
    np.testing.assert_allclose(regions["surprisal_bits"], paper_eos["surprisal_bits"], atol=1e-9)


def test_cli_unknown_engine_is_one_line():
    if not TINY_GPT2.is_dir():
        pytest.skip("shared models not found")
    done = run("syntaxgym", str(DATA / "agreement.json"), "-m", str(TINY_GPT2), "--engine", "spark", "-q")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == "error: unknown engine 'spark'; choose local or ray"
