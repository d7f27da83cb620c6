"""The extraction cache never answers what a fresh extraction would not: a file created where
an import looked, a declaration file under node_modules edited, a module reached through a
symbolic link edited, a run at a ref before the work tree. Each case extracts, changes the
checkout, and extracts again with the same cache: the answer is the fresh one."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.extract.checkouts import commit_all, write_files
from wiregate.extract.python import extract_models
from wiregate.extract.typescript import Extracted, extract_types

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs node")


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WIREGATE_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "checkout"
    root.mkdir()
    return root


def _ts(root: Path, path: str, name: str) -> Any:
    outcome = extract_types(root, path, [name])[name]
    assert isinstance(outcome, Extracted), outcome
    return outcome.schema["properties"]


def _py(root: Path, model: str) -> Any:
    outcome = extract_models(root, ".", [model], "validation")[model]
    assert isinstance(outcome, Extracted), outcome
    return outcome.schema["properties"]


@needs_node
def test_a_typescript_file_created_where_an_import_looked(checkout: Path) -> None:
    write_files(checkout, {
        "tsconfig.json": '{"compilerOptions": {"strict": true}}\n',
        "b.ts": 'import type { Missing } from "./later";\nexport interface T { m: Missing }\n',
    })  # fmt: skip
    assert _ts(checkout, "b.ts", "T") == {"m": {}}  # unresolved: anything
    write_files(checkout, {"later.ts": "export interface Missing { z: number }\n"})
    assert _ts(checkout, "b.ts", "T")["m"]["properties"] == {"z": {"type": "number"}}


@needs_node
def test_a_declaration_file_under_node_modules_edited(checkout: Path) -> None:
    write_files(checkout, {
        "tsconfig.json": '{"compilerOptions": {"strict": true}}\n',
        "node_modules/proto/package.json": '{"name": "proto", "types": "index.d.ts"}\n',
        "node_modules/proto/index.d.ts": "export interface P { a: string }\n",
        "c.ts": 'import type { P } from "proto";\nexport interface T { p: P }\n',
    })  # fmt: skip
    assert _ts(checkout, "c.ts", "T")["p"]["properties"] == {"a": {"type": "string"}}
    write_files(checkout, {"node_modules/proto/index.d.ts": "export interface P { a: number }\n"})
    assert _ts(checkout, "c.ts", "T")["p"]["properties"] == {"a": {"type": "number"}}


def test_a_python_module_created_where_an_import_looked(checkout: Path) -> None:
    write_files(checkout, {
        "pkg/__init__.py": "",
        "pkg/models.py": "from pydantic import BaseModel\n"
        "try:\n    from .extra import Extra\nexcept ImportError:\n    class Extra(BaseModel):\n"
        "        pass\n\n\nclass M(Extra):\n    a: int\n",
    })  # fmt: skip
    assert list(_py(checkout, "pkg.models:M")) == ["a"]
    write_files(checkout, {"pkg/extra.py": "from pydantic import BaseModel\n\n\n"
                      "class Extra(BaseModel):\n    c: str\n"})  # fmt: skip
    assert list(_py(checkout, "pkg.models:M")) == ["c", "a"]


def test_a_python_module_reached_through_a_symbolic_link_edited(
    checkout: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("from pydantic import BaseModel\n\n\nclass Base(BaseModel):\n"
                       "    y: int\n", encoding="utf-8")  # fmt: skip
    write_files(checkout, {
        "pkg/__init__.py": "",
        "pkg/models.py": "from pkg.base import Base\n\n\nclass M(Base):\n    a: int\n",
    })  # fmt: skip
    (checkout / "pkg/base.py").symlink_to(outside)
    assert list(_py(checkout, "pkg.models:M")) == ["y", "a"]
    outside.write_text("from pydantic import BaseModel\n\n\nclass Base(BaseModel):\n"
                       "    y: int\n    z: int\n", encoding="utf-8")  # fmt: skip
    assert list(_py(checkout, "pkg.models:M")) == ["y", "z", "a"]


@needs_node
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_ref_run_then_the_work_tree_with_a_file_not_committed(checkout: Path) -> None:
    """At the ref the import resolves to nothing; the work tree holds the file, not yet
    committed: the work tree's run is not answered from the ref's entry."""
    from wiregate.drift.copies import GitTree

    write_files(checkout, {
        "tsconfig.json": '{"compilerOptions": {"strict": true}}\n',
        "b.ts": 'import type { Missing } from "./later";\nexport interface T { m: Missing }\n',
    })  # fmt: skip
    commit_all(checkout)
    write_files(checkout, {"later.ts": "export interface Missing { z: number }\n"})
    tree = GitTree(checkout, "HEAD")
    try:
        code = tree.code_root()
        code.materialise("", True, lambda name: name.endswith((".ts", ".json")))
        assert _ts(code.path, "b.ts", "T") == {"m": {}}
    finally:
        tree.close()
    assert _ts(checkout, "b.ts", "T")["m"]["properties"] == {"z": {"type": "number"}}


@needs_node
def test_a_typescript_folder_created_where_an_import_looked(checkout: Path) -> None:
    """Resolution looks inside ``./lib`` only once it exists: a folder and an absent path
    were one value to the cache."""
    write_files(checkout, {
        "tsconfig.json": '{"compilerOptions": {"strict": true}}\n',
        "a.ts": 'import type { Extra } from "./lib";\nexport interface T { x: Extra }\n',
    })  # fmt: skip
    assert _ts(checkout, "a.ts", "T") == {"x": {}}
    write_files(checkout, {"lib/index.ts": "export type Extra = string;\n"})
    assert _ts(checkout, "a.ts", "T") == {"x": {"type": "string"}}
