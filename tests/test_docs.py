"""The documentation site: it builds strictly, and every example on its pages runs as written.

Each page under docs/ is one test per language: its ```python blocks run in order in one
namespace (a page sets up its own scorers in its first block), its ```r blocks in order in one R
session with the R package of r/ (tests/r_package.py; skipped in one line where R is not installed),
its ```bash blocks run one by one with bash -e (``.venv/bin/python`` becomes this test's Python,
``.venv/bin/pllscore`` a command forked from a warm server of it: tests/cli_server.py),
both in a fresh temporary folder per page laid out as a checkout with ../shared beside it
(:func:`tests.workspace.example_folder`): the examples write under relative names, so pages and
test runs never share an output file.
An HTML comment on the line before a block changes that:

* ``<!-- docs-test: skip: REASON -->`` shows the block without running it (set-up commands,
  a Ray cluster);
* ``<!-- docs-test: needs PATH -->`` runs it only where PATH (``~`` expanded) exists, a skip
  otherwise (a model file fetched by ``make test-real``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.r_package import install, r_env
from tests.ray_session import without_ray
from tests.workspace import ROOT, example_folder, run_example

DOCS = ROOT / "docs"
PAGES = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if "_hooks" not in p.parts)

FENCE = re.compile(
    r"^(?:<!-- docs-test: (?P<marker>[^\n]*?) -->\n)?```(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)^```[ \t]*$",
    flags=re.S | re.M,
)


# what a page's examples must print (beside running without an error)
PRINTS = {
    "index.md": ["('original', 'word-l2r', 'whole-word', 'sentence-l2r')"],
    "guide/errors.md": ["text 1 is whitespace only"],
    "guide/long-texts.md": ["strides differ: True"],  # the text is long enough for the strides to differ
    "guide/mntp.md": ["MntpScorer mntp", "##ol True"],
    "guide/speed.md": ["True"],
    "guide/r.md": ["tiny_gpt2_surprisal_bits", "words has NA at 2; drop or fill those elements"],
}


@dataclass(frozen=True)
class Block:
    page: str
    lang: str
    code: str
    line: int  # 1-based line of the block's first code line in the page
    marker: str | None

    def skip_reason(self) -> str | None:
        if self.marker is None:
            return None
        if self.marker.startswith("skip:"):
            return self.marker[len("skip:") :].strip()
        if self.marker.startswith("needs "):
            needed = Path(os.path.expanduser(self.marker[len("needs ") :].strip()))
            return None if needed.exists() else f"{needed} is not there"
        raise AssertionError(f"{self.page}:{self.line}: unknown docs-test marker {self.marker!r}")


def blocks(page: str, lang: str | None = None) -> list[Block]:
    text = (DOCS / page).read_text()
    found = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start("code")) + 1
        found.append(Block(page, m.group("lang"), m.group("code"), line, m.group("marker")))
    return [b for b in found if lang is None or b.lang == lang]


def _pages_with(lang: str) -> list[str]:
    """Pages with a block of lang that may run (not every one marked skip)."""
    return [page for page in PAGES if any(not (b.marker or "").startswith("skip:") for b in blocks(page, lang))]


def test_pages_are_found_and_markers_are_known():
    assert "index.md" in PAGES and "guide/metrics.md" in PAGES
    for page in PAGES:
        for block in blocks(page):
            block.skip_reason()  # raises on an unknown marker


def test_examples_write_relative_paths():
    """No example writes to a fixed place such as /tmp: two runs (or a user's own files) would collide."""
    fixed = [
        f"{page}:{b.line}"
        for page in PAGES
        for b in blocks(page)
        if b.lang in ("bash", "python") and re.search(r"(?<![\w.])/tmp\b|mktemp|tempfile", b.code)
    ]
    assert not fixed, f"examples that write outside the current folder: {fixed}"


def test_examples_are_not_skipped_away():
    """Most examples run: a marker added by mistake does not silently empty the test."""
    run = [b for page in PAGES for b in blocks(page) if b.marker is None]
    python = [b for b in run if b.lang == "python"]
    commands = sum(b.code.count(".venv/bin/pllscore") for b in run if b.lang == "bash")
    assert len(python) >= 25, len(python)
    assert commands >= 18, commands


@pytest.mark.shared
@pytest.mark.parametrize("page", _pages_with("python"))
def test_python_examples_run(page, monkeypatch, capsys, tmp_path, request):
    if page == "ray.md":
        # on the run's Ray and the actors earlier Ray tests kept (tests/ray_session.py): the page's score_dataset
        # takes them instead of starting a Ray and actors of its own, and its ray.shutdown() ends the run's Ray
        # (conftest.py runs this test after the other Ray tests); the page's bash example starts its own
        request.getfixturevalue("ray_cluster")
    else:
        without_ray()  # an idle Ray would only take memory from the examples
    monkeypatch.chdir(example_folder(tmp_path))
    namespace: dict = {"__name__": "__docs__"}
    for block in blocks(page, "python"):
        reason = block.skip_reason()
        if reason:
            print(f"skipped {page}:{block.line}: {reason}")
            continue
        # padded so that a traceback's line number is the line in the page
        code = "\n" * (block.line - 1) + block.code
        exec(compile(code, str(DOCS / page), "exec"), namespace)
    out = capsys.readouterr().out
    for expected in PRINTS.get(page, []):
        assert expected in out, f"{page} did not print {expected!r}"
    # numpy 2 shows a scalar as np.float64(-2.35): an example prints plain numbers
    assert not re.search(r"np\.(float|int|bool)\w*\(", out), f"{page} prints a numpy scalar's repr:\n{out}"


@pytest.mark.shared
@pytest.mark.parametrize("page", _pages_with("bash"))
def test_bash_examples_run(page, tmp_path, example_env):
    without_ray()  # an idle Ray of this process would only take memory from the examples' own
    work = example_folder(tmp_path)
    ran = 0
    for block in blocks(page, "bash"):
        if block.skip_reason():
            continue
        done = run_example(block.code, work, example_env)
        assert done.returncode == 0, f"{page}:{block.line}\n{block.code}\n{done.stderr[-4000:]}"
        ran += 1
    if not ran:
        pytest.skip(f"no bash block of {page} could run here")


@pytest.mark.shared
@pytest.mark.parametrize("page", _pages_with("r"))
def test_r_examples_run(page, tmp_path):
    library = install(tmp_path)  # skips in one line without R
    work = example_folder(tmp_path)
    script = tmp_path / "page.R"
    script.write_text("\n".join(b.code for b in blocks(page, "r") if not b.skip_reason()))
    done = subprocess.run(["Rscript", str(script)], cwd=work, capture_output=True, text=True, env=r_env(library))
    assert done.returncode == 0, f"{page}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    for expected in PRINTS.get(page, []):
        assert expected in done.stdout, f"{page} did not print {expected!r}"


def test_api_reference_covers_the_public_names():
    """Every name of `pllscore.__all__` has its entry on the API page."""
    import pllscore

    page = (DOCS / "reference" / "api.md").read_text()
    missing = [n for n in pllscore.__all__ if n != "__version__" and f"::: pllscore.{n}\n" not in page]
    assert not missing, f"docs/reference/api.md has no entry for {missing}"


def test_site_builds_strictly(tmp_path):
    """`mkdocs build --strict`: no broken link or anchor, every API name resolves, the CLI reference renders."""
    pytest.importorskip("mkdocs", reason="mkdocs not installed (pip install -e '.[docs]')")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    site = tmp_path / "site"
    cli = (site / "reference" / "cli" / "index.html").read_text()
    assert "--no-share-prefixes" in cli and "pllscore rescore" in cli
    api = (site / "reference" / "api" / "index.html").read_text()
    assert "name_or_path" in api and "SentenceScore" in api
    assert 'id="pllscore.Scorer.encode"' in api and 'id="pllscore.scoring.Encodings"' in api


def test_settings_reference_has_every_field():
    """reference/settings.md: one generated table per settings group, a row for every field with its flag."""
    import dataclasses
    import importlib.util

    from pllscore import settings

    spec = importlib.util.spec_from_file_location("settings_reference", DOCS / "_hooks" / "settings_reference.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = (DOCS / "reference" / "settings.md").read_text()
    groups = [c for c in vars(settings).values() if isinstance(c, type) and issubclass(c, settings.Settings)]
    groups = [c for c in groups if c is not settings.Settings]
    assert {c.__name__ for c in groups} == set(hook.MARKER.findall(page)), "a settings group has no table"
    assert hook.table(groups[0]) in hook.on_page_markdown(page, None)
    for cls in groups:
        rows = hook.table(cls).splitlines()
        for f in dataclasses.fields(cls):
            row = next((line for line in rows if line.startswith(f"| `{f.name}` |")), None)
            assert row is not None, f"{cls.__name__}.{f.name} has no row"
            for flag in f.metadata["flags"]:
                assert f"`{flag.split('/')[0]}`" in row, (f.name, flag)
    with pytest.raises(ValueError, match="not a settings group"):
        hook.on_page_markdown("<!-- settings-reference: Settings -->", None)


def _wording_check(root: Path) -> subprocess.CompletedProcess:
    script = ROOT / "scripts" / "check-site.py"
    return subprocess.run(
        [sys.executable, str(script), "--wording-only", "--root", str(root)], capture_output=True, text=True
    )


def test_documents_do_not_speak_of_working_sessions():
    """docs/, the README and BENCHMARKS.md speak to readers: no "session 10", no "this session" (check-site.py)."""
    done = _wording_check(ROOT)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("line", "fails"),
    [
        ("Measured in session 10 on the 2-core EPYC.", True),
        ("Now (2026-11-27, sessions 14 and 15): a clean clone in 9 min.", True),
        ("These paths run the same code, but this session had no GPU.", True),
        ("It took 53 min (an earlier session).", True),
        ("Several calls in one Python session keep the actors.", False),
        ("The actors end with the Ray session; session fixtures are built once.", False),
    ],
)
def test_the_wording_check_fails_on_a_working_session(tmp_path, line, fails):
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "README.md").write_text("# pllscore\n")
    (tmp_path / "docs" / "guide" / "page.md").write_text(f"# A page\n\n{line}\n")
    done = _wording_check(tmp_path)
    assert done.returncode == (1 if fails else 0), done.stderr
    if fails:
        assert "docs/guide/page.md:3: speaks of a working session" in done.stderr
