"""Every entry of ``scripts/mutants.py`` still applies to the tree.

The mutants themselves run outside CI (``python scripts/mutants.py``: one test run per
mutant); what CI checks is that no entry has gone stale, i.e. that each one's old text is
still found exactly once in its file and its test file exists, so the script keeps breaking
the code its tests guard after that code is edited.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load_mutants():
    spec = importlib.util.spec_from_file_location("mutants", ROOT / "scripts" / "mutants.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutants"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_mutant_applies_to_the_tree():
    mutants = _load_mutants()
    assert mutants.check_entries(mutants.MUTANTS) == []
    suites = {mutants.suite_of(m) for m in mutants.MUTANTS}  # one suite each: make mutants*
    assert suites == set(mutants.SUITES)


def test_a_stale_entry_is_reported(tmp_path):
    mutants = _load_mutants()
    (tmp_path / "code.py").write_text("x = 1\nx = 1\n")
    twice = mutants.Mutant("twice", "code.py", "x = 1", "x = 2", "tests/t.py::t", "dup")
    gone = mutants.Mutant("gone", "code.py", "y = 1", "y = 2", "tests/t.py::t", "gone")
    problems = mutants.check_entries([twice, gone, twice], root=tmp_path)
    assert "twice: code.py: old text found 2 times, expected once" in problems
    assert "gone: code.py: old text found 0 times, expected once" in problems
    assert "twice: duplicate name" in problems
    assert any("no such file tests/t.py" in p for p in problems)
