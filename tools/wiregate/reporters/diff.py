"""Reporters for ``wiregate diff`` results; the per-change pieces are reused by other reports."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from wiregate.diff import Change, DiffResult, DraftChoice
from wiregate.diff.findings import LEVELS
from wiregate.exactjson import dumps
from wiregate.positions import PositionIndex
from wiregate.reporters.github import workflow_command
from wiregate.textlines import render_lines, visible

__all__ = [
    "DIFF_REPORTERS",
    "change_to_json",
    "change_to_text",
    "draft_lines",
    "github_annotation",
    "markdown_table",
    "summary",
    "witness_line",
]

# An undecided change never fails a check, but someone should look at it.
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "unknown": "warning", "info": "notice"}


def _yes_no(value: bool) -> str:
    return "yes" if value else "no"


def _effect(change: Change, value: bool) -> str:
    return "unknown" if change.level == "unknown" else _yes_no(value)


def change_to_json(change: Change) -> dict[str, Any]:
    return {
        "id": change.id,
        "level": change.level,
        "old_pointer": change.old_pointer,
        "new_pointer": change.new_pointer,
        "message": change.message,
        "backward": change.backward,
        "forward": change.forward,
        "tolerated_by": change.tolerated_by,
        "root": {"old_pointer": change.root_old_pointer, "new_pointer": change.root_new_pointer},
        "witness": (
            None
            if change.witness is None
            else {"direction": change.witness.direction, "instance": change.witness.instance}
        ),
    }


def witness_line(change: Change) -> str | None:
    """The witness of a change as one indented line (compact JSON), or None without one."""
    if change.witness is None:
        return None
    instance = dumps(change.witness.instance)
    return f"  witness ({change.witness.direction}): {instance}"


def change_to_text(change: Change) -> str:
    where = (
        change.new_pointer
        if change.old_pointer == change.new_pointer
        else f"{change.old_pointer} -> {change.new_pointer}"
    )
    tolerated = f", tolerated by {change.tolerated_by}" if change.tolerated_by else ""
    return (
        f"{change.level}: {change.id} at {where}: {change.message} "
        f"(backward: {_effect(change, change.backward)}, "
        f"forward: {_effect(change, change.forward)}{tolerated})"
    )


def github_annotation(
    change: Change,
    *,
    file: str | None,
    title_prefix: str = "",
    line: int | None = None,
    col: int | None = None,
) -> str:
    """One GitHub workflow command (``::error title=<rule-id>::...``) for a change."""
    text = change_to_text(change).split(": ", 1)[1]
    return workflow_command(
        _GITHUB_COMMAND[change.level],
        text,
        title=title_prefix + change.id,
        file=file,
        line=line,
        col=col,
    )


def markdown_cell(text: str) -> str:
    """Text in a Markdown table cell: ``|`` escaped, a newline a space, every other control,
    format and separator character written as ``\\uXXXX`` (a carriage return in a property
    name ended the table and wrote a verdict of its own), ``<`` an entity (a name from a
    schema never becomes raw HTML)."""
    return visible(text.replace("\n", " ")).replace("|", "\\|").replace("<", "&lt;")


def markdown_code(text: str) -> str:
    """``text`` as a code span in a table cell, whatever backticks it holds (CommonMark: a
    longer run of backticks around it, padded when it starts or ends with one)."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return fence + visible(padded.replace("\n", " ")).replace("|", "\\|") + fence


