from __future__ import annotations

import pytest

from pllscore.errors import InputError
from pllscore.metrics import METRICS, resolve_metrics


def test_names_aliases_and_all():
    assert resolve_metrics("word-l2r") == ("word-l2r",)
    assert resolve_metrics("within_word_l2r") == ("word-l2r",)
    assert resolve_metrics("Whole_Word") == ("whole-word",)
    assert resolve_metrics("all") == tuple(METRICS)
    assert resolve_metrics(["original", "all"]) == ("original", "word-l2r", "whole-word", "sentence-l2r")


def test_unknown_metric_suggests():
    with pytest.raises(InputError, match="did you mean 'word-l2r'"):
        resolve_metrics("word-lr2")
    with pytest.raises(InputError, match="no metric"):
        resolve_metrics([])
