"""What a command-line user reads: flags (not Python keywords) in errors, option errors before any heavy import,
the same numbering of empty lines in a refusal and in the --skip-empty summary, no internal names."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import TINY_GPT2
from tests.test_cli import run

HEAVY = ("torch", "transformers")


def _one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 1, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return lines[0]


# (command line after `pllscore`, what the error must say, what it must not)
OPTION_ERRORS = [
    (["score", "--text", "x", "-m", "m", "--word-prob", "x"], "unknown --word-prob 'x'", "word_prob"),
    (["score", "--text", "x", "-m", "m", "--mask-by", "x"], "unknown --mask-by 'x'", "mask_by"),
    (["score", "--text", "x", "-m", "m", "--max-tokens", "0"], "--max-tokens must be a positive integer", "max_tokens"),
    (["score", "--text", "x", "-m", "m", "--level", "words"], "unknown --level 'words'", None),
    (["score", "--text", "x", "-m", "m", "--words", "x"], "unknown --words 'x'", None),
    (["score", "--text", "x", "-m", "m", "--dtype", "x"], "unsupported --dtype 'x'", None),
    (["score", "--text", "x", "-m", "m", "--norm", "x"], "unknown --norm 'x'", None),
    (["score", "--text", "x", "-m", "m", "--format", "x"], "unknown --format 'x'", None),
    (["blimp", "-m", "m", "--dtype", "f8"], "unsupported --dtype 'f8'", None),
    (["score", "--text", "x", "-m", "m", "--stride", "0"], "--stride must be a positive integer", None),
    (["pairs", "p.csv", "-m", "m", "--good", "g", "--bad", "b", "--norm", "nope"], "unknown --norm 'nope'", None),
]


@pytest.mark.parametrize(("argv", "says", "never"), OPTION_ERRORS)
def test_option_errors_name_the_flag_and_import_no_torch(argv, says, never):
    """Checked before torch and transformers load (an option error takes a moment, not the 4-5 s of their import),
    and named by the flag the user typed."""
    code = (
        "import sys\nfrom pllscore.cli import main\n"
        f"sys.argv = ['pllscore', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        f"print('LOADED', ' '.join(m for m in {HEAVY!r} if m in sys.modules), 'CODE', code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    line = done.stdout.rsplit("LOADED", 1)[1].split()
    assert line[-2:] == ["CODE", "1"], done.stdout + done.stderr
    assert line[:-2] == [], f"pllscore {' '.join(argv)} loaded {line[:-2]} before refusing an option"
    error = done.stderr.strip().splitlines()
    assert len(error) == 1 and says in error[0], done.stderr
    if never:
        assert never not in error[0]


def test_keywords_become_flags():
    from pllscore.cli.messages import cli_message
    from pllscore.errors import InputError

    cases = {
        "word_prob='bow' corrects a causal LM's word probabilities: leave word_prob out": (
            "--word-prob bow corrects a causal LM's word probabilities: leave --word-prob out"
        ),
        "'gpt2' is a causal LM; drop the metrics= option": "'gpt2' is a causal LM; drop the --metric option",
        "use words='whitespace' or mask_by": "use --words whitespace or --mask-by",
        "the level and the metrics of the run": "the level and the metrics of the run",  # plain words stay
        "compile=True found no layers; with eos=False": "--compile found no layers; with --no-eos",
        "drop bos=False": "drop bos=False",  # no flag: the keyword stays
    }
    for message, shown in cases.items():
        assert cli_message(InputError(message)) == shown
    refused = InputError("unknown level 'x'; choose sentence, word or token")
    refused.setting = "level"  # type: ignore[attr-defined]
    assert cli_message(refused) == "unknown --level 'x'; choose sentence, word or token"


def test_settings_tag_the_refused_field():
    from pllscore.errors import InputError
    from pllscore.settings import ModelSettings

    with pytest.raises(InputError) as e:
        ModelSettings(max_tokens=0)
    assert e.value.setting == "max_tokens"  # type: ignore[attr-defined]


def test_early_checks_agree_with_the_code_that_uses_the_names():
    """settings checks dtypes, norms and output formats before anything heavy loads; the names are those the
    engine, the norms and the writers take."""
    from pllscore.engine.models import _DTYPES
    from pllscore.io.formats import OUTPUT_FORMATS
    from pllscore.results.norms import NORMS
    from pllscore.settings import fields

    assert set(fields.DTYPES) == set(_DTYPES)
    assert fields.NORMS == NORMS and fields.OUTPUT_FORMATS == OUTPUT_FORMATS


def test_a_folder_without_config_json_is_named(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}")
    line = _one_error_line(run("score", "--text", "A cat.", "--model", str(tmp_path)))
    assert str(tmp_path) in line and "has no config.json" in line
    assert "model_type" not in line


@pytest.mark.shared
def test_empty_text_given_with_text_names_no_internal_source():
    line = _one_error_line(run("score", "--text", "", "--model", str(TINY_GPT2)))
    assert "<" not in line and "texts 0" in line and "--skip-empty" in line


@pytest.mark.shared
def test_empty_lines_are_numbered_alike_in_the_refusal_and_the_summary(tmp_path):
    """The refusal and the --skip-empty summary both name the file's lines (1-based), here lines 2 and 4."""
    path = tmp_path / "texts.txt"
    path.write_text("A cat.\n\nA dog.\n   \nA bird.\n")
    line = _one_error_line(run("score", str(path), "--model", str(TINY_GPT2)))
    assert "(lines 2, 4)" in line
    done = run("score", str(path), "--model", str(TINY_GPT2), "--skip-empty")
    assert done.returncode == 0, done.stderr
    assert "skipped 2 empty (lines 2, 4)" in done.stderr
    csv = tmp_path / "texts.csv"
    csv.write_text('text\nA cat.\n""\nA dog.\n')  # the empty cell is the file's line 3
    assert "(lines 3)" in _one_error_line(run("score", str(csv), "--model", str(TINY_GPT2)))
    assert "skipped 1 empty (lines 3)" in run("score", str(csv), "--model", str(TINY_GPT2), "--skip-empty").stderr


