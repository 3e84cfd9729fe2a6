"""Importing this module runs the command line's start-up (:func:`pllscore.cli._start_up`): the torch, transformers
and pllscore imports a model command makes before its model loads, then the collector's freeze. A process that
forks commands (test_kill_resume's ``forkserver``) preloads it, so that each forked command pays only its model
load and its scoring, as a command forked from tests/cli_server.py does."""

from pllscore.cli import _start_up

_start_up()
