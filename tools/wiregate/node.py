"""Node.js and the npm tools ``npm ci`` installed for wiregate: finding them, and naming what
is missing in one line. TypeScript extraction, TypeScript discovery and ``codegen --target
typescript`` all start node through here."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from wiregate.errors import UserError

__all__ = ["NodeToolMissing", "find_node", "node_modules_dir", "package_versions"]


class NodeToolMissing(UserError):
    """Node.js or one of the pinned npm packages is not there; the message says how to get it."""


def node_modules_dir() -> Path:
    """Where ``npm ci`` installed the tools: ``$WIREGATE_NODE_MODULES``, else ``node_modules``
    in the wiregate checkout this package runs from."""
    override = os.environ.get("WIREGATE_NODE_MODULES")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "node_modules"


def find_node(needed_by: str) -> str:
    """The node executable (``$WIREGATE_NODE``, else ``node`` on PATH); ``needed_by`` says
    what needs it in the error (``TypeScript copies need``)."""
    node = os.environ.get("WIREGATE_NODE") or shutil.which("node")
    if not node or not os.access(node, os.X_OK) or os.path.isdir(node):
        where = f" ({node})" if node else ""
        raise NodeToolMissing(
            f"node not found{where}: {needed_by} Node.js 20 or newer on PATH (or WIREGATE_NODE)"
        )
    return node


def package_versions(modules: Path, packages: Iterable[str], separator: str) -> list[str]:
    """``PACKAGE{separator}VERSION`` of each installed package (what an output depends on)."""
    versions = []
    for package in packages:
        try:
            manifest = json.loads((modules / package / "package.json").read_bytes())
            versions.append(f"{package}{separator}{manifest['version']}")
        except (OSError, ValueError, KeyError, TypeError):
            raise NodeToolMissing(
                f"{package} is not installed in {modules}: run `make venv` "
                "(or `npm ci` in the wiregate checkout)"
            ) from None
    return versions