@pytest.mark.shared
def test_load_shows_no_weights_bar_and_leaves_the_switch_as_it_was(capfd):
    from transformers.utils import logging as hf_logging

    import pllscore

    before = hf_logging.is_progress_bar_enabled()
    pllscore.load(str(TINY_GPT2))
    assert "Loading weights" not in capfd.readouterr().err
    assert hf_logging.is_progress_bar_enabled() == before


def _help(*argv: str) -> str:
    env = {**os.environ, "COLUMNS": "80"}
    code = "import sys\nfrom pllscore.cli import main\nsys.argv = ['pllscore', *sys.argv[1:]]\nmain()"
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_help_at_80_columns_shows_every_flag_whole():
    import typer.main

    from pllscore.cli import app

    group = typer.main.get_command(app)
    for name, command in group.commands.items():
        if name == "lm-eval":
            continue  # lm-eval's own help
        shown = _help(name, "--help")
        assert max(map(len, shown.splitlines())) <= 80, name
        words = set(re.findall(r"-{1,2}[\w-]+", shown))
        for param in command.params:
            for flag in (*param.opts, *param.secondary_opts):
                if flag.startswith("-"):
                    assert flag in words, f"pllscore {name} --help at 80 columns does not show {flag} whole"


def test_help_names_every_kind_of_model():
    top, score = _help("--help"), _help("score", "--help")
    for shown in (top, score):
        one_line = " ".join(shown.split())
        assert "masked LM" in one_line and "causal LM" in one_line and "encoder-decoder LM" in one_line


def _usage_error(done: subprocess.CompletedProcess) -> str:
    """The one ``Error:`` line of a usage error (exit 2, no traceback)."""
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_every_missing_required_option_in_one_message():
    said = _usage_error(run("pairs"))
    assert said == "Error: Missing option '--model' / '-m', argument 'file', option '--good' and option '--bad'."
    assert _usage_error(run("pairs", "p.csv", "-m", "m", "--good", "g")) == "Error: Missing option '--bad'."
    assert _usage_error(run("explain")) == "Error: Missing argument 'texts' and option '--model' / '-m'."


def test_blimp_without_model_or_data_names_both(monkeypatch, tmp_path):
    import pllscore.analysis.run

    monkeypatch.setattr(pllscore.analysis.run, "shared_data", lambda relative: tmp_path / "no-such" / relative)
    said = _usage_error(run("blimp"))
    assert said.startswith("Error: Missing option '--model' / '-m' and option '--data' (the folder of BLiMP"), said
    # with a model, the missing data is a usage error too: before the model loads, not after
    assert _usage_error(run("blimp", "-m", "m")).startswith("Error: Missing option '--data' (the folder of BLiMP")
    data = tmp_path / "blimp"
    data.mkdir()
    monkeypatch.setattr(pllscore.analysis.run, "shared_data", lambda relative: data)
    assert _usage_error(run("blimp")) == "Error: Missing option '--model' / '-m'."


@pytest.mark.parametrize(
    ("argv", "suggested"),
    [
        (["score", "--levl", "word"], "--level"),
        (["score", "--mdoel", "m"], "--model"),
        (["blimp", "--paradgm", "x"], "--paradigm"),
        (["score", "--xyzzy"], None),
    ],
)
def test_a_mistyped_option_suggests_only_close_names(argv, suggested):
    said = _usage_error(run(*argv))
    assert said.startswith(f"Error: No such option: {argv[1]}")
    # click words the suggestion as "(Possible options: --level)" or "Did you mean '--level'?" by version
    offered = re.findall(r"--[\w-]+", said.removeprefix(f"Error: No such option: {argv[1]}"))
    assert offered == ([suggested] if suggested else []), said  # not --help or --model for --levl, as click offered


def test_near_options_compares_names_without_their_dashes():
    from pllscore.cli.options import near_options

    names = ["--help", "--level", "--model", "-m", "--no-eos"]
    assert near_options("--levl", names) == ["--level"]
    assert near_options("--modle", names) == ["--model"]
    assert near_options("--eos", names) == []
    assert near_options("--zzz", names) == []