def markdown_table(changes: Iterable[Change]) -> str:
    """A Markdown table of changes, fit for a pull-request comment."""
    lines = [
        "| Level | Rule | Old pointer | New pointer | Message | Backward | Forward |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in changes:
        backward = _effect(c, c.backward) + (f" ({c.tolerated_by})" if c.tolerated_by else "")
        lines.append(
            f"| {c.level} | `{c.id}` | {markdown_code(c.old_pointer)} | "
            f"{markdown_code(c.new_pointer)} | {markdown_cell(c.message)} | {backward} | "
            f"{_effect(c, c.forward)} |"
        )
    return "\n".join(lines)


def summary(result: DiffResult) -> str:
    verdict = "compatible" if result.compatible else "INCOMPATIBLE"
    if result.identical:
        detail = "no changes"
    else:
        counts = {level: 0 for level in LEVELS}
        for change in result.changes:
            counts[change.level] += 1
        detail = ", ".join(f"{n} {level}" for level, n in counts.items() if n)
        noun = "change" if len(result.changes) == 1 else "changes"
        detail = f"{len(result.changes)} {noun} ({detail})"
    return f"{verdict} ({result.mode}, {result.policy}): {detail}"


def _draft_to_text(choice: DraftChoice) -> str:
    why = f"{choice.how}: {choice.evidence}" if choice.evidence else choice.how
    return f"{choice.draft} ({why})"


def draft_lines(result: DiffResult) -> list[str]:
    """``old: draft-07 (detected: array-form items at #/items)`` and the same for new."""
    if result.drafts is None:
        return []
    return [
        f"old: {_draft_to_text(result.drafts.old)}",
        f"new: {_draft_to_text(result.drafts.new)}",
    ]


def _drafts_to_json(result: DiffResult) -> dict[str, Any] | None:
    if result.drafts is None:
        return None
    return {
        side: {"draft": choice.draft, "how": choice.how, "evidence": choice.evidence}
        for side, choice in (("old", result.drafts.old), ("new", result.drafts.new))
    }


def render_text(result: DiffResult, *, verbose: bool = False) -> str:
    """The drafts, one line per change (``verbose``: each change's witness below it)."""
    lines = draft_lines(result)
    for change in result.changes:
        lines.append(change_to_text(change))
        witness = witness_line(change) if verbose else None
        if witness is not None:
            lines.append(witness)
    lines.append(summary(result))
    return render_lines(lines)


def render_json(result: DiffResult) -> str:
    document = {
        "compatible": result.compatible,
        "mode": result.mode,
        "policy": result.policy,
        "drafts": _drafts_to_json(result),
        "backward_compatible": result.backward_compatible,
        "forward_compatible": result.forward_compatible,
        "changes": [change_to_json(change) for change in result.changes],
    }
    return dumps(document, indent=True) + "\n"


def render_github(result: DiffResult) -> str:
    lines = [github_annotation(change, file=None) for change in result.changes]
    lines.append(summary(result))
    return render_lines(lines)


def _draft_to_markdown(side: str, choice: DraftChoice) -> str:
    why = f"{choice.how}: {markdown_code(choice.evidence)}" if choice.evidence else choice.how
    return f"- {side}: **{choice.draft}** ({markdown_cell(why)})\n"


def render_markdown(result: DiffResult) -> str:
    verdict = "compatible" if result.compatible else "**incompatible**"
    head = f"### Schema diff: {verdict} ({result.mode}, policy {result.policy})\n"
    if result.drafts is not None:
        head += "\n" + _draft_to_markdown("old", result.drafts.old)
        head += _draft_to_markdown("new", result.drafts.new)
    if result.identical:
        return head + "\nNo changes.\n"
    return head + "\n" + markdown_table(result.changes) + "\n"


@dataclass(frozen=True)
class SourceFile:
    """A compared document as reports place findings in it: ``file`` as the annotation or
    SARIF location names it (None: stdin, no place), its text and its parsed document (for
    the changes' fingerprints)."""

    file: str | None
    text: str
    document: Any = None

    @cached_property
    def index(self) -> PositionIndex | None:
        return PositionIndex.build(self.text) if self.file is not None and self.text else None

    def locate(self, pointer: str) -> tuple[str, int, int] | None:
        index = self.index
        at = index.locate(pointer) if index is not None else None
        if at is None or self.file is None:
            return None
        return self.file, at.line, at.column


def _uri(file: str) -> str:
    """A SARIF artifact URI: a relative path as is (forward slashes), an absolute one as a
    ``file://`` URI."""
    path = Path(file)
    return path.as_uri() if path.is_absolute() else path.as_posix()


def render_github_located(result: DiffResult, new: SourceFile | None = None) -> str:
    """Annotations on the line of NEW where each change's pointer is written."""
    lines = []
    for change in result.changes:
        at = new.locate(change.new_pointer) if new is not None else None
        lines.append(
            github_annotation(
                change,
                file=at[0] if at else None,
                line=at[1] if at else None,
                col=at[2] if at else None,
            )
        )
    lines.append(summary(result))
    return render_lines(lines)


def render_sarif_located(result: DiffResult, old: SourceFile, new: SourceFile) -> str:
    """SARIF 2.1.0: one result per change, located in NEW at its pointer (OLD at its own as a
    related location), fingerprinted by its rule, pointers and values (never its wording or
    line, so code scanning matches it across runs and line moves)."""
    from wiregate.diff.fingerprint import change_fingerprints
    from wiregate.reporters.sarif import SarifLocation, SarifResult, render_sarif

    results = []
    fingerprints = change_fingerprints(result.changes, old.document, new.document)
    for change, fingerprint in zip(result.changes, fingerprints, strict=True):
        at = new.locate(change.new_pointer)
        before = old.locate(change.old_pointer)
        text = change_to_text(change).split(": ", 1)[1]
        results.append(
            SarifResult(
                rule_id=change.id,
                level=change.level,
                message=text,
                location=SarifLocation(_uri(at[0]), at[1], at[2], "new") if at else None,
                fingerprint=fingerprint,
                related=(SarifLocation(_uri(before[0]), before[1], before[2], "old"),)
                if before
                else (),
                properties={"backward": change.backward, "forward": change.forward},
            )
        )
    return render_sarif(results)


def render_junit_diff(result: DiffResult) -> str:
    """JUnit XML: one test case, failed when the schemas are incompatible under the mode."""
    from wiregate.reporters.junit import JUnitCase, render_junit

    failing = [change_to_text(c) for c in result.changes if c.level == "error"]
    case = JUnitCase(
        classname="wiregate.diff",
        name=f"{result.mode} compatibility ({result.policy})",
        outcome="passed" if result.compatible else "failure",
        message=summary(result),
        text="\n".join(failing),
    )
    return render_junit("wiregate diff", [case])


DIFF_REPORTERS: dict[str, Callable[[DiffResult], str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "markdown": render_markdown,
    "junit": render_junit_diff,
}
#: Every ``--format`` of ``wiregate diff``: ``sarif`` needs the compared files
#: (``render_sarif_located``), for its locations and fingerprints.
DIFF_FORMATS = (*DIFF_REPORTERS, "sarif")
