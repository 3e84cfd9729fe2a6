"""The BabyLM sentence tasks' pure logic, hand-worked: which tokens each backend reads, the groupings, the best
temperature, and the official report and predictions."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pllscore.plan.babylm_reads import Item, Read, Specials, overlapping, plan_reads, sentence_reads
from pllscore.plan.babylm_results import best, choose, outcome, predictions_json, report_text

# a toy tokenizer: "ab cd" -> ab, cd (offsets trimmed of the space, as GPT-2's and BERT's are)
TOKENS = {"ab cd": ([10, 11], [(0, 2), (3, 5)]), "ab ef": ([10, 12], [(0, 2), (3, 5)])}
BERT = {k: ([1, *ids, 2], [(0, 0), *off, (0, 0)]) for k, (ids, off) in TOKENS.items()}
PLAIN = {"ab": ([10], []), " cd": ([11], []), "cd": ([11], []), "ab cd": ([10, 11], [])}


def _item(sentences, completions, uid="u", prefixes=None, groups=None, ratio=None):  # type: ignore[no-untyped-def]
    prefixes = prefixes or (None,) * len(sentences)
    return Item(tuple(sentences), tuple(prefixes), tuple(completions), uid, groups or (("UID", uid),), ratio)


def test_overlapping_tokens_end_after_the_completion_start() -> None:
    offsets = [(0, 0), (0, 3), (4, 7), (7, 8), (0, 0)]
    assert overlapping(offsets, 4) == [2, 3]
    assert overlapping(offsets, 0) == [1, 2, 3]  # special tokens (0, 0) never
    assert overlapping(offsets, 3) == [2, 3]  # (0, 3) ends at the start: not the completion's


def test_causal_never_scores_the_first_token() -> None:
    enc = TOKENS.__getitem__
    whole = sentence_reads("causal", None, "ab cd", "ab cd", enc, enc, Specials())
    assert whole == [Read((10, 11), None, (0,), (11,))]  # "ab" is never scored: nothing precedes it
    tail = sentence_reads("causal", None, "ab cd", " cd", enc, enc, Specials())
    assert tail == [Read((10, 11), None, (0,), (11,))]


def test_mlm_and_mntp_copies() -> None:
    enc = BERT.__getitem__
    s = Specials(mask=3, cls=1, eos=2)
    mlm = sentence_reads("mlm", None, "ab cd", "ab cd", enc, enc, s)
    assert mlm == [Read((1, 3, 11, 2), None, (1,), (10,)), Read((1, 10, 3, 2), None, (2,), (11,))]
    mntp = sentence_reads("mntp", None, "ab cd", " cd", enc, enc, s)
    assert mntp == [Read((1, 10, 3, 2), None, (1,), (11,))]  # read one position before the mask
    # no CLS and no BOS: the first token has no position before it and is skipped
    bare = {"ab cd": TOKENS["ab cd"]}.__getitem__
    assert sentence_reads("mntp", None, "ab cd", "ab cd", bare, bare, Specials(mask=3)) == [
        Read((10, 3), None, (0,), (11,))
    ]


def test_enc_dec_inputs() -> None:
    enc = TOKENS.__getitem__
    t5 = Specials(eos=2, extra=99)  # no mask, no BOS: the extra id stands for both
    mask = sentence_reads("enc_dec_mask", None, "ab cd", " cd", enc, enc, t5)
    assert mask == [Read((10, 99), (99,), (0,), (11,))]
    bart = Specials(mask=4, bos=0, cls=0, eos=2)
    assert sentence_reads("enc_dec_mask", None, "ab cd", " cd", enc, enc, bart) == [Read((10, 4), (0, 4), (1,), (11,))]
    prefix = sentence_reads("enc_dec_prefix", "ab", "ab cd", " cd", enc, PLAIN.__getitem__, bart)
    assert prefix == [Read((0, 10, 4, 2), (0, 4), (1,), (11,))]  # decoder: BOS, MASK, completion[:-1]
    whole = sentence_reads("enc_dec_prefix", None, "ab cd", "ab cd", enc, PLAIN.__getitem__, t5)
    assert whole == [Read((99, 2), (99, 99, 10), (1, 2), (10, 11))]
    with pytest.raises(ValueError, match="mask"):
        sentence_reads("mlm", None, "ab cd", "ab cd", enc, enc, Specials())


def test_plan_reads_deduplicates_and_pairs_prefixes() -> None:
    enc = TOKENS.__getitem__
    items = [_item(["ab cd", "ab ef"], ["ab cd", "ab ef"]), _item(["ab cd", "ab cd"], ["ab cd", "ab cd"])]
    plan = plan_reads(items, "causal", enc, enc, Specials())
    assert len(plan.reads) == 2
    assert plan.sentences == (((0,), (1,)), ((0,), (0,)))
    wug = _item(["ab cd", "ab ef"], ["ab cd", "ab ef"], prefixes=(None,))
    prefix = plan_reads([wug], "enc_dec_prefix", enc, PLAIN.__getitem__, Specials(mask=4, bos=0))
    assert len(prefix.sentences[0]) == 1  # one prefix: one sentence, as the official zip gives


def test_choose_takes_the_first_of_ties_and_the_first_share() -> None:
    choices, firsts = choose([np.array([-1.0, -1.0], np.float32), np.array([-2.0, -1.0, -1.0], np.float32)])
    assert choices.tolist() == [0, 1]
    assert firsts[0] == pytest.approx(0.5)
    assert firsts[1] == pytest.approx(np.exp(-2) / (np.exp(-2) + 2 * np.exp(-1)))


def test_groupings_and_average() -> None:
    items = [
        _item(["a", "b"], ["a", "b"], "p1", groups=(("field", "syntax"), ("UID", "p1"), ("linguistics_term", "t"))),
        _item(["a", "b"], ["a", "b"], "p1", groups=(("field", "syntax"), ("UID", "p1"), ("linguistics_term", "t"))),
        _item(["a", "b"], ["a", "b"], "p2", groups=(("field", "morph"), ("UID", "p2"), ("linguistics_term", "t"))),
    ]
    scores = [np.array([0.0, -1.0]), np.array([-1.0, 0.0]), np.array([0.0, -1.0])]
    o = outcome(items, scores, "blimp", 1.0)
    assert o.groups == {
        "field": {"syntax": 50.0, "morph": 100.0},
        "UID": {"p1": 50.0, "p2": 100.0},
        "linguistics_term": {"t": 100.0 * 2 / 3},
    }
    assert o.average == 75.0  # the mean of the UIDs, not of the items (66.67)
    assert report_text(o) == (
        "TEMPERATURE: 1.00\n\n### FIELD ACCURACY\nsyntax: 50.00\nmorph: 100.00\n\n### UID ACCURACY\np1: 50.00\n"
        "p2: 100.00\n\n### LINGUISTICS_TERM ACCURACY\nt: 66.67\n\n### AVERAGE ACCURACY\n75.00\n\n"
    )


def test_entity_tracking_averages_its_splits() -> None:
    uids = ["regular_0_ops", "regular_1_ops", "regular_1_ops", "move_contents_0_ops"]
    items = [_item(["a", "b"], ["a", "b"], u) for u in uids]
    scores = [np.array([0.0, -1.0]), np.array([-1.0, 0.0]), np.array([0.0, -1.0]), np.array([-1.0, 0.0])]
    o = outcome(items, scores, "entity_tracking", 1.0)
    assert o.groups["UID"] == {
        "regular_0_ops": 100.0,
        "regular_1_ops": 50.0,
        "move_contents_0_ops": 0.0,
        "regular": 75.0,
        "move_contents": 0.0,
    }
    assert o.average == 37.5


def test_wug_spearman_and_prediction_shares() -> None:
    items = [_item(["x1", "y1"], ["x1", "y1"], "wug_past", ratio=r) for r in (0.1, 0.5, 0.9)]
    scores = [np.array([-3.0, -1.0], np.float32), np.array([-1.0, -1.0], np.float32), np.array([0.0, -2.0], np.float32)]
    o = outcome(items, scores, "wug_past", 1.0)
    assert o.average == pytest.approx(1.0) and o.groups == {"UID": {"avg": o.average}}
    assert report_text(o).splitlines()[2:4] == ["### UID SPEARMAN'S RHO", "avg: 1.00"]
    preds = json.loads(predictions_json(items, o))["wug_past"]["predictions"]
    assert [p["id"] for p in preds] == ["wug_past_0", "wug_past_1", "wug_past_2"]
    assert [p["pred"] for p in preds] == ["y1", "x1", "x1"]
    assert preds[1]["prob"] == pytest.approx(0.5)


def test_predictions_count_per_uid_and_comps_shows_sentences() -> None:
    items = [
        Item(("A b c", "D b c"), ("A", "D"), ("b c", "b c"), "base", (("UID", "base"),), predict_sentences=True),
        Item(("E b c", "F b c"), ("E", "F"), ("b c", "b c"), "wugs", (("UID", "wugs"),), predict_sentences=True),
        Item(("G b c", "H b c"), ("G", "H"), ("b c", "b c"), "base", (("UID", "base"),), predict_sentences=True),
    ]
    o = outcome(items, [np.array([0.0, -1.0]), np.array([-1.0, 0.0]), np.array([-1.0, 0.0])], "comps", 1.0)
    text = predictions_json(items, o)
    assert text == (
        '{"base": {"predictions": [{"id": "base_0", "pred": "A b c"}, {"id": "base_1", "pred": "H b c"}]}, '
        '"wugs": {"predictions": [{"id": "wugs_0", "pred": "F b c"}]}}'
    )


def test_best_temperature_is_the_first_strictly_better() -> None:
    items = [_item(["a", "b"], ["a", "b"])]
    right, wrong = [np.array([0.0, -1.0])], [np.array([-1.0, 0.0])]
    outs = [outcome(items, s, "blimp", t) for s, t in ((wrong, 0.5), (right, 1.0), (right, 1.5))]
    assert best(outs).temperature == 1.0
    nan = [
        outcome([_item(["a"], ["a"], ratio=r) for r in (0.1, 0.2)], [np.array([0.0])] * 2, "wug_adj", t)
        for t in (0.5, 1.0)
    ]
    assert np.isnan(nan[0].average) and best(nan).temperature == 0.5  # none beats -1: the first


def test_official_widths_pad_causal_rows_per_batch_of_items() -> None:
    """A causal row is as wide as its batch's widest sentence of the same index (batches of items in order);
    a masked sentence's row is its own reads."""
    enc = {"ab cd": ([10, 11], [(0, 2), (3, 5)]), "ab cd ef": ([10, 11, 12], [(0, 2), (3, 5), (6, 8)])}.__getitem__
    items = [
        _item(["ab cd", "ab cd ef"], ["ab cd", "ab cd ef"]),
        _item(["ab cd ef", "ab cd"], ["ab cd ef", "ab cd"]),
        _item(["ab cd", "ab cd"], ["ab cd", "ab cd"]),
    ]
    plan = plan_reads(items, "causal", enc, enc, Specials(), official_batch_size=2)
    assert plan.widths == ((2, 2), (2, 2), (1, 1))
    masked = plan_reads(items, "mlm", enc, enc, Specials(mask=3), official_batch_size=2)
    assert masked.widths == ((2, 3), (3, 2), (2, 2))
