"""The plan diff as terminal text: the pull request's Markdown without its markup.

`tenancy plan` prints the diff for a person at a terminal, where `**added**`, backticks and `###`
are noise; the pull request comment keeps the Markdown (`tenancy diff`, tools/plan/diff.py). Both
come from one renderer, so they never say different things: this module only drops the markup the
renderer writes (headings, bold, code spans, the `_(none)_` emphasis and escaped table pipes).
"""

from __future__ import annotations

import re

_BOLD = re.compile(r"\*\*(.+?)\*\*")
_CODE = re.compile(r"`([^`]*)`")
_EMPHASIS = re.compile(r"(?<![\w])_(\(.+?\)|[^_]+?)_(?![\w])")


def _plain(line: str) -> str:
    line = _BOLD.sub(r"\1", line)
    line = _CODE.sub(r"\1", line)
    line = _EMPHASIS.sub(r"\1", line)
    return line.replace("\\|", "|")


def as_text(markdown: str) -> str:
    """`markdown` (render_markdown's) as terminal text: a title underlined, a scope heading followed by
    a colon, list items and values without markup."""
    lines: list[str] = []
    for line in markdown.splitlines():
        if line.startswith("## "):
            title = _plain(line[3:])
            lines += [title, "=" * len(title)]
        elif line.startswith("### "):
            lines.append(_plain(line[4:]) + ":")
        else:
            lines.append(_plain(line))
    return "\n".join(lines) + "\n"
