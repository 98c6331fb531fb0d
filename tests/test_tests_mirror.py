"""tests/ mirrors the packages where it has been made to: every ``agentsproof/core`` module
has its own ``tests/core/test_<module>.py`` that imports it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIRRORED = ("core",)


def test_every_mirrored_module_has_its_own_test_file_that_imports_it() -> None:
    missing, unused = [], []
    for package in MIRRORED:
        for module in sorted((ROOT / "agentsproof" / package).glob("*.py")):
            if module.name == "__init__.py":
                continue
            test = ROOT / "tests" / package / f"test_{module.stem}.py"
            if not test.is_file():
                missing.append(str(test.relative_to(ROOT)))
                continue
            dotted = f"agentsproof.{package}.{module.stem}"
            pattern = rf"(from {re.escape(dotted)} import|import {re.escape(dotted)}\b|from agentsproof\.{package} import [^\n]*\b{module.stem}\b)"
            if not re.search(pattern, test.read_text(encoding="utf-8")):
                unused.append(str(test.relative_to(ROOT)))
    assert not missing, f"modules without their own test file: {missing}"
    assert not unused, f"test files that do not import their module: {unused}"
