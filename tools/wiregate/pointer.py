"""JSON pointers (RFC 6901), the one implementation every part of wiregate uses.

Two spellings are accepted: a plain pointer (``""``, ``/a/b``) and a URI fragment (``#``,
``#/a/b``), as a ``$ref`` writes it. A fragment is percent-decoded first (RFC 6901 section 6),
so ``#/$defs/a%20b`` names the key ``a b``; ``~1`` and ``~0`` are then unescaped in each
token. Pointers that wiregate shows (findings, errors) are ``#`` followed by the plain
pointer, not percent-encoded: :func:`join` builds those, :func:`fragment` builds the encoded
form that reads back the same whatever the keys hold.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

__all__ = [
    "PointerError",
    "escape",
    "follow",
    "follow_through_refs",
    "fragment",
    "join",
    "resolve",
    "split",
    "unescape",
]

# ``~`` must be followed by 0 or 1; anything else is not a JSON pointer.
_BAD_ESCAPE = re.compile(r"~(?![01])")
# Characters a URI fragment may hold as they are (RFC 3986: pchar, "/" and "?").
_FRAGMENT_SAFE = "/?:@!$&'()*+,;="


class PointerError(LookupError):
    """A pointer that is malformed or names no location; the message says which."""

    def __init__(self, pointer: str, reason: str) -> None:
        super().__init__(f"{pointer!r} {reason}")
        self.pointer = pointer
        self.reason = reason

    def __str__(self) -> str:  # LookupError would show the message quoted, as KeyError does
        return str(self.args[0])


def escape(token: str) -> str:
    """One reference token as written in a pointer (``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    """The key an escaped reference token names; a ``~`` not followed by 0 or 1 is an error."""
    if _BAD_ESCAPE.search(token):
        raise PointerError(token, "holds a ~ that is neither ~0 nor ~1")
    return token.replace("~1", "/").replace("~0", "~")


def join(base: str, *tokens: object) -> str:
    """``base`` extended by each token (escaped); ``join("#", "$defs", "a/b")`` is
    ``#/$defs/a~1b``. Not percent-encoded: this is the form wiregate shows."""
    return base + "".join(f"/{escape(str(token))}" for token in tokens)


def fragment(*tokens: object) -> str:
    """A URI fragment naming the location of ``tokens``, percent-encoded where needed, so
    :func:`split` gives the tokens back whatever they hold (``%``, spaces, lone surrogates)."""
    return "#" + "".join(
        "/" + quote(escape(str(token)), safe=_FRAGMENT_SAFE, errors="surrogatepass")
        for token in tokens
    )


def split(pointer: str, *, percent_encoded: bool = True) -> list[str]:
    """The reference tokens of ``pointer`` (``""``, ``#``, ``#/a/b`` or ``/a/b``).

    ``percent_encoded=False`` reads a ``#`` pointer as wiregate shows it (not encoded)."""
    if pointer.startswith("#") and not percent_encoded:
        body = pointer[1:]
    elif pointer.startswith("#"):
        try:
            body = unquote(pointer[1:], errors="surrogatepass")
        except UnicodeDecodeError:  # percent-encoded bytes that are not UTF-8
            raise PointerError(pointer, "is not a valid percent-encoded fragment") from None
    else:
        body = pointer
    if body == "":
        return []
    if not body.startswith("/"):
        raise PointerError(pointer, "is not a JSON pointer (it must start with / or #/)")
    try:
        return [unescape(token) for token in body[1:].split("/")]
    except PointerError as exc:
        raise PointerError(pointer, f"is malformed: {exc.reason}") from None


def resolve(document: Any, pointer: str, *, percent_encoded: bool = True) -> Any:
    """The value ``pointer`` names in ``document``; :class:`PointerError` when it is malformed
    or names nothing. ``percent_encoded=False``: a pointer as wiregate shows it."""
    try:
        return follow(document, split(pointer, percent_encoded=percent_encoded))
    except PointerError as exc:
        raise PointerError(pointer, exc.reason) from None


def follow(document: Any, tokens: Sequence[str]) -> Any:
    """The value the reference ``tokens`` name in ``document``; :class:`PointerError` when
    they name nothing."""
    node = document
    for token in tokens:
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and _is_index(token) and int(token) < len(node):
            node = node[int(token)]
        else:
            raise PointerError(join("#", *tokens), "points to nothing")
    return node


def follow_through_refs(document: Any, pointer: str, *, hops: int = 64) -> Any:
    """``resolve``, where a pointer may pass through a local ``$ref`` as the diff engine's
    pointers do (``#/$defs/P/properties/h/pattern`` with ``h`` a ``$ref`` to the schema that
    holds the pattern): a token missing beside a ``"$ref": "#/..."`` is looked up in its
    target. At most ``hops`` references are taken (a cycle names nothing)."""
    node = document
    for token in split(pointer):
        while (
            isinstance(node, Mapping)
            and token not in node
            and isinstance(node.get("$ref"), str)
            and node["$ref"].startswith("#")
            and hops > 0
        ):
            node, hops = resolve(document, node["$ref"]), hops - 1
        node = follow(node, [token])
    return node


def _is_index(token: str) -> bool:
    # RFC 6901: digits without a leading zero (``0`` itself excepted), ASCII only.
    return token.isascii() and token.isdigit() and (token == "0" or not token.startswith("0"))
