"""The generator stack is the ``codegen`` extra: a plain install does not pull it, ``--check`` of
fresh code does not need it, and generating without it is one clear line, exit 2."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from codegen.freshness import PINNED_TOOLS
from codegen.layout import OUTPUT_DIR

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

GENERATOR_STACK = {"datamodel-code-generator", "black", "isort", "jinja2"}
REPO_ROOT = Path(__file__).resolve().parents[2]

# Runs wiregate with the generator stack unimportable, as in an install without the extra.
WITHOUT_EXTRA = """
import sys
from importlib.abc import MetaPathFinder

class Missing(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"datamodel_code_generator", "black", "isort", "jinja2"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Missing())
from wiregate.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _name(requirement: str) -> str:
    found = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert found is not None
    return found.group().lower()


def test_the_generator_stack_is_only_in_the_codegen_extra() -> None:
    requires = metadata.requires("wiregate") or []
    stack = [r for r in requires if _name(r) in GENERATOR_STACK]
    assert sorted(_name(r) for r in stack) == sorted(GENERATOR_STACK)
    assert all(r.endswith('; extra == "codegen"') for r in stack), stack
    plain = [_name(r) for r in requires if "extra ==" not in r]
    assert not GENERATOR_STACK & set(plain)
    assert "msgspec" in plain


def test_the_extra_pins_what_the_generator_fingerprint_names() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extra = project["project"]["optional-dependencies"]["codegen"]
    pinned = {_name(r): r.split("==")[1] for r in extra if "==" in r}
    assert pinned == PINNED_TOOLS
    assert {_name(r) for r in extra} == GENERATOR_STACK
    assert {tool: metadata.version(tool) for tool in PINNED_TOOLS} == PINNED_TOOLS


def _without_extra(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRA, *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_codegen_without_the_extra_is_one_line_exit_2(contract_copy: Path) -> None:
    before = {p.name: p.read_bytes() for p in (contract_copy / OUTPUT_DIR).glob("*.py")}
    done = _without_extra("--root", str(contract_copy), "codegen")
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "wiregate: error: the code generator needs the codegen extra "
        "(black is not installed): pip install 'wiregate[codegen]'\n",
    )
    assert {p.name: p.read_bytes() for p in (contract_copy / OUTPUT_DIR).glob("*.py")} == before


def test_check_of_fresh_code_needs_no_extra_and_stale_code_names_it(contract_copy: Path) -> None:
    fresh = _without_extra("--root", str(contract_copy), "codegen", "--check")
    assert (fresh.returncode, fresh.stdout, fresh.stderr) == (0, "", "")
    schema = contract_copy / "contracts" / "rollout-wire.schema.json"
    schema.write_text(schema.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    stale = _without_extra("--root", str(contract_copy), "codegen", "--check")
    assert (stale.returncode, stale.stdout) == (2, "")
    assert stale.stderr.endswith("pip install 'wiregate[codegen]'\n")
    assert stale.stderr.count("\n") == 1


def test_the_generated_package_imports_without_the_extra(tmp_path: Path) -> None:
    package = tmp_path / "datafactory"
    shutil.copytree(REPO_ROOT / OUTPUT_DIR, package / "wire", ignore=_caches)
    (package / "__init__.py").write_text("", encoding="utf-8")
    code = WITHOUT_EXTRA.split("from wiregate.cli")[0] + (
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from datafactory.wire import RolloutBranchRecord, decode, encode\n"
        "import datafactory.wire as w\n"
        "print(w.__file__.startswith(sys.path[0]), sorted(sys.modules.keys() & "
        "{'black', 'isort', 'jinja2', 'datamodel_code_generator'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "True []\n"


def _caches(_directory: str, names: list[str]) -> list[str]:
    return [name for name in names if name == "__pycache__"]


def test_the_codegen_hook_installs_the_extra() -> None:
    """The hook's environment is a plain install: it names the extra's packages itself."""
    import yaml

    hooks = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "wiregate-codegen")
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert hook["additional_dependencies"] == project["project"]["optional-dependencies"]["codegen"]
