"""What ``datafactory serve`` is started with (no web framework imported: ``datafactory
store`` works without the serve extra)."""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field

from wiregate.files import NotReadable, read_regular

__all__ = ["DEFAULT_MAX_BODY_BYTES", "IngestSettings", "TokenFileError", "Tokens"]

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
MAX_TOKEN_FILE_BYTES = 1024 * 1024


class TokenFileError(Exception):
    """The token file cannot be read (the message names it)."""


@dataclass
class Tokens:
    """The bearer tokens a request may carry (none configured: no check); ``reload`` re-reads
    the file (SIGHUP)."""

    path: str | None = None
    values: tuple[bytes, ...] = ()

    def reload(self) -> None:
        """Raises ``TokenFileError`` naming the file (a FIFO, a huge file or one holding no
        token is refused)."""
        if self.path is None:
            return
        try:
            text = read_regular(self.path, MAX_TOKEN_FILE_BYTES)
        except NotReadable as exc:
            raise TokenFileError(f"{self.path}: {exc}") from None
        lines = (line.strip() for line in text.splitlines())
        values = tuple(line for line in lines if line and not line.startswith(b"#"))
        if not values:  # every request would be refused: a mistake, not a policy
            raise TokenFileError(f"{self.path}: holds no token (one a line; # starts a comment)")
        self.values = values

    def allows(self, header: str | None) -> bool:
        if self.path is None:
            return True
        scheme, _, credentials = (header or "").partition(" ")
        if scheme.lower() != "bearer":  # the scheme is case-insensitive (RFC 7235)
            return False
        # HTTP headers arrive decoded as Latin-1: their bytes again, as the file's are.
        given = credentials.strip().encode("latin-1", "replace")
        # Every token compared, each in constant time: the answer's timing tells nothing.
        matched = False
        for token in self.values:
            matched |= hmac.compare_digest(given, token)
        return matched


@dataclass
class IngestSettings:
    store: str
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    tokens: Tokens = field(default_factory=Tokens)
    contract: str | None = None
