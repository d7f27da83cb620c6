"""Generated copies (``kind = "generated"``): ``wiregate drift`` checks a file ``wiregate
codegen --target`` wrote into a governed repository for staleness, byte for byte after
normalising line ends; a stale file is one breaking finding with the command that
regenerates it; every way the generator cannot run is one line with exit 2."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from codegen.targets import generate
from contracts import SCHEMA_FILES, locate
from wiregate.cli import main
from wiregate.drift.config import CopySpec, load_mirrors

MIRRORS = """\
version = 1
[[repository]]
name = "gov"
checkout = "gov"
role = "{role}"

[[repository.copy]]
id = "wire-types"
kind = "generated"
target = "typescript"
path = "src/wire.ts"

[[repository.copy]]
id = "wire-models"
kind = "generated"
target = "pydantic"
path = "wire/models.py"
"""


@pytest.fixture
def governed(tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A wiregate root (our contract, two generated copies) and the checkout ``gov`` in it,
    holding both files as `wiregate codegen --target` writes them."""
    root = tmp_path / "wg"
    (root / "contracts").mkdir(parents=True)
    for name in SCHEMA_FILES.values():
        (root / "contracts" / name).write_bytes((repo_root / "contracts" / name).read_bytes())
    (root / "pyproject.toml").write_text('[project]\nname = "wiregate"\n', encoding="utf-8")
    configure(root)
    monkeypatch.setenv("WIREGATE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("WIREGATE_EXTRACT_TIMEOUT", raising=False)
    monkeypatch.chdir(root)  # commands are shown relative to it
    for target, out in (("typescript", "gov/src/wire.ts"), ("pydantic", "gov/wire/models.py")):
        result = CliRunner().invoke(main, ["codegen", "--target", target, "--out", out])
        assert result.exit_code == 0, result.output
    return root


def configure(root: Path, role: str = "producer", text: str = MIRRORS) -> None:
    (root / "contracts/mirrors.toml").write_text(text.replace("{role}", role), encoding="utf-8")


def drift(root: Path, *args: str) -> tuple[int, list[str], list[str]]:
    result = CliRunner().invoke(main, ["--root", str(root), "drift", *args])
    return result.exit_code, result.stdout.splitlines(), result.stderr.splitlines()


def one_error(root: Path, *args: str) -> list[str]:
    """The error lines of a run that cannot judge: exit 2, one line per copy."""
    code, _, stderr = drift(root, *args)
    assert code == 2
    assert all(line.startswith("wiregate: error: ") for line in stderr)
    return [line.removeprefix("wiregate: error: ") for line in stderr]


def _stale(root: Path) -> None:
    path = root / "gov/src/wire.ts"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("  rank: number;\n", "  rank: string;\n"), encoding="utf-8")


def _rank_line(root: Path) -> int:
    lines = (root / "gov/src/wire.ts").read_text(encoding="utf-8").split("\n")
    return lines.index("  rank: string;") + 1


def test_the_config_declares_generated_copies(governed: Path) -> None:
    config = load_mirrors(locate(governed))
    (repository,) = config.repositories
    assert repository.copies == (
        CopySpec(
            id="wire-types",
            schema="",
            canonical_at="#",
            copy_at="#",
            role="producer",
            paths=("src/wire.ts",),
            where="repository[0].copy[0]",
            kind="generated",
            target="typescript",
        ),
        CopySpec(
            id="wire-models",
            schema="",
            canonical_at="#",
            copy_at="#",
            role="producer",
            paths=("wire/models.py",),
            where="repository[0].copy[1]",
            kind="generated",
            target="pydantic",
        ),
    )
    assert not repository.copies[0].code


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (
            'schema = "rollout-wire"',
            "repository[0].copy[0].schema: not a key of a copy of kind 'generated'",
        ),
        (
            'paths = ["a.ts"]',
            "repository[0].copy[0].paths: not a key of a copy of kind 'generated'",
        ),
    ],
)
def test_keys_that_do_not_belong_to_a_generated_copy(
    governed: Path, extra: str, error: str
) -> None:
    text = MIRRORS.replace('path = "src/wire.ts"\n', f'path = "src/wire.ts"\n{extra}\n')
    configure(governed, text=text)
    mirrors = governed / "contracts/mirrors.toml"
    assert one_error(governed) == [f"{mirrors}: {error}"]


