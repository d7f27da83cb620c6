"""At a ref (``--ref``, ``--new-since``, ``history``) a code copy is extracted from the files
committed at that ref, the same files the work tree holds at that commit: the same commit
gives the same schema both ways. Only the tsconfig's folder (TypeScript) or the model's own
package (Python) was written out before, so an import from beside them went missing at a ref
alone."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.extract.checkouts import commit_all, wiregate_root, write_files
from wiregate.cli import main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

MIRRORS = """\
version = 1
[[repository]]
name = "gov"
checkout = "gov"
role = "{role}"

[[repository.copy]]
id = "copy"
schema = "rollout-wire"
{what}
"""


@pytest.fixture
def root(tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A wiregate root (our contract) and an empty governed checkout ``gov`` in it."""
    monkeypatch.setenv("WIREGATE_CACHE_DIR", str(tmp_path / "cache"))
    return wiregate_root(tmp_path, repo_root)


def _configure(root: Path, role: str, what: str) -> None:
    text = MIRRORS.format(role=role, what=what)
    (root / "contracts/mirrors.toml").write_text(text, encoding="utf-8")


_RUNS = itertools.count()


def _changes(root: Path, *args: str) -> tuple[int, list[tuple[str, str]], str]:
    """(exit code, the copy's (rule, pointer) findings above info, its error message), with
    a cache of its own: each run extracts."""
    cache = root.parent / f"cache-{next(_RUNS)}"
    result = CliRunner().invoke(
        main, ["--root", str(root), "drift", "--format", "json", *args],
        env={"WIREGATE_CACHE_DIR": str(cache)},
    )  # fmt: skip
    assert result.exit_code in (0, 1, 2) and result.stdout.startswith("{"), result.output
    copy = json.loads(result.stdout)["copies"][0]
    found = sorted((c["id"], c["new_pointer"]) for c in copy["changes"] if c["level"] != "info")
    return result.exit_code, found, copy["message"] or ""


def test_a_typescript_import_from_outside_the_tsconfig_folder(root: Path, repo_root: Path) -> None:
    """The provenance type lives in ``packages/shared``, beside the tsconfig's folder: at the
    ref it was unresolved (``{}``) and another finding replaced the real one."""
    generated = root / "wire.ts"
    CliRunner().invoke(main, ["--root", str(repo_root), "codegen", "--target", "typescript",
                              "--out", str(generated)], catch_exceptions=False)  # fmt: skip
    wire = generated.read_text(encoding="utf-8")
    provenance = re.search(r"export interface DpoProvenance \{.*?\n\}\n", wire, re.S)
    assert provenance is not None
    shared = provenance.group(0).replace("n_gram_hash: NGramHash;", "n_gram_hash: number;")
    shared = shared.replace("DpoObjectiveScore;", "{ chosen: 0 | 1; rejected: 0 | 1 };")
    write_files(root / "gov", {
        "packages/core/src/wire.ts": 'import type { DpoProvenance } from "../../shared/prov";\n'
        + wire.replace(provenance.group(0), ""),
        "packages/core/tsconfig.json": '{"compilerOptions": {"strict": true}}\n',
        "packages/shared/prov.ts": shared,
    })  # fmt: skip
    commit_all(root / "gov")
    what = (
        'kind = "typescript"\ncanonical_at = "#/$defs/DpoRecord"\ntype = "DpoRecord"\n'
        'paths = ["packages/core/src/wire.ts"]'
    )
    _configure(root, "producer", what)
    expected = [("type-changed", "#/properties/provenance/properties/n_gram_hash/type")]
    assert _changes(root) == (1, expected, "")
    assert _changes(root, "--ref", "HEAD") == (1, expected, "")
    assert _changes(root, "--new-since", "HEAD")[0] == 0  # nothing new since the commit


