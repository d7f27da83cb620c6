"""The per-change formatting functions that other reports reuse."""

from __future__ import annotations

from dataclasses import replace

from wiregate.diff import Change, DiffResult
from wiregate.diff.witness import Witness
from wiregate.reporters.diff import (
    DIFF_FORMATS,
    DIFF_REPORTERS,
    change_to_json,
    github_annotation,
    markdown_table,
    render_text,
    summary,
)

CHANGE = Change(
    id="enum-narrowed",
    level="warning",
    old_pointer="#/properties/a|b/enum",
    new_pointer="#/properties/a|b/enum",
    message='enum narrowed: "x,y" no longer accepted\nsecond line 100%',
    backward=False,
    forward=True,
    tolerated_by=None,
)


def test_the_reporter_registry() -> None:
    assert sorted(DIFF_REPORTERS) == ["github", "json", "junit", "markdown", "text"]
    assert sorted(DIFF_FORMATS) == ["github", "json", "junit", "markdown", "sarif", "text"]


def test_change_to_json() -> None:
    assert change_to_json(CHANGE) == {
        "id": "enum-narrowed",
        "level": "warning",
        "old_pointer": "#/properties/a|b/enum",
        "new_pointer": "#/properties/a|b/enum",
        "message": 'enum narrowed: "x,y" no longer accepted\nsecond line 100%',
        "backward": False,
        "forward": True,
        "tolerated_by": None,
        "root": {"old_pointer": "#/properties/a|b/enum", "new_pointer": "#/properties/a|b/enum"},
        "witness": None,
    }


def test_a_witness_in_json_and_verbose_text() -> None:
    witnessed = replace(CHANGE, level="error", witness=Witness("backward", {"a|b": "x,y"}))
    assert change_to_json(witnessed)["witness"] == {
        "direction": "backward",
        "instance": {"a|b": "x,y"},
    }
    result = DiffResult("backward", "strict", (witnessed,))
    # the message's newline is shown, not sent: the change is one line
    assert render_text(result, verbose=True).splitlines()[1:] == [
        '  witness (backward): {"a|b":"x,y"}',
        "INCOMPATIBLE (backward, strict): 1 change (1 error)",
    ]
    assert "witness" not in render_text(result)


def test_github_annotation_escapes_and_names_the_file() -> None:
    assert github_annotation(CHANGE, file="schemas/a,b.json", title_prefix="drift: ") == (
        "::warning file=schemas/a%2Cb.json,title=drift%3A enum-narrowed::enum-narrowed at "
        '#/properties/a|b/enum: enum narrowed: "x,y" no longer accepted%0Asecond line 100%25 '
        "(backward: no, forward: yes)"
    )
    info = Change("title-changed", "info", "#/title", "#/title", "title changed", True, True)
    assert github_annotation(info, file=None).startswith("::notice title=title-changed::")


def test_markdown_table_escapes_cells() -> None:
    assert markdown_table([CHANGE]).splitlines()[2] == (
        "| warning | `enum-narrowed` | `#/properties/a\\|b/enum` | `#/properties/a\\|b/enum` | "
        'enum narrowed: "x,y" no longer accepted second line 100% | no | yes |'
    )


def test_summary_and_empty_reports() -> None:
    empty = DiffResult("full", "lenient", ())
    assert summary(empty) == "compatible (full, lenient): no changes"
    assert DIFF_REPORTERS["markdown"](empty) == (
        "### Schema diff: compatible (full, policy lenient)\n\nNo changes.\n"
    )
    assert summary(DiffResult("backward", "strict", (CHANGE,))) == (
        "INCOMPATIBLE (backward, strict): 1 change (1 warning)"
    )


def test_markdown_code_spans_and_cells_hold_any_name() -> None:
    from wiregate.reporters.diff import markdown_cell, markdown_code

    assert markdown_code("#/properties/a") == "`#/properties/a`"
    assert markdown_code("#/properties/a`b") == "``#/properties/a`b``"
    assert markdown_code("`x") == "`` `x ``"
    assert markdown_code("a|b") == "`a\\|b`"
    assert markdown_cell("<img src=x onerror=alert(1)> a|b\nc") == (
        "&lt;img src=x onerror=alert(1)> a\\|b c"
    )


def test_a_line_break_in_a_name_never_ends_the_markdown_table() -> None:
    """A carriage return passed the Markdown escaping (only a newline was replaced): a
    property named "x\\r\\r### Schema diff: compatible\\r\\rNo changes.\\r\\r<!--" wrote a verdict
    of its own and hid the real findings in a comment."""
    from wiregate.diff import diff
    from wiregate.reporters.diff import render_markdown

    name = "x\r\r### Schema diff: compatible\u2028No changes.\x85\r<!--"
    old = {"type": "object", "additionalProperties": False}
    new = {"type": "object", "properties": {name: {}}, "additionalProperties": False}
    lines = render_markdown(diff(old, new)).splitlines()
    assert [line for line in lines if line.startswith("#")] == [
        "### Schema diff: compatible (backward, policy strict)"
    ]
    (row,) = [line for line in lines if line.startswith("| warning")]
    assert row == (
        "| warning | `property-added-to-closed-model` | `#` | `#/properties/x\\u000d\\u000d### "
        "Schema diff: compatible\\u2028No changes.\\u0085\\u000d<!--` | property "
        "'x\\r\\r### Schema diff: compatible\\u2028No changes.\\x85\\r&lt;!--' added to a "
        "closed model: old readers reject that key | yes | no |"
    )