def test_a_generated_copy_needs_a_target_and_a_safe_path(governed: Path) -> None:
    mirrors = governed / "contracts/mirrors.toml"
    configure(governed, text=MIRRORS.replace('target = "typescript"\n', ""))
    assert one_error(governed) == [
        f"{mirrors}: repository[0].copy[0]: a copy of kind 'generated' needs 'target'"
    ]
    configure(governed, text=MIRRORS.replace('"src/wire.ts"', '"../wire.ts"'))
    assert one_error(governed) == [
        f"{mirrors}: repository[0].copy[0].path: '../wire.ts' contains '..': paths must stay "
        "inside the checkout"
    ]
    configure(governed, text=MIRRORS.replace('target = "typescript"', 'target = "rust"'))
    (line,) = one_error(governed)
    assert line.startswith(f"{mirrors}: repository[0].copy[0].target: ")
    # A schema copy has no target or path.
    configure(governed, text=MIRRORS.replace('kind = "generated"\n', 'schema = "rollout-wire"\n'))
    assert one_error(governed) == [
        f"{mirrors}: repository[0].copy[0].path: not a key of a copy of kind 'schema'"
    ]


def test_fresh_files_are_identical_whatever_their_line_ends(governed: Path) -> None:
    assert drift(governed) == (
        0,
        [
            "gov wire-types (producer, must be forward compatible) src/wire.ts: identical",
            "gov wire-models (producer, must be forward compatible) wire/models.py: identical",
            "2 copies: 2 identical (strict)",
        ],
        [],
    )
    path = governed / "gov/wire/models.py"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert drift(governed)[0] == 0


def test_a_stale_file_fails_the_gate_with_the_command_that_regenerates_it(
    governed: Path,
) -> None:
    _stale(governed)
    line = _rank_line(governed)
    message = (
        "src/wire.ts is not what `wiregate codegen --target typescript` writes from the "
        f"contract now (first difference: line {line}): regenerate it with `wiregate codegen "
        "--target typescript --out gov/src/wire.ts`"
    )
    assert drift(governed) == (
        1,
        [
            "gov wire-types (producer, must be forward compatible) src/wire.ts: breaking drift: "
            "the generated file is not what `wiregate codegen --target typescript` writes from "
            "the contract",
            f"    error: {message} [1 change in src/wire.ts; copy {line}:1]",
            "    reproduce: wiregate codegen --target typescript --out gov/src/wire.ts",
            "gov wire-models (producer, must be forward compatible) wire/models.py: identical",
            "2 copies: 1 identical, 1 breaking drift (strict)",
        ],
        [],
    )
    code, stdout, _ = drift(governed, "--format", "json")
    report = json.loads("\n".join(stdout))
    types, models = report["copies"]
    assert (code, types["kind"], models["kind"]) == (1, "generated", "generated")
    assert (types["declared"], models["declared"]) == ("typescript", "pydantic")
    assert (types["verdict"], types["fails"], types["path"]) == (
        "breaking-drift",
        True,
        "src/wire.ts",
    )
    ((change,),) = [types["changes"]]
    assert (change["id"], change["level"], change["blocking"], change["message"]) == (
        "generated-stale",
        "error",
        True,
        message,
    )
    assert change["copy_location"] == {"file": "src/wire.ts", "line": line, "column": 1}
    assert types["reproduce"] == "wiregate codegen --target typescript --out gov/src/wire.ts"
    # Regenerating makes it fresh again.
    result = CliRunner().invoke(
        main, ["codegen", "--target", "typescript", "--out", "gov/src/wire.ts"]
    )
    assert result.exit_code == 0
    assert drift(governed)[0] == 0


