"""``pllscore lm-eval ...``: lm-evaluation-harness's own command line with the ``pllscore`` model registered."""

from __future__ import annotations

import sys

import typer

LM_EVAL_HELP = (
    "Run lm-evaluation-harness with pllscore's model registered as 'pllscore' (masked LMs through PLL). "
    "Every argument goes to lm-eval, e.g. --model pllscore --model_args pretrained=PATH,metric=word-l2r "
    "--tasks blimp_anaphor_gender_agreement. Needs the lm-eval extra."
)


def lm_eval_command(ctx: typer.Context) -> None:
    """Hand the arguments to lm-eval's CLI after registering the adapter."""
    from pllscore.errors import InputError

    try:
        from lm_eval.__main__ import cli_evaluate

        import pllscore.integrations.lm_eval  # noqa: F401  (registers the model)
    except ImportError as e:
        if (e.name or "").split(".")[0] != "lm_eval":
            raise
        raise InputError("pllscore lm-eval needs lm-evaluation-harness: pip install 'pllscore[lm-eval]'") from None
    args = list(ctx.args)
    if "--model" not in args and not any(a.startswith("--model=") for a in args):
        args = ["--model", "pllscore", *args]  # the adapter unless another model is named
    old = sys.argv
    sys.argv = ["lm-eval", *args]
    try:
        cli_evaluate()
    finally:
        sys.argv = old


LM_EVAL_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}
