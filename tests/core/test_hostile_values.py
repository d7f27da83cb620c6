"""Hostile values in schema documents: lone surrogates, integers of any size, numbers beyond
double range. Each is read, compared and shown; the exit code is the verdict's."""

from __future__ import annotations

import json
import sys
import threading
from decimal import Decimal
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from wiregate.cli import internal_errors, main
from wiregate.diff import diff
from wiregate.diff.values import canonical, json_equal, json_key
from wiregate.exactjson import ExactNumber, dumps, exact_integers
from wiregate.sources import parse_document


def run(tmp_path: Path, old: str, new: str, *args: str) -> tuple[int, str, str]:
    (tmp_path / "old.json").write_text(old, encoding="utf-8")
    (tmp_path / "new.json").write_text(new, encoding="utf-8")
    files = [str(tmp_path / "old.json"), str(tmp_path / "new.json")]
    result = CliRunner().invoke(main, ["diff", *files, *args])
    return result.exit_code, result.stdout, result.stderr


# The first lines of a text report: neither document shows a draft.
NO_SIGNAL = "2020-12 (default: no draft-specific keyword)"
DRAFTS = f"old: {NO_SIGNAL}\nnew: {NO_SIGNAL}\n"
SURROGATE_OLD = r'{"type": "object", "properties": {"\ud800": {"const": "\ud800"}}}'
SURROGATE_NEW = (
    r'{"type": "object", "properties": {"\ud800": {"const": "\udc00"}}, "required": ["\ud800"]}'
)


def test_lone_surrogates_in_text(tmp_path: Path) -> None:
    assert run(tmp_path, SURROGATE_OLD, SURROGATE_NEW) == (
        1,
        DRAFTS
        + "error: required-added at # -> #/required: property '\\ud800' became required: old "
        "records without it are rejected (backward: no, forward: yes)\n"
        'error: const-changed at #/properties/\\ud800/const: const changed from "\\ud800" to '
        '"\\udc00" (backward: no, forward: no)\n'
        "INCOMPATIBLE (backward, strict): 2 changes (2 error)\n",
        "",
    )
    # The same surrogate on both sides: nothing changed, exit 0.
    assert run(tmp_path, SURROGATE_OLD, SURROGATE_OLD) == (
        0,
        DRAFTS + "compatible (backward, strict): no changes\n",
        "",
    )


@pytest.mark.parametrize("output_format", ["json", "github", "markdown"])
def test_lone_surrogates_in_every_format(tmp_path: Path, output_format: str) -> None:
    code, out, err = run(tmp_path, SURROGATE_OLD, SURROGATE_NEW, "--format", output_format)
    assert (code, err) == (1, "")
    assert "\\ud800" in out
    if output_format == "json":
        change = json.loads(out)["changes"][1]
        assert change["old_pointer"] == "#/properties/\ud800/const"  # the key itself, escaped
        assert change["message"] == 'const changed from "\\ud800" to "\\udc00"'


DIGITS = "9" * 5000


def test_a_5000_digit_bound_is_compared_and_shown_in_full(tmp_path: Path) -> None:
    old = f'{{"type": "integer", "maximum": {DIGITS}, "const": {DIGITS}}}'
    new = f'{{"type": "integer", "maximum": {DIGITS[:-1]}8, "const": {DIGITS}}}'
    code, out, err = run(tmp_path, old, new, "--format", "json")
    assert (code, err) == (1, "")
    assert [(c["id"], c["message"]) for c in json.loads(out)["changes"]] == [
        ("maximum-tightened", f"maximum tightened from {DIGITS} to {DIGITS[:-1]}8"),
    ]
    assert run(tmp_path, old, old)[:2] == (
        0,
        DRAFTS + "compatible (backward, strict): no changes\n",
    )