def test_a_contract_edit_makes_the_generated_files_stale(governed: Path) -> None:
    path = governed / "contracts/rollout-wire.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    schema["$defs"]["PpoRecord"]["required"].append("completion_tokens")
    schema["$defs"]["PpoRecord"]["properties"]["completion_tokens"] = {"type": "integer"}
    path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    code, stdout, _ = drift(governed, "--format", "json")
    report = json.loads("\n".join(stdout))
    assert code == 1
    # The headers name the schema's hash: both files differ from their third line.
    assert [
        (c["copy"], c["verdict"], c["changes"][0]["copy_location"]["line"])
        for c in report["copies"]
    ] == [("wire-types", "breaking-drift", 3), ("wire-models", "breaking-drift", 3)]


def test_a_consumer_or_mirror_fails_its_own_direction(governed: Path) -> None:
    _stale(governed)
    for role, failed in (("consumer", ["backward"]), ("mirror", ["forward", "backward"])):
        configure(governed, role)
        code, stdout, _ = drift(governed, "--format", "json", "--copy", "wire-types")
        (copy,) = json.loads("\n".join(stdout))["copies"]
        assert (code, copy["failed"], copy["fails"]) == (1, failed, True)


def test_a_missing_generated_file_is_not_found(governed: Path) -> None:
    (governed / "gov/src/wire.ts").unlink()
    code, stdout, _ = drift(governed, "--copy", "wire-types")
    assert (code, stdout[1]) == (
        1,
        f"    {governed}/gov: copy 'wire-types' not found (tried: src/wire.ts)",
    )


def test_at_a_ref_and_new_since(governed: Path) -> None:
    repo = git.Repo.init(governed / "gov", initial_branch="main")
    repo.index.add(["src/wire.ts", "wire/models.py"])
    author = git.Actor("T", "t@example.invalid")
    repo.index.commit("generated", author=author, committer=author)
    _stale(governed)
    assert drift(governed, "--ref", "HEAD")[0] == 0  # as committed: fresh
    repo.index.add(["src/wire.ts"])
    repo.index.commit("edited by hand", author=author, committer=author)
    assert drift(governed, "--ref", "HEAD")[0] == 1
    # Staleness is never "already there": it fails until the file is regenerated.
    code, stdout, _ = drift(governed, "--new-since", "HEAD")
    assert (code, stdout[-1]) == (
        1,
        "2 copies: 1 identical, 1 breaking drift (strict); findings: 1 new, 0 present at HEAD",
    )


def test_history_has_nothing_to_judge_for_a_generated_copy(governed: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["--root", str(governed), "drift", "history", "--repo", "gov", "--copy", "wire-types"],
    )
    assert (result.exit_code, result.stderr) == (
        2,
        "wiregate: error: copy 'wire-types' is generated: drift checks it for staleness, it "
        "has no history to judge\n",
    )


