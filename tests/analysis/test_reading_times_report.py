"""The reading-times figure's fitted line and ``pllscore report`` on a reading-times folder, made by hand (no
model): the line spans the binned means and says it is the partial slope; the report takes the folder and
refuses to overwrite an existing report without ``--force``; ``-q`` prints nothing."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pllscore.errors import InputError
from tests.test_cli import run


def _folder(tmp_path):
    """A reading-times folder made by hand: 400 fitted words, surprisal spread with a long tail."""
    rng = np.random.default_rng(1)
    s = np.r_[rng.uniform(2, 12, 396), [30.0, 35.0, 40.0, 45.0]]
    words = pd.DataFrame({"text_key": ["t"] * 400, "position": range(1, 401), "word": ["w"] * 400, "rt": 300 + 3 * s,
                          "m_a_surprisal_bits": s, "rt_included": True})  # fmt: skip
    fits = pd.DataFrame([["m_a", "rt", 400, 0.01, 0.001, 3.0, 0.1]],
                        columns=["model", "measure", "n", "delta_ll", "delta_ll_se", "coef", "coef_se"])  # fmt: skip
    out = tmp_path / "rt"
    out.mkdir()
    words.to_csv(out / "words.csv", index=False)
    fits.to_csv(out / "fits.csv", index=False)
    (out / "meta.json").write_text(json.dumps({"kind": "reading-times", "command": "pllscore reading-times x"}))
    return out, words, fits


def test_the_fitted_line_spans_the_binned_means_and_says_it_is_the_partial_slope(tmp_path):
    from pllscore.analysis.plotting.backend import pyplot
    from pllscore.analysis.plotting.reading_times import BINS, rt_surprisal_figure

    _, words, fits = _folder(tmp_path)
    fig = rt_surprisal_figure(words, fits)
    ax = fig.axes[0]
    (line,) = [x for x in ax.lines if x.get_gid() == "fit"]
    s = words["m_a_surprisal_bits"].to_numpy()
    edges = np.quantile(s, np.linspace(0, 1, BINS + 1))
    which = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, BINS - 1)
    means = [s[which == b].mean() for b in range(BINS)]
    xs = line.get_xdata()
    assert xs.min() == pytest.approx(min(means)) and xs.max() == pytest.approx(max(means))
    assert xs.max() < 30.0 < s.max()  # not out to the sparse tail
    assert "partial slope: 3.00 ms/bit" in line.get_label()
    pyplot().close(fig)


def test_report_takes_a_reading_times_folder_and_refuses_to_overwrite(tmp_path):
    from pllscore.analysis.report import make_report

    out, _, _ = _folder(tmp_path)
    page, md = make_report([out], tmp_path / "r.html")
    assert "Reading times" in page.read_text() and md.is_file()
    with pytest.raises(InputError, match=r"r\.html' exists; pass --force"):
        make_report([out], tmp_path / "r.html")
    (tmp_path / "r.html").unlink()
    with pytest.raises(InputError, match=r"r\.md' exists"):  # the .md beside it is the report's too
        make_report([out], tmp_path / "r.html")
    make_report([out], tmp_path / "r.html", force=True)
    again = run("report", str(out), "-o", str(tmp_path / "r.html"), "-q")
    assert again.returncode == 1 and again.stderr.count("\n") == 1 and "--force" in again.stderr
    quiet = run("report", str(out), "-o", str(tmp_path / "r.html"), "-q", "--force")
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == ""
    bare = tmp_path / "bare"
    bare.mkdir()
    with pytest.raises(InputError, match="reading-times"):
        make_report([bare], tmp_path / "b.html")
