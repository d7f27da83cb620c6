"""``--target typescript``: json-schema-to-typescript (npm, pinned in ``package-lock.json``,
installed by ``npm ci``), run by Node.js as a subprocess with a time limit and no network.

Open objects (the contract's default) get an ``[k: string]: unknown`` index signature, closed
ones none; ``const`` and ``enum`` become literal types; ``integer`` is ``number`` (TypeScript
has one number type); patterns and length bounds have no TypeScript spelling and are left to
the descriptions and the validator.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from codegen.errors import shorten
from codegen.targets import (
    ROOT_NAME,
    TargetError,
    combined_schema,
    comment_header,
    header_lines,
    module_digest,
)
from contracts import Contract
from wiregate.node import find_node, node_modules_dir, package_versions

__all__ = ["fingerprint", "render"]

_SCRIPT = Path(__file__).resolve().parent / "ts_generate.cjs"
#: Packages whose exact version shapes the output.
_PACKAGES = ("json-schema-to-typescript", "prettier")


def _node() -> str:
    return find_node("`--target typescript` needs")


def _versions(modules: Path) -> list[str]:
    return package_versions(modules, _PACKAGES, " ")


def fingerprint() -> list[str]:
    """What the output depends on besides the contract; raises when a tool is missing (a
    one-line :class:`wiregate.node.NodeToolMissing`)."""
    _node()
    return [*_versions(node_modules_dir()), module_digest(_SCRIPT, Path(__file__))]


def render(contract: Contract, digests: list[tuple[str, str, str]]) -> str:
    from wiregate.extract.typescript import timeout_seconds

    modules = node_modules_dir()
    versions = _versions(modules)
    node = _node()
    request = json.dumps({"schema": combined_schema(contract), "name": ROOT_NAME})
    limit = timeout_seconds()
    try:
        completed = subprocess.run(
            [node, str(_SCRIPT), str(modules)],
            input=request.encode("utf-8"),
            capture_output=True,
            timeout=limit,
            cwd=modules,
            check=False,
            # No proxy or registry settings reach it: the generator reads its input only.
            env={"PATH": os.environ.get("PATH", ""), "NODE_OPTIONS": "--max-old-space-size=2048"},
        )
    except subprocess.TimeoutExpired:
        raise TargetError(
            f"json-schema-to-typescript timed out after {limit:g} s (WIREGATE_EXTRACT_TIMEOUT)"
        ) from None
    except OSError as exc:
        raise TargetError(f"cannot run node ({node}): {exc.strerror or exc}") from None
    try:
        reply = json.loads(completed.stdout)
        if not isinstance(reply, dict) or not isinstance(reply.get("ts", reply.get("error")), str):
            raise ValueError(reply)
    except ValueError:
        last = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = last[-1] if last else f"exit status {completed.returncode}"
        raise TargetError(f"json-schema-to-typescript gave no result: {detail}") from None
    if "error" in reply:
        raise TargetError(f"json-schema-to-typescript failed: {shorten(str(reply['error']))}")
    body = str(reply["ts"]).replace("\r\n", "\n").lstrip("\n")
    head = comment_header(header_lines(digests, "typescript", ", ".join(versions)), "//")
    return head + "\n" + body.rstrip("\n") + "\n"
