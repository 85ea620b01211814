"""The import contracts of docs/architecture.md ("Layers"), checked by import-linter.

The contracts are ``[tool.importlinter]`` in pyproject.toml: minik8s.api imports nothing
else of minik8s; minik8s.client only minik8s.api; the components never import each other
or the apiserver; only the apiserver imports the etcd client (aetcd); no import cycles
between sibling modules; kubectl verbs, controllers and scheduler plugins are independent
of each other.  A broken contract prints the offending import chains.
"""

from __future__ import annotations

from pathlib import Path

from importlinter.cli import lint_imports

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_import_contracts_are_kept() -> None:
    assert lint_imports(config_filename=str(PYPROJECT), no_cache=True, no_logo=True) == 0
