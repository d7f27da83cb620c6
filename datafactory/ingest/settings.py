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
        """Raises ``TokenFileError`` naming the file (a FIFO or a huge file is refused)."""
        if self.path is None:
            return
        try:
            text = read_regular(self.path, MAX_TOKEN_FILE_BYTES)
        except NotReadable as exc:
            raise TokenFileError(f"{self.path}: {exc}") from None
        self.values = tuple(
            line.strip() for line in text.splitlines() if line.strip() and not line.startswith(b"#")
        )

    def allows(self, header: str | None) -> bool:
        if self.path is None:
            return True
        if header is None or not header.startswith("Bearer "):
            return False
        given = header[len("Bearer ") :].strip().encode("utf-8", "surrogateescape")
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
