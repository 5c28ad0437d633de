"""scripts/mutation_table.py: docs/trust.md's table of a mutmut run, and the list of
equivalent mutants it reads."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("mutation_table",
                                              ROOT / "scripts" / "mutation_table.py")
mt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mt)

SAMPLE = """\
    pis_env.rules.xǁRulesǁreplace__mutmut_1: killed
    pis_env.rules.xǁRulesǁreplace__mutmut_2: survived
    pis_env.rules.x_parse__mutmut_1: timeout
    agents.tournament.stats.x_mean_ci__mutmut_4: survived
    agents.tournament.stats.x_mean_ci__mutmut_5: no tests
"""


def test_the_table_counts_each_module_and_lists_every_survivor():
    results = mt.parse(SAMPLE)
    assert len(results) == 5
    text = mt.table(results, {"agents.tournament.stats.x_mean_ci__mutmut_4": "same values"})
    assert "| `pis_env.rules` | 3 | 2 | 1 | 0 | 67% |" in text
    assert "| `agents.tournament.stats` | 2 | 0 | 1 | 1 | 0% |" in text
    assert "`pis_env.rules.xǁRulesǁreplace__mutmut_2`: open (survived)" in text
    assert "`agents.tournament.stats.x_mean_ci__mutmut_4`: equivalent: same values" in text
    assert "mutmut_5`: open (no tests)" in text


def test_every_equivalent_names_a_module_of_the_project_and_says_why():
    equivalent = yaml.safe_load(mt.EQUIVALENTS.read_text(encoding="utf-8"))
    assert equivalent
    for name, reason in equivalent.items():
        module = mt.parse(f"{name}: survived")[name][0]
        path = ROOT / Path(*module.split("."))
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), name
        assert len(reason) > 20, name


def test_a_timed_out_mutant_listed_as_equivalent_is_not_a_kill():
    results = mt.parse(SAMPLE)
    text = mt.table(results, {"pis_env.rules.x_parse__mutmut_1": "the same bytes"})
    assert "| `pis_env.rules` | 3 | 1 | 1 | 1 | 50% |" in text
    assert "`pis_env.rules.x_parse__mutmut_1`: equivalent (timed out): the same bytes" in text
