"""Text reports that show what they hold: a field read from a copy, a baseline reason or a
record (a property name with a newline and ``::error ...`` after it, an escape sequence that
clears the terminal, a bidi override) is printed escaped, so it can neither add a line of its
own (a forged GitHub workflow command) nor hide or reorder what is around it."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

__all__ = ["render_lines", "visible"]

# Control, format (bidi overrides, zero-width), line and paragraph separators, surrogates.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def visible(text: str) -> str:
    """``text`` with every control, format and separator character written as ``\\uXXXX``
    (``\\UXXXXXXXX`` beyond the BMP); everything else as it is."""
    if text.isascii() and text.isprintable():
        return text
    out = []
    for char in text:
        if unicodedata.category(char) in _HIDDEN:
            code = ord(char)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(char)
    return "".join(out)


def render_lines(lines: Iterable[str]) -> str:
    """The report's text: each line made visible, each ended by a newline."""
    return "".join(visible(line) + "\n" for line in lines)
