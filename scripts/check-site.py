#!/usr/bin/env python3
"""Open the built documentation site in a real browser and check what a reader sees.

    make docs && .venv/bin/python scripts/check-site.py [--site site] [--shots /tmp]
    .venv/bin/python scripts/check-site.py --wording-only      # the text check alone (no site, no browser)

First it reads the pages' sources (docs/, README.md, BENCHMARKS.md and the benchmark reports the site
includes) and fails on any line that speaks of the project's own working sessions ("session 10", "this
session"): the documents speak to readers, and the history lives in git. ``tests/test_docs.py`` runs this
check. A Ray, Python or pytest session is not a working session and passes.

Then it serves site/ on 127.0.0.1 (a free port), opens it in headless Chromium through Playwright and
checks that:

* every page of the site loads (HTTP 200), has a title heading and raises no JavaScript error;
* the search box finds "sentence-l2r", with a hit on the Metrics page;
* the API reference shows signatures (``pllscore.load(name_or_path, ...)``) and the CLI
  reference shows every command's options.

It writes screenshots to --shots (default /tmp): pllscore-site-home.png, -metrics.png,
-search.png, -api.png and -cli.png. Exits 1 with one line per failed check.

The browser checks are not part of `make test` (they need a browser). Needs Playwright's Python package and a Chromium:
``pip install playwright`` and either ``apt-get install chromium`` (Debian; found at
/usr/bin/chromium, or set CHROMIUM=/path) or ``playwright install chromium``.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import shutil
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


#: how the project's own working sessions were spoken of: "session 10", "sessions 14 and 15", "this session",
#: "an earlier session"; a Ray, Python, torch or pytest session is named by its kind and passes
WORKING_SESSION = re.compile(
    r"\bsessions? \d+|\b(?:this|that|these|those|either|earlier|later|previous|working|an earlier|a later|"
    r"a previous|the previous|the next) sessions?\b",
    flags=re.IGNORECASE,
)


def documents(root: Path) -> list[Path]:
    """The sources of what a reader reads: docs/, README.md, BENCHMARKS.md and the benchmarks' reports."""
    found = [root / "README.md", root / "BENCHMARKS.md", *sorted((root / "docs").rglob("*.md"))]
    return [p for p in [*found, *sorted((root / "benchmarks").glob("*.md"))] if p.is_file()]


def working_session_lines(root: Path) -> list[str]:
    """``path:line: text`` of every line of :func:`documents` that speaks of a working session."""
    said = []
    for path in documents(root):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if WORKING_SESSION.search(line):
                said.append(f"{path.relative_to(root)}:{n}: speaks of a working session: {line.strip()[:100]}")
    return said


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def chromium() -> str | None:
    """A Chromium to drive: $CHROMIUM, the Debian package, or None for Playwright's own."""
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def pages(site: Path) -> list[str]:
    """Every page of the site, as paths relative to its root ('' for the home page)."""
    found = []
    for html in sorted(site.rglob("index.html")):
        rel = html.parent.relative_to(site).as_posix()
        if rel in ("search",) or rel.startswith("assets"):
            continue
        found.append("" if rel == "." else rel + "/")
    return found


