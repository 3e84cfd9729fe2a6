"""The warm fork server the docs' examples run ``pllscore`` through (tests/cli_server.py) gives what a fresh process
gives: for each command of the docs, the same exit code, standard output, standard error and files.

Each case is a small shell script run twice in two fresh example folders: once with ``pllscore`` the console
script of the venv (a fresh process, as a reader runs it), once through the server. Only figures that measure
time (``in 0.5 s (2.0 texts/s)``, the provenance's clock) may differ.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.cli_client import SOCKET
from tests.cli_server import client_command
from tests.workspace import SHARED, example_folder

BERT = "../shared/models/tiny-bert-cased"
GPT2 = "../shared/models/tiny-gpt2"
LM_EVAL_TASK = """mkdir -p tasks
cat > tasks/t.yaml <<'YAML'
task: t
dataset_path: json
dataset_kwargs:
  data_files:
    train: ../shared/data/blimp/anaphor_gender_agreement.jsonl
output_type: multiple_choice
validation_split: train
doc_to_text: ""
doc_to_target: 0
doc_to_choice: "{{[sentence_good, sentence_bad]}}"
metric_list:
  - metric: acc
YAML
"""

# one case per command of the docs (and the ways a command meets its caller: stdin, a usage error, an error)
CASES = {
    "version": "pllscore --version",
    "score-stdout": (
        f'pllscore score --text "The traveler lost the souvenir." --model {GPT2} --level token --base 2 --surprisal'
    ),
    "score-stdin-file": f'echo "The cat sat on the mat." | pllscore score - --model {BERT} --metric all -o s.csv',
    "usage-error": "pllscore score --nonexistent-flag",
    "input-error": f'pllscore score --text "   " --model {BERT}',
    "blimp": f"pllscore blimp --model {GPT2} --paradigm anaphor_number_agreement --limit 5 -o blimp --quiet",
    "pairs": (
        "printf 'good,bad\\nThe cat sleeps.,The cat sleep.\\nThe dogs bark.,The dogs barks.\\n' > pairs.csv\n"
        f"pllscore pairs pairs.csv --good good --bad bad --model {BERT} -o mypairs"
    ),
    "diagnose-report": (
        f"pllscore diagnose --model {BERT} --data eventsadapt --sample 6 -o diagnose -q\n"
        "pllscore report diagnose -o report.html"
    ),
    "explain": f'pllscore explain "The traveler lost the souvenir." --model {BERT} --plot explain.png',
    "syntaxgym": f"pllscore syntaxgym tests/data/syntaxgym/agreement.json --model {GPT2} -o syntaxgym",
    "reading-times": (
        "for story in 1 2 3; do i=0; for w in Once upon a time the old cat sat by the warm fire today.; do "
        'i=$((i+1)); echo "$story,$i,$w,$((300 + 7 * i + 11 * story))"; done; done > rows.csv\n'
        "(echo story,pos,word,rt; cat rows.csv) > rt.csv\n"
        "pllscore reading-times rt.csv --text-column story --position-column pos --word-column word "
        f"--measure rt -m {GPT2} -o rt"
    ),
    "rescore": (
        "printf 'utt_id,hyp,score\\nu1,the cat sat,-3.0\\nu1,the cat sad,-2.5\\nu2,a dog barked,-4.0\\n"
        "u2,a dog parked,-4.2\\n' > nbest.csv\n"
        f"pllscore rescore nbest.csv --model {GPT2} -o nbest-out.csv"
    ),
    "lm-eval": LM_EVAL_TASK
    # a cache of the run's own: the datasets library says whether it built the split or found it
    + "HF_DATASETS_OFFLINE=1 HF_DATASETS_CACHE=.hf-datasets "
    + f"pllscore lm-eval --model_args pretrained={BERT} --tasks t --include_path tasks "
    "--limit 4 --device cpu",
}

# what measures time
VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\d[T: ]\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?"), "<clock>"),
    (re.compile(r"\b\d+(\.\d+)?(e[-+]?\d+)? ?(s|ms|min)\b"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)? ?[\w ]+/s\b"), "<rate>"),
    (re.compile(r"\b\d\d:\d\d\b"), "<elapsed>"),
]
VOLATILE_META = re.compile(r"time|date|duration|elapsed|seconds|started|finished|host|pid|cwd|folder|path", re.I)


def _normalised(text: str) -> str:
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def _meta(value: object) -> object:
    if isinstance(value, dict):
        return {k: _meta(v) for k, v in value.items() if not VOLATILE_META.search(k)}
    if isinstance(value, list):
        return [_meta(v) for v in value]
    return _normalised(value) if isinstance(value, str) else value


def _files(folder: Path) -> dict[str, object]:
    """What the commands wrote: each new file's content, provenance without its clock, text without times."""
    found: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file() or {"__pycache__", ".hf-datasets"} & set(path.parts):
            continue
        name = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        if path.suffix == ".json":
            found[name] = _meta(json.loads(data))
        elif path.suffix == ".parquet":  # its key-value metadata carries the provenance, clock included
            table = pq.read_table(path)
            extra = {
                k.decode(): _meta(json.loads(v))
                for k, v in (table.schema.metadata or {}).items()
                if k != b"ARROW:schema"
            }
            found[name] = (table.to_pydict(), extra)
        elif path.suffix in (".html", ".txt", ".md", ".log"):
            found[name] = _normalised(data.decode())
        else:
            found[name] = data
    return found


def _run(script: str, folder: Path, command: str, env: dict[str, str]) -> tuple[int, str, str, dict[str, object]]:
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", script.replace("pllscore ", f"{command} ")],
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    return done.returncode, _normalised(done.stdout), _normalised(done.stderr), _files(folder)


@pytest.fixture(scope="module")
def server(cli_server: str) -> tuple[str, dict[str, str]]:
    """The run's fork server (tests/conftest.py: the one the docs' examples use) and the commands' environment."""
    return cli_server, {**os.environ, "HF_HUB_OFFLINE": "1"}


@pytest.mark.shared
@pytest.mark.skipif(not SHARED.exists(), reason="the shared models must sit beside the repository")
@pytest.mark.parametrize("case", sorted(CASES))
def test_forked_command_is_a_fresh_process(case: str, server: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    if case == "lm-eval":
        pytest.importorskip("lm_eval")
    path, env = server
    base = tmp_path / "run"  # the same folder for both runs: outputs record the paths they read
    base.mkdir()
    console_script = str(Path(sys.executable).parent / "pllscore")
    fresh = _run(CASES[case], example_folder(base), console_script, env)
    shutil.rmtree(base)
    base.mkdir()
    forked = _run(CASES[case], example_folder(base), client_command(), {**env, SOCKET: path})
    assert forked[0] == fresh[0], f"exit code: forked {forked[0]}, fresh {fresh[0]}\n{fresh[2]}\n{forked[2]}"
    assert forked[1] == fresh[1], "standard output differs"
    assert forked[2] == fresh[2], "standard error differs"
    assert forked[3].keys() == fresh[3].keys(), "the files written differ"
    for name in fresh[3]:
        assert forked[3][name] == fresh[3][name], f"{name} differs"
    if case in ("usage-error", "input-error"):
        assert fresh[0] in (1, 2) and "Traceback" not in fresh[2]
    else:
        assert fresh[0] == 0, fresh[2]
