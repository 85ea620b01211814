"""The docs a test keeps true: docs/layout.md names every module of every package."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: modules the layout's prose covers for every package: each component's ``main.py`` (its command)
#: and ``__main__.py``
GENERAL = {"main", "__main__"}


def package_rows() -> dict[str, str]:
    """``minik8s/<package>`` → the text of its row in docs/layout.md's table."""
    rows = {}
    for line in (ROOT / "docs" / "layout.md").read_text().splitlines():
        m = re.match(r"\| `(minik8s/\w+)` \|(.*)\|$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def test_layout_names_every_module_of_every_package() -> None:
    rows = package_rows()
    missing: dict[str, list[str]] = {}
    for package in sorted(p for p in (ROOT / "minik8s").iterdir() if (p / "__init__.py").exists()):
        row = rows.get(f"minik8s/{package.name}")
        assert row is not None, f"docs/layout.md has no row for minik8s/{package.name}"
        names = [f"{p.stem}.py" for p in package.glob("*.py") if p.stem not in GENERAL | {"__init__"}]
        names += [f"{p.name}/" for p in package.iterdir() if (p / "__init__.py").exists()]
        absent = sorted(n for n in names if f"`{n}`" not in row)
        if absent:
            missing[package.name] = absent
    assert not missing, f"modules docs/layout.md does not name: {missing}"
