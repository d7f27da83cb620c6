"""Generated copies (``kind = "generated"``): a file ``wiregate codegen --target TARGET`` writes
into a governed repository is fresh when it holds, byte for byte once line ends are
normalised, what that command would write from the contract now. A stale file is one
breaking finding (rule ``generated-stale``) whose message names the command that regenerates
it; it fails the gate like any breaking drift and goes through the same baseline, reporters
and annotations (on the first line that differs)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from contracts import Contract
from wiregate.diff import Change
from wiregate.diff.fingerprint import DRIFT_SCHEME, fingerprint
from wiregate.drift.config import CopySpec, RepositorySpec
from wiregate.drift.copies import FoundCopy
from wiregate.drift.findings import DriftFinding, Location
from wiregate.drift.result import Triage, Verdict

__all__ = ["STALE_RULE", "check_generated"]

STALE_RULE = "generated-stale"

#: The required directions a stale file fails, by role: whichever the copy must pass.
_FAILS = {"forward": ("forward",), "backward": ("backward",), "full": ("forward", "backward")}


def _sha256(data: bytes) -> str:
    """The hash of a file's text once line ends are normalised (a CRLF checkout is the same)."""
    return hashlib.sha256(data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")).hexdigest()


def _first_difference(current: str, wanted: str) -> int:
    """The 1-based line where ``current`` first differs from ``wanted``."""
    old, new = current.split("\n"), wanted.split("\n")
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return number
    return min(len(old), len(new))


def check_generated(
    contract: Contract,
    repository: RepositorySpec,
    spec: CopySpec,
    found: FoundCopy,
    checkout: Path,
) -> dict[str, Any]:
    """The fields of the copy's result: identical when fresh, else breaking drift with one
    finding. A generator that cannot run raises a one-line UserError (an ``error`` result)."""
    from codegen.targets import generate, is_fresh, regenerate_command
    from wiregate.drift.check import _shown

    target = spec.target or ""
    wanted = generate(target, contract)
    if is_fresh(found.data, wanted):
        return {"verdict": Verdict.IDENTICAL, "path": found.path}
    command = regenerate_command(target, _shown(checkout / found.path))
    current = found.data.replace(b"\r\n", b"\n").decode("utf-8", "replace")
    line = _first_difference(current, wanted) if current else 1
    message = (
        f"{found.path} is not what `wiregate codegen --target {target}` writes from the "
        f"contract now (first difference: line {line}): regenerate it with `{command}`"
    )
    change = Change(
        id=STALE_RULE,
        level="error",
        old_pointer="#",
        new_pointer="#",
        message=message,
        backward=False,
        forward=False,
    )
    # The finding is what the file holds against what it should: accepting a stale file
    # accepts that content only, and a later edit of it (or of the contract) is a new finding.
    key = fingerprint(
        DRIFT_SCHEME,
        STALE_RULE,
        (repository.name, spec.id),
        change.old_pointer,
        change.new_pointer,
        _sha256(wanted.encode("utf-8")),
        _sha256(found.data),
    )
    finding = DriftFinding(
        change=change,
        breaking=True,
        message=message,
        root_message=message,
        record_type=found.path,
        copy_location=Location(found.path, line, 1),
        contract_location=None,
        fingerprint=key,
    )
    return {
        "verdict": Verdict.BREAKING,
        "path": found.path,
        "changes": (change,),
        "failed": _FAILS[spec.direction],
        "reproduce": command,
        "triage": (Triage(key),),
        "judged": (finding,),
    }