def test_a_typescript_extends_file_under_another_name(root: Path) -> None:
    """``extends: ./config/base.json`` holds the ``paths`` alias: not written at the ref, the
    alias did not resolve and the field's type was lost."""
    write_files(root / "gov", {
        # A list, a name without .json, a comment: tsconfig allows each.
        "tsconfig.json": '{\n  // shared settings\n  "extends": ["./config/base"]\n}\n',
        "config/base.json": '{"compilerOptions": {"strict": true, "baseUrl": "..", '
        '"paths": {"@wire/*": ["lib/*"]}}}\n',
        "lib/score.ts": 'export interface Scores { chosen: "yes"; rejected: 0 | 1 }\n',
        "a.ts": 'import type { Scores } from "@wire/score";\n'
        "export interface T { objective_score: Scores }\n",
    })  # fmt: skip
    commit_all(root / "gov")
    what = (
        'kind = "typescript"\ncanonical_at = "#/$defs/DpoProvenance"\ntype = "T"\npaths = ["a.ts"]'
    )
    _configure(root, "producer", what)
    here = _changes(root)
    assert ("type-changed", "#/properties/objective_score/properties/chosen/type") in here[1]
    assert _changes(root, "--ref", "HEAD") == here


def test_a_python_model_importing_a_sibling_package(root: Path) -> None:
    """``from common.base import Base`` beside ``evomerge``: at the ref it was a missing
    dependency, named by a temporary folder that no longer existed."""
    write_files(root / "gov", {
        "common/__init__.py": "",
        "common/base.py": "from pydantic import BaseModel\n\n\nclass Base(BaseModel):\n"
        "    rollout_id: int\n",
        "evomerge/__init__.py": "",
        "evomerge/schemas/__init__.py": "",
        "evomerge/schemas/rollout.py": "from common.base import Base\n\n\n"
        "class RolloutTreeRecord(Base):\n    task: str\n",
    })  # fmt: skip
    commit_all(root / "gov")
    what = (
        'kind = "python"\ncanonical_at = "#/$defs/RolloutTreeRecord"\n'
        'model = "evomerge.schemas.rollout:RolloutTreeRecord"'
    )
    _configure(root, "consumer", what)
    here = _changes(root)
    assert ("type-changed", "#/properties/rollout_id/type") in here[1]
    assert _changes(root, "--ref", "HEAD") == here


def test_an_extends_that_no_json_string_holds_is_the_compiler_s_to_judge(root: Path) -> None:
    r"""``"extends": "./a\q"`` (an escape JSON has not) in a committed tsconfig: its search for
    the file to write ended in a traceback; the extraction now runs, as in the work tree."""
    write_files(root / "gov", {
        "tsconfig.json": '{"extends": "./a\\q", "compilerOptions": {"strict": true}}\n',
        "a.ts": "export interface T { objective_score: number }\n",
    })  # fmt: skip
    commit_all(root / "gov")
    what = (
        'kind = "typescript"\ncanonical_at = "#/$defs/DpoProvenance"\ntype = "T"\npaths = ["a.ts"]'
    )
    _configure(root, "producer", what)
    assert _changes(root, "--ref", "HEAD") == _changes(root)


def test_an_error_at_a_ref_names_the_checkout_and_the_ref(root: Path) -> None:
    write_files(root / "gov", {"m.py": "import not_installed_anywhere\n"})
    commit_all(root / "gov")
    what = 'kind = "python"\ncanonical_at = "#/$defs/RolloutTreeRecord"\nmodel = "m:M"'
    _configure(root, "consumer", what)
    code, _, message = _changes(root, "--ref", "HEAD")
    assert code == 2
    assert message.startswith(f"{root / 'gov'}@HEAD: m:M: cannot import: ")
    assert "wiregate-ref-" not in message


def test_a_large_lock_file_and_a_link_out_of_the_repository_change_nothing(root: Path) -> None:
    """Every JSON file of the checkout was written at the ref: a 6 MB package-lock.json was
    over the size limit there, and a link out of the repository was an error, where the work
    tree ran."""
    write_files(root / "gov", {
        "a.ts": 'export interface T { objective_score: { chosen: "yes"; rejected: 0 | 1 } }\n',
        "tsconfig.json": '{"compilerOptions": {"strict": true}}\n',
        "package-lock.json": '{"x": "' + "a" * 6_000_000 + '"}\n',
    })  # fmt: skip
    (root / "gov/vendor.d.ts").symlink_to("../../outside.d.ts")
    commit_all(root / "gov")
    what = (
        'kind = "typescript"\ncanonical_at = "#/$defs/DpoProvenance"\ntype = "T"\npaths = ["a.ts"]'
    )
    _configure(root, "producer", what)
    here = _changes(root)
    assert here[0] == 1 and here[2] == ""
    assert _changes(root, "--ref", "HEAD") == here
