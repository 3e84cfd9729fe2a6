"""Griffe extension for the API reference: Sphinx roles in docstrings shown as code.

The docstrings cross-reference with Sphinx roles (``:class:`~pllscore.settings.TextSettings```,
``:func:`pllscore.load```), which Markdown would show with the role's name in front. This
shows each as code instead: the last part of the path with ``~``, else the whole path.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj):`(~?)([^`]+)`")


def _code(match: re.Match[str]) -> str:
    short, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


class RstRoles(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_code, obj.docstring.value)
