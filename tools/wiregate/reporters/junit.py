"""JUnit XML (one test suite, one test case per judged thing) for CI systems that show test
reports: ``wiregate drift`` (a case per copy) and ``wiregate diff`` (one case)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

__all__ = ["JUnitCase", "render_junit"]


@dataclass(frozen=True)
class JUnitCase:
    classname: str
    name: str
    outcome: str  # passed, failure, error or skipped
    message: str = ""  # one line: the verdict
    text: str = ""  # the details
    output: str = ""  # what a passed case reports (<system-out>), e.g. a summary


def _clean(text: str) -> str:
    # XML 1.0 cannot hold most control characters, even escaped.
    return "".join(c for c in text if c in "\t\n\r" or ord(c) >= 0x20)


def render_junit(suite: str, cases: Sequence[JUnitCase]) -> str:
    counts = {
        outcome: sum(1 for c in cases if c.outcome == outcome)
        for outcome in ("failure", "error", "skipped")
    }
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name={quoteattr(suite)} tests="{len(cases)}" '
        f'failures="{counts["failure"]}" errors="{counts["error"]}">',
        f'  <testsuite name={quoteattr(suite)} tests="{len(cases)}" '
        f'failures="{counts["failure"]}" errors="{counts["error"]}" '
        f'skipped="{counts["skipped"]}">',
    ]
    for case in cases:
        classname, name = quoteattr(_clean(case.classname)), quoteattr(_clean(case.name))
        head = f"    <testcase classname={classname} name={name}"
        if case.outcome == "passed":
            if not case.output:
                lines.append(head + "/>")
                continue
            lines.append(head + ">")
            lines.append(f"      <system-out>{escape(_clean(case.output))}</system-out>")
            lines.append("    </testcase>")
            continue
        lines.append(head + ">")
        tag = case.outcome
        message = quoteattr(_clean(case.message))
        if case.text:
            lines.append(f"      <{tag} message={message}>{escape(_clean(case.text))}</{tag}>")
        else:
            lines.append(f"      <{tag} message={message}/>")
        lines.append("    </testcase>")
    lines += ["  </testsuite>", "</testsuites>"]
    return "\n".join(lines) + "\n"
