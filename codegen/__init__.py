"""Code generation of typed models and exporter stubs from the contract.

``write(root)`` regenerates ``datafactory/wire`` in place; ``check(root)`` compares it with
what would be generated. The generator (datamodel-code-generator, black, isort, Jinja2: the
``codegen`` extra) is imported only when the fast header check cannot prove the committed code
fresh.
"""

from __future__ import annotations

from codegen.errors import BrokenSchemaError, CodegenError
from codegen.run import CheckResult, check, write

__all__ = ["BrokenSchemaError", "CheckResult", "CodegenError", "check", "write"]