def test_no_node(governed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIREGATE_NODE", str(governed / "no-node"))
    assert one_error(governed, "--copy", "wire-types") == [
        f"node not found ({governed}/no-node): `--target typescript` needs Node.js 20 or newer "
        "on PATH (or WIREGATE_NODE)"
    ]


def test_npm_packages_not_installed(governed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = governed / "empty"
    empty.mkdir()
    monkeypatch.setenv("WIREGATE_NODE_MODULES", str(empty))
    assert one_error(governed, "--copy", "wire-types") == [
        f"json-schema-to-typescript is not installed in {empty} (WIREGATE_NODE_MODULES): install the "
        "pinned tools there: json-schema-to-typescript@16.0.0 ts-json-schema-generator@2.4.0 typescript@5.8.3"
    ]


def test_datamodel_code_generator_not_installed(
    governed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing cached (the fixture's codegen run filled the cache), and an import of a module
    # set to None raises ImportError, as when it is not installed.
    monkeypatch.setenv("WIREGATE_CACHE_DIR", str(governed / "empty-cache"))
    monkeypatch.setitem(sys.modules, "datamodel_code_generator", None)
    assert one_error(governed, "--copy", "wire-models") == [
        "datamodel-code-generator is not installed: `--target pydantic` needs it "
        "(the codegen extra: pip install 'wiregate[codegen]')"
    ]


def test_a_generator_failure(governed: Path) -> None:
    path = governed / "contracts/rollout-wire.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    schema["$defs"]["BuildResult"]["allOf"] = [{"$ref": "#/$defs/BuildResult"}]
    path.write_text(json.dumps(schema, indent=2) + "\n", encoding="utf-8")
    assert one_error(governed) == [
        "json-schema-to-typescript failed: Cannot read properties of undefined (reading 'push')",
        "datamodel-code-generator failed: Generated model inheritance cycle: BuildResult "
        "(#/$defs/BuildResult) -> BuildResult (#/$defs/BuildResult)",
    ]


def test_generated_output_is_what_the_gate_compares_with(governed: Path) -> None:
    text = generate("typescript", locate(governed))
    assert (governed / "gov/src/wire.ts").read_text(encoding="utf-8") == text


def test_the_baseline_can_accept_a_stale_file_until_a_day(governed: Path) -> None:
    _stale(governed)
    result = CliRunner().invoke(
        main,
        ["--root", str(governed), "drift", "baseline", "--reason", "regenerated next release"],
    )
    assert result.exit_code == 0, result.output
    baseline = (governed / "contracts/drift-baseline.toml").read_text(encoding="utf-8")
    assert 'copy = "wire-types"\nrule = "generated-stale"\n' in baseline
    code, stdout, _ = drift(governed)
    assert (code, stdout[-1]) == (
        0,
        "2 copies: 1 identical, 1 breaking drift (strict); findings: 1 accepted",
    )


def test_an_accepted_stale_file_stays_accepted_only_as_it_is(governed: Path) -> None:
    _stale(governed)
    path = governed / "gov/src/wire.ts"
    stale = path.read_bytes()
    result = CliRunner().invoke(
        main, ["--root", str(governed), "drift", "baseline", "--reason", "next release"]
    )
    assert result.exit_code == 0, result.output
    # The drift fingerprint, the canonical JSON of the hashes of what should be and what is
    # as the values.
    wanted = generate("typescript", locate(governed)).encode("utf-8")
    values = [json.dumps(hashlib.sha256(data).hexdigest()) for data in (wanted, stale)]
    text = json.dumps(
        ["wiregate-drift-finding/1", "generated-stale", "gov", "wire-types", "#", "#", *values]
    )
    key = hashlib.sha256(text.encode("ascii")).hexdigest()[:16]
    baseline = (governed / "contracts/drift-baseline.toml").read_text(encoding="utf-8")
    assert f'fingerprint = "{key}"\n' in baseline
    accepted = "2 copies: 1 identical, 1 breaking drift (strict); findings: 1 accepted"
    path.write_bytes(stale.replace(b"\n", b"\r\n"))  # the same content, checked out CRLF
    code, stdout, _ = drift(governed)
    assert (code, stdout[-1]) == (0, accepted)
    # Another edit of the stale file is a new finding: the acceptance does not cover it.
    path.write_bytes(stale.replace(b"  temperature: number;\n", b"  temperature: string;\n"))
    code, stdout, _ = drift(governed, "--format", "json")
    (types, _models) = json.loads("\n".join(stdout))["copies"]
    ((change,),) = [types["changes"]]
    assert (code, change["id"], change["accepted"], change["blocking"]) == (
        1,
        "generated-stale",
        None,
        True,
    )
    assert change["fingerprint"] != key
    # Back as it was accepted: accepted again.
    path.write_bytes(stale)
    code, stdout, _ = drift(governed)
    assert (code, stdout[-1]) == (0, accepted)