def test_the_library_leaves_the_callers_digit_limit_alone() -> None:
    before = sys.get_int_max_str_digits()
    document = parse_document(f'{{"maximum": {DIGITS}}}'.encode(), "s.json")
    assert document["maximum"] == 10**5000 - 1
    assert str(document["maximum"]) == DIGITS
    result = diff({"maximum": 10**5000}, {"maximum": 10**5000 - 1})  # ints a caller built
    assert [c.message for c in result.changes] == [
        f"maximum tightened from 1{'0' * 5000} to {DIGITS}"
    ]
    assert sys.get_int_max_str_digits() == before
    with pytest.raises(ValueError, match="Exceeds the limit"):
        str(10**5000)


def test_a_million_digits_take_no_quadratic_time(tmp_path: Path) -> None:
    big = "7" * 1_000_000
    old = f'{{"type": "integer", "minimum": {big}}}'
    new = f'{{"type": "integer", "minimum": {big}1}}'
    code, out, _ = run(tmp_path, old, new, "--format", "json")
    assert code == 1
    assert json.loads(out)["changes"][0]["message"] == f"minimum tightened from {big} to {big}1"


def test_numbers_beyond_double_range_are_kept_as_written(tmp_path: Path) -> None:
    old = '{"type": "number", "maximum": 1e400, "enum": [1e400, 1e-400, 0]}'
    new = '{"type": "number", "maximum": 2e400, "enum": [10E399, 1e-400, 0.0]}'
    assert run(tmp_path, old, new) == (
        0,
        DRAFTS + "warning: maximum-loosened at #/maximum: maximum loosened from 1e400 to 2e400 "
        "(backward: yes, forward: no)\n"
        "compatible (backward, strict): 1 change (1 warning)\n",
        "",
    )
    code, out, _ = run(tmp_path, '{"const": 1e400}', '{"const": 1e-400}', "--format", "json")
    assert code == 1
    assert json.loads(out)["changes"][0]["message"] == "const changed from 1e400 to 1e-400"


def test_exact_numbers_compare_by_value() -> None:
    big = ExactNumber("1e400")
    assert (str(big), f"{big}", repr(big)) == ("1e400", "1e400", "1e400")
    assert json_equal(big, ExactNumber("10E399")) and json_equal(big, 10**400)
    assert json_key(big) == json_key(ExactNumber("10e399")) == json_key(10**400)
    assert json_key(ExactNumber("1e-400")) == json_key(ExactNumber("10e-401"))
    assert json_key(ExactNumber("1e-400")) != json_key(0)
    assert not json_equal(big, float("inf")) and big > 1.7e308
    assert canonical({"a": [big, ExactNumber("-1.5e-999")]}) == b'{"a":[1e400,-1.5e-999]}'
    assert dumps([Decimal("2.50")]) == "[2.50]"


def test_an_unexpected_exception_is_one_line_and_exit_3(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def broken() -> None:
        raise RuntimeError("no\nsuch thing")

    with pytest.raises(SystemExit) as caught:
        internal_errors(broken)
    assert caught.value.code == 3
    assert capsys.readouterr() == ("", "wiregate: internal error: RuntimeError: no such thing\n")


def test_click_exits_and_interrupts_pass_through() -> None:
    def usage() -> None:
        raise click.UsageError("bad")

    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(click.UsageError):
        internal_errors(usage)
    with pytest.raises(KeyboardInterrupt):
        internal_errors(interrupted)
    assert internal_errors(lambda x: x + 1, 1) == 2


def test_the_integer_limit_comes_back_whatever_order_threads_leave_in() -> None:
    """Thread A lifts the limit, B enters, A leaves, B leaves: each saved and restored the
    process's limit on its own, so B restored A's lifted one and the limit was gone for good
    (export() runs in any thread a caller likes)."""
    before = sys.get_int_max_str_digits()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    inside: list[int] = []

    def first() -> None:
        with exact_integers():
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def second() -> None:
        a_in.wait(10)
        with exact_integers():
            b_in.set()
            a_out.wait(10)
            inside.append(sys.get_int_max_str_digits())  # A has left: still lifted for B

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert inside == [0]
    assert sys.get_int_max_str_digits() == before != 0
