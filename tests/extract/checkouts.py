"""What an extraction test lays out: a wiregate root holding our contract, and governed
checkouts written file by file, committed with git."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from contracts import SCHEMA_FILES


def wiregate_root(base: Path, repo_root: Path) -> Path:
    """``base/wg``: our contract's schemas and a pyproject naming wiregate (what ``--root``
    looks for), with an empty governed checkout ``gov`` in it."""
    root = base / "wg"
    (root / "contracts").mkdir(parents=True)
    for name in SCHEMA_FILES.values():
        shutil.copy(repo_root / "contracts" / name, root / "contracts" / name)
    (root / "pyproject.toml").write_text('[project]\nname = "wiregate"\n', encoding="utf-8")
    (root / "gov").mkdir()
    return root


def write_files(base: Path, files: dict[str, str]) -> None:
    """Each file under ``base`` (its folders made) with its text."""
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text, encoding="utf-8")


def commit_all(checkout: Path, message: str = "types") -> None:
    """A new repository at ``checkout`` holding everything in it, in one commit."""
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", message]):
        git_output(checkout, *args)


def git_output(cwd: Path, *args: str, data: bytes | None = None) -> str:
    """What git printed, stripped; a failure raises."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd, input=data, check=True, capture_output=True,
    )  # fmt: skip
    return done.stdout.decode().strip()


def crafted_tree(gov: Path, *entries: tuple[str, str]) -> str:
    """A tree object holding ``entries`` ((name, tree sha)) as written by hand: git's own
    commands never make a ``..`` entry, a hostile repository's objects may hold one."""
    data = b"".join(b"40000 " + name.encode() + b"\0" + bytes.fromhex(sha) for name, sha in entries)
    return git_output(gov, "hash-object", "-t", "tree", "-w", "--literally", "--stdin", data=data)


def commit_with_pkg(gov: Path, tree: str) -> str:
    """A commit of the checkout's HEAD tree with ``tree`` added as ``pkg``."""
    listing = git_output(gov, "ls-tree", "HEAD") + f"\n040000 tree {tree}\tpkg\n"
    return git_output(
        gov, "commit-tree", git_output(gov, "mktree", data=listing.encode()), "-m", "crafted"
    )
