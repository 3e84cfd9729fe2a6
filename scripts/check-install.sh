#!/usr/bin/env bash
# What a user installing pllscore meets: build the wheel, install it without extras into a fresh
# virtual environment, then run --version, one score on a shared model and one command-line mistake.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -x .venv/bin/uv ]; then
    # uv's build: the same backend (setuptools, isolated) as `python -m build`, its environment from uv's cache (2 s, not 5)
    .venv/bin/uv build -q --wheel --out-dir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
    # the wheel without extras, its dependencies at the locked versions (seconds, not minutes); torch the CPU build.
    # No bytecode at install (uv's default): the commands below write what they import, once (so they do even where
    # PYTHONDONTWRITEBYTECODE is set), which is 40 s less than compiling every package (BENCHMARKS.md)
    $PYTHON -m venv --without-pip "$work/venv"
    .venv/bin/uv pip install -q --python "$work/venv/bin/python" --find-links "${WHEELS:-/opt/wheels}" \
        -c requirements.lock "$work"/dist/pllscore-*.whl
    unset PYTHONDONTWRITEBYTECODE
else
    .venv/bin/python -m build --wheel --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
    $PYTHON -m venv "$work/venv"
    "$work/venv/bin/pip" install -q --upgrade pip
    "$work/venv/bin/pip" install -q "torch==2.13.0"   # the CPU build first, as a user is told to
    "$work/venv/bin/pip" install -q "$work"/dist/pllscore-*.whl
fi
cli="$work/venv/bin/pllscore"

"$cli" --version | grep -q '^pllscore ' || { echo "check-install: --version printed no version"; exit 1; }

model=../shared/models/tiny-bert-cased
if [ -d "$model" ]; then
    printf 'The traveler lost the souvenir.\nThe souvenir lost the traveler.\n' >"$work/in.txt"
    HF_HUB_OFFLINE=1 "$cli" score "$work/in.txt" --model "$model" -o "$work/out.csv" 2>"$work/score.err"
    rows=$(($(wc -l <"$work/out.csv") - 1))
    [ "$rows" -eq 2 ] || { echo "check-install: score wrote $rows rows, expected 2"; cat "$work/score.err"; exit 1; }
    # figures are part of a plain install: diagnose writes its tables and its figures
    HF_HUB_OFFLINE=1 "$cli" diagnose --model "$model" --data eventsadapt --sample 20 --metric word-l2r -q \
        -o "$work/diag" 2>"$work/diag.err" || { cat "$work/diag.err"; exit 1; }
    ls "$work/diag"/*.png >/dev/null 2>&1 || { echo "check-install: diagnose drew no figure"; ls "$work/diag"; exit 1; }
else
    echo "check-install: $model not found; score and diagnose checks skipped"
fi

set +e
"$cli" score --nonexistent-flag >"$work/bad.out" 2>"$work/bad.err"
code=$?
set -e
if [ "$code" -ne 2 ] || ! grep -q '^Usage: pllscore score' "$work/bad.err" || grep -q Traceback "$work/bad.err"; then
    echo "check-install: a command-line mistake should print a usage line and exit 2 (got $code):"
    cat "$work/bad.err"
    exit 1
fi
# a command whose extra is missing names the extra in one line, without a traceback
set +e
"$cli" lm-eval --tasks blimp_anaphor_gender_agreement >"$work/extra.out" 2>"$work/extra.err"
code=$?
set -e
if [ "$code" -eq 0 ] || ! grep -q "pllscore\[lm-eval\]" "$work/extra.err" || grep -q Traceback "$work/extra.err" \
    || [ "$(wc -l <"$work/extra.err")" -ne 1 ]; then
    echo "check-install: pllscore lm-eval without lm_eval should name the extra in one line (got $code):"
    cat "$work/extra.err"
    exit 1
fi
echo "check-install: wheel installs without extras; --version, score, diagnose, a usage error and a missing extra behave"
