"""Node.js and the npm tools wiregate runs (``npm ci`` in a checkout; in the user's cache for
an installed wiregate): finding them, and naming what is missing, and how to install it, in
one line. TypeScript extraction, TypeScript discovery and ``codegen --target
typescript`` all start node through here."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from wiregate.errors import UserError

__all__ = [
    "PINNED_NPM_PACKAGES",
    "NodeToolMissing",
    "find_node",
    "node_modules_dir",
    "package_versions",
]

#: The npm packages wiregate runs, at the versions ``package.json`` pins (a test keeps the two
#: equal): what an installed wiregate, without its checkout, asks to have installed.
PINNED_NPM_PACKAGES = {
    "json-schema-to-typescript": "16.0.0",
    "ts-json-schema-generator": "2.4.0",
    "typescript": "5.8.3",
}


class NodeToolMissing(UserError):
    """Node.js or one of the pinned npm packages is not there; the message says how to get it."""


def _checkout_modules() -> Path:
    return Path(__file__).resolve().parents[2] / "node_modules"


def user_modules() -> Path:
    """Where an installed wiregate (a wheel: a pre-commit hook, a CI job) looks for the tools
    when it runs from no checkout: per user, beside the extraction cache."""
    from wiregate.extract.cache import cache_dir

    return cache_dir() / "npm" / "node_modules"


def node_modules_dir() -> Path:
    """Where the tools are: ``$WIREGATE_NODE_MODULES``, else ``node_modules`` in the wiregate
    checkout this package runs from (``npm ci``), else, for an installed wiregate, the user's
    (``user_modules``)."""
    override = os.environ.get("WIREGATE_NODE_MODULES")
    if override:
        return Path(override)
    checkout = _checkout_modules()
    # A wiregate checkout (its package.json beside): ``make`` installs the tools there.
    return checkout if (checkout.parent / "package.json").is_file() else user_modules()


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
            raise NodeToolMissing(f"{package} is not installed in {_how(modules)}") from None
    return versions


def _how(modules: Path) -> str:
    """Where the tools were looked for, and how to install them there."""
    if modules == _checkout_modules():
        return f"{modules}: run `make venv` (or `npm ci` in the wiregate checkout)"
    pinned = " ".join(f"{name}@{version}" for name, version in sorted(PINNED_NPM_PACKAGES.items()))
    if os.environ.get("WIREGATE_NODE_MODULES"):
        return f"{modules} (WIREGATE_NODE_MODULES): install the pinned tools there: {pinned}"
    return (
        f"{modules}: run `npm install --no-save --prefix {modules.parent} {pinned}` once "
        "(or set WIREGATE_NODE_MODULES)"
    )