def check(site: Path, shots: Path) -> list[str]:
    from playwright.sync_api import sync_playwright

    failures: list[str] = []
    server, base = serve(site)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            # a request that fails (an unreachable host, a missing file); ERR_ABORTED is a request
            # cut short by the next page's navigation, not a fault of the site
            page.on(
                "requestfailed",
                lambda r: None if "ERR_ABORTED" in (r.failure or "") else errors.append(f"{r.url}: {r.failure}"),
            )
            page.on("response", lambda r: errors.append(f"{r.url}: HTTP {r.status}") if r.status >= 400 else None)

            # 1. every page renders
            for rel in pages(site):
                errors.clear()
                response = page.goto(base + rel, wait_until="load")
                status = response.status if response else None
                heading = page.locator("article h1").first
                title = heading.inner_text() if heading.count() else ""
                if status != 200 or not title.strip():
                    failures.append(f"{rel or '/'}: status {status}, title heading {title!r}")
                if errors:
                    failures.append(f"{rel or '/'}: JavaScript errors: {errors[:3]}")
                print(f"ok  {rel or '/':45} {title.strip()[:60]}" if status == 200 else f"BAD {rel}")
            page.goto(base, wait_until="load")
            page.screenshot(path=str(shots / "pllscore-site-home.png"))
            page.goto(base + "guide/metrics/", wait_until="load")
            page.screenshot(path=str(shots / "pllscore-site-metrics.png"))

            # 2. search finds "sentence-l2r"
            page.goto(base, wait_until="load")
            page.locator("label.md-search__icon, .md-search__input").first.click()
            box = page.locator("input.md-search__input")
            box.wait_for(state="visible")
            box.press_sequentially("sentence-l2r", delay=40)  # typed key by key, as Material listens for keys
            results = page.locator(".md-search-result__item")
            try:
                results.first.wait_for(timeout=15_000)
            except Exception:  # noqa: BLE001 - reported as a failed check
                failures.append("search: no result for 'sentence-l2r'")
            hits = [results.nth(i).locator("a").first.get_attribute("href") or "" for i in range(results.count())]
            meta = page.locator(".md-search-result__meta").inner_text()
            print(f"search 'sentence-l2r': {meta!r}; first hits {hits[:5]}")
            if not any("guide/metrics" in h for h in hits):
                failures.append(f"search: no hit on the Metrics page among {hits}")
            page.screenshot(path=str(shots / "pllscore-site-search.png"))

            # 3. the API reference shows signatures
            page.goto(base + "reference/api/", wait_until="load")
            signatures = page.locator(".doc-signature")
            after_load = "xpath=following::div[contains(@class,'doc-signature')][1]"
            load_sig = page.locator('[id="pllscore.load"]').locator(after_load)
            text = load_sig.inner_text() if load_sig.count() else ""
            print(f"API: {signatures.count()} signatures; load: {' '.join(text.split())[:110]!r}")
            if signatures.count() < 10 or "name_or_path" not in text:
                failures.append(f"API page: {signatures.count()} signatures, load's is {text[:80]!r}")
            page.locator('[id="pllscore.load"]').scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "pllscore-site-api.png"))

            # 4. the CLI reference shows every command
            page.goto(base + "reference/cli/", wait_until="load")
            body = page.locator("article").inner_text()
            commands = ("score", "explain", "blimp", "pairs", "diagnose", "report", "rescore", "lm-eval")
            missing = [c for c in commands if f"pllscore {c}" not in body]
            tables = page.locator("article table").count()
            print(f"CLI: {tables} tables; commands missing: {missing}")
            if missing or "--no-share-prefixes" not in body:
                failures.append(f"CLI page: commands missing {missing}")
            page.locator("#pllscore-score").scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "pllscore-site-cli.png"))
            browser.close()
    finally:
        server.shutdown()
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "site", help="the built site (make docs)")
    parser.add_argument("--shots", type=Path, default=Path("/tmp"), help="folder for the screenshots")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose documents are read")
    parser.add_argument("--wording-only", action="store_true", help="check the documents' wording only")
    args = parser.parse_args()
    wording = working_session_lines(args.root)
    for failure in wording:
        print(f"FAILED {failure}", file=sys.stderr)
    if args.wording_only or wording:
        print("wording check passed" if not wording else f"{len(wording)} line(s) speak of working sessions")
        return 1 if wording else 0
    if not (args.site / "index.html").exists():
        print(f"{args.site} has no index.html: run `make docs` first", file=sys.stderr)
        return 1
    args.shots.mkdir(parents=True, exist_ok=True)
    failures = check(args.site, args.shots)
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    print("site check passed" if not failures else f"{len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
