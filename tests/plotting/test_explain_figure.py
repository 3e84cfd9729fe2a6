"""The explanation figure: written in the asked format, one bar per token and metric."""

from __future__ import annotations

import pytest

from pllscore import CausalScorer, InputError, MaskedScorer, explain
from pllscore.analysis.plotting.explain import draw_explanation

TEXTS = ["The hooligan wrecked the vehicle.", "The cat sat on the mat."]


@pytest.fixture(scope="module")
def explanation(masked_models, causal_models):
    return explain(
        TEXTS, MaskedScorer(*masked_models["bert-wordpiece"]), causal_model=CausalScorer(*causal_models["gpt2-bpe"])
    )


def test_one_bar_per_token_and_metric(explanation):
    import matplotlib.pyplot as plt

    fig = draw_explanation(explanation)
    try:
        axes = fig.get_axes()
        assert len(axes) == 2 * len(TEXTS)  # a masked panel and a causal panel per text
        for i in range(len(TEXTS)):
            masked_ax, causal_ax = axes[2 * i], axes[2 * i + 1]
            ref = explanation.sentence(i)[0]
            bars = [p for p in masked_ax.patches if (p.get_gid() or "").startswith("bar-")]
            assert len(bars) == ref.n_tokens * 4
            for metric in ("original", "word-l2r", "whole-word", "sentence-l2r"):
                assert sum(p.get_gid() == f"bar-{metric}" for p in bars) == ref.n_tokens
            heights = sorted(p.get_height() for p in bars if p.get_gid() == "bar-original")
            assert heights == pytest.approx(sorted(explanation.sentence(i)[0].token_scores.tolist()))
            assert len(causal_ax.patches) == explanation.causal[i].n_tokens
            assert [t.get_text() for t in masked_ax.get_xticklabels()] == list(ref.pieces)
    finally:
        plt.close(fig)


@pytest.mark.parametrize(("suffix", "magic"), [(".png", b"\x89PNG"), (".pdf", b"%PDF"), (".svg", b"<?xml")])
def test_formats(explanation, tmp_path, suffix, magic):
    path = tmp_path / f"fig{suffix}"
    explanation.plot(path)
    assert path.read_bytes().startswith(magic) and path.stat().st_size > 1000


def test_bad_suffix(explanation, tmp_path):
    with pytest.raises(InputError, match="use a .png, .svg or .pdf"):
        explanation.plot(tmp_path / "fig.gif")


def test_table_groups_by_word_with_totals(explanation):
    table = explanation.table(0)
    assert table["level"].tolist().count("sentence") == 1
    word_rows = table[table["level"] == "word"]
    assert len(word_rows) == 1  # hooligan = ho ##oli ##gan is the only multi-token word
    total = table[table["level"] == "sentence"]
    assert total["word_l2r_logprob"].iloc[0] == pytest.approx(explanation.sentence(0)[1].total)
    assert total["causal_logprob"].iloc[0] == pytest.approx(explanation.causal[0].total)
    # causal word scores add up to the causal sentence total
    assert explanation.causal_word_scores(0).sum() == pytest.approx(explanation.causal[0].total)
