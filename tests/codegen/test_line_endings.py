"""Line ends: an LF and a CRLF checkout of the same commit get the same ``--check`` verdict, and
``.gitattributes`` keeps the contract, its fixtures and the generated code LF."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import git
import pytest

from codegen import check
from codegen.freshness import read_sources, schema_bytes
from codegen.layout import OUTPUT_DIR, generated_files
from contracts import SCHEMA_FILES

if TYPE_CHECKING:
    from tests.codegen.conftest import CliResult

    Cli = Callable[..., CliResult]

SCHEMAS = tuple(f"contracts/{name}" for name in SCHEMA_FILES.values())


def _to_crlf(path: Path) -> None:
    data = path.read_bytes()
    assert b"\r\n" not in data
    path.write_bytes(data.replace(b"\n", b"\r\n"))


def _crlf_files(root: Path, which: str) -> list[Path]:
    schemas = [root / name for name in SCHEMAS]
    generated = sorted((root / OUTPUT_DIR).glob("*.py"))
    return {"schemas": schemas, "generated": generated, "both": schemas + generated}[which]


def test_lf_schemas_keep_the_hash_of_their_raw_bytes(repo_root: Path) -> None:
    """Normalising line ends changes no LF file's hash: the committed headers stay fresh."""
    header = (repo_root / OUTPUT_DIR / "__init__.py").read_text(encoding="utf-8").splitlines()
    raw = {name: hashlib.sha256((repo_root / name).read_bytes()).hexdigest() for name in SCHEMAS}
    assert header[3:6] == [f"# source: {name} sha256={raw[name]}" for name in SCHEMAS]
    assert dict(read_sources(schema_bytes(repo_root)).schemas) == raw


@pytest.mark.parametrize("which", ["schemas", "generated", "both"])
def test_a_crlf_checkout_is_fresh_and_codegen_leaves_it_alone(
    cli: Cli, contract_copy: Path, which: str
) -> None:
    lf_sources = read_sources(schema_bytes(contract_copy))
    for path in _crlf_files(contract_copy, which):
        _to_crlf(path)
    assert read_sources(schema_bytes(contract_copy)) == lf_sources

    result = check(contract_copy)
    assert (result.fresh, result.fast, result.diff) == (True, True, "")
    run = cli("--root", str(contract_copy), "codegen", "--check")
    assert (run.exit_code, run.stdout, run.stderr) == (0, "", "")

    before = {p: p.read_bytes() for p in (contract_copy / OUTPUT_DIR).glob("*.py")}
    written = cli("--root", str(contract_copy), "codegen")
    assert (written.exit_code, written.stdout) == (0, "datafactory/wire is up to date\n")
    assert {p: p.read_bytes() for p in (contract_copy / OUTPUT_DIR).glob("*.py")} == before


def test_a_hand_edit_in_a_crlf_checkout_is_still_caught(cli: Cli, contract_copy: Path) -> None:
    for path in _crlf_files(contract_copy, "both"):
        _to_crlf(path)
    model = contract_copy / OUTPUT_DIR / "rollout_wire.py"
    data = model.read_bytes()
    assert data.count(b"    session_id: str\r\n") == 1
    model.write_bytes(data.replace(b"    session_id: str\r\n", b"    session_id: str | None\r\n"))

    stale = cli("--root", str(contract_copy), "codegen", "--check")
    assert stale.exit_code == 1
    assert stale.stdout.startswith("--- a/datafactory/wire/rollout_wire.py\n")
    assert "-    session_id: str | None\n+    session_id: str\n" in stale.stdout
    assert stale.stdout.count("\n@@ ") == 1  # the edited line only: line ends are no change
    assert cli("--root", str(contract_copy), "codegen").stdout == (
        "wrote datafactory/wire/rollout_wire.py\n"
    )
    assert cli("--root", str(contract_copy), "codegen", "--check").exit_code == 0


def test_a_schema_edit_in_a_crlf_checkout_is_still_caught(cli: Cli, contract_copy: Path) -> None:
    for path in _crlf_files(contract_copy, "both"):
        _to_crlf(path)
    schema = contract_copy / SCHEMAS[0]
    text = schema.read_bytes()
    anchor = b'"rank": {'
    assert text.count(anchor) == 1
    schema.write_bytes(text.replace(anchor, b'"policy_digest": {"type": "string"},\r\n' + anchor))

    stale = cli("--root", str(contract_copy), "codegen", "--check")
    assert stale.exit_code == 1
    assert "+    policy_digest: str | UnsetType = UNSET\n" in stale.stdout


def _commit(root: Path) -> git.Repo:
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as config:
        config.set_value("user", "name", "wiregate tests")
        config.set_value("user", "email", "tests@wiregate.invalid")
        config.set_value("commit", "gpgsign", "false")
        config.set_value("core", "autocrlf", "false")
    repo.git.add("--all")
    repo.index.commit("contract")
    return repo


@pytest.mark.parametrize("attributes", [True, False], ids=["gitattributes", "no-gitattributes"])
def test_an_autocrlf_clone_is_fresh(
    cli: Cli, repo_root: Path, contract_copy: Path, tmp_path: Path, attributes: bool
) -> None:
    """``git -c core.autocrlf=true clone``: the reported case, with and without our attributes."""
    if attributes:
        shutil.copyfile(repo_root / ".gitattributes", contract_copy / ".gitattributes")
    (contract_copy / "NOTES.txt").write_text("not covered by .gitattributes\n", encoding="utf-8")
    _commit(contract_copy)
    clone = tmp_path / "clone"
    git.Git().clone("-q", "-c", "core.autocrlf=true", str(contract_copy), str(clone))

    assert (clone / "NOTES.txt").read_bytes() == b"not covered by .gitattributes\r\n"
    crlf = sorted(
        path.relative_to(clone).as_posix()
        for path in [*(clone / "contracts").glob("*.json"), *(clone / OUTPUT_DIR).glob("*.py")]
        if b"\r\n" in path.read_bytes()
    )
    if attributes:
        assert crlf == []
    else:
        # Every JSON file of contracts/ (the contract's and the configuration files' schemas).
        schemas = [
            f"contracts/{path.name}" for path in (contract_copy / "contracts").glob("*.json")
        ]
        assert set(SCHEMAS) <= set(schemas)
        assert crlf == sorted(schemas + [f"{OUTPUT_DIR}/{name}" for name in generated_files()])
    run = cli("--root", str(clone), "codegen", "--check")
    assert (run.exit_code, run.stdout, run.stderr) == (0, "", "")
    assert git.Repo(clone).git.status("--porcelain") == ""


def test_gitattributes_keep_contract_fixtures_and_generated_code_lf(repo_root: Path) -> None:
    try:
        repo = git.Repo(repo_root)
    except git.InvalidGitRepositoryError:
        pytest.skip("not a git checkout (source tarball)")
    paths = [
        *SCHEMAS,
        "contracts/fixtures/rollout-wire/DpoRecord/valid/producer.json",
        f"{OUTPUT_DIR}/_runtime.py",
    ]
    assert repo.git.check_attr("text", "eol", "--", *paths).splitlines() == [
        line for path in paths for line in (f"{path}: text: set", f"{path}: eol: lf")
    ]
    # Every file the attributes cover is LF in the index: adding them changed no file.
    covered = repo.git.ls_files(
        "--eol", "--", "contracts/*.schema.json", "contracts/fixtures", f"{OUTPUT_DIR}/*.py"
    ).splitlines()
    assert len(covered) > len(paths)
    assert [line for line in covered if not line.startswith("i/lf ")] == []
    assert [line for line in covered if "attr/text eol=lf" not in line] == []
