"""The layers are one-way and every fact has one source.

``pis_env`` (cards -> engine -> observation -> env -> wrappers, and the batched rules
kernels) imports nothing above it; ``agents`` imports nothing of ``train``. The checks read
the source (every ``import`` statement, also inside functions), so an import that only
runs on some path is caught as well.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pis_env import actions
from pis_env.observation import Layout, segment_table

ROOT = Path(__file__).resolve().parents[1]
#: The env module's docstring (``pis_env.aec`` the attribute is the ``env()`` function).
ENV_DOC = importlib.import_module("pis_env.aec").__doc__

#: package -> the top-level modules it must never import.
FORBIDDEN = {
    "pis_env": {"agents", "train", "torch", "stable_baselines3", "sb3_contrib", "ray"},
    "agents": {"train"},
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """``(line, top-level module)`` of every import in a file; relative imports are
    resolved against the file's package, so ``from ..train import x`` counts too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = path.relative_to(ROOT).parent.parts
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                top = base[0] if base else (node.module or "").split(".")[0]
            else:
                top = (node.module or "").split(".")[0]
            found.append((node.lineno, top))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value.split(".")[0]))
    return found


def violations(package: str) -> list[str]:
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for line, top in imported_modules(path):
            if top in FORBIDDEN[package]:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {top}")
    return bad


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_climbs_a_layer(package):
    assert violations(package) == []


def test_the_scan_sees_imports_inside_functions(tmp_path, monkeypatch):
    """The checker itself: a nested, a relative and an importlib import are all found."""
    pkg = tmp_path / "pis_env" / "sub"
    pkg.mkdir(parents=True)
    src = pkg / "mod.py"
    src.write_text("def f():\n    import torch\n    from ...train import ppo\n"
                   "    importlib.import_module('ray.tune')\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert [top for _, top in imported_modules(src)] == ["torch", "train", "ray"]
    assert len(violations("pis_env")) == 3


def test_every_registered_bot_is_a_class_of_agents():
    """Bots are built from ``REGISTRY`` entries' factory strings, which the import scan
    cannot read: each one names a module of ``agents`` (so the scan covers its imports)
    and a class there whose ``name`` is its key, or a factory function there."""
    from agents import REGISTRY

    for name, entry in REGISTRY.items():
        target = entry.factory
        assert isinstance(target, str), (name, target)
        module, cls = target.split(":")
        assert module.split(".")[0] == "agents", (name, target)
        assert (ROOT / Path(*module.split("."))).with_suffix(".py").is_file() or \
            (ROOT / Path(*module.split(".")) / "__init__.py").is_file(), (name, target)
        factory = getattr(importlib.import_module(module), cls)
        assert callable(factory), (name, target)
        if isinstance(factory, type):
            assert factory.name == name, (name, target)


def test_import_agents_does_not_load_ray_or_train():
    code = ("import sys, agents, agents.heuristic, agents.greedy, agents.tournament; "
            "print(sorted(m for m in ('ray', 'train', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert "ray" not in out and "train" not in out, out


def test_import_pis_env_loads_no_numba_and_no_bots():
    code = ("import sys, pis_env, pis_env.aec, pis_env.wrappers; "
            "print(sorted(m for m in ('numba', 'agents', 'train') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "[]"


# ---------------------------------------------------------------------- documented facts
def _doc_segments() -> list[tuple[str, str]]:
    """``(name, length expression)`` rows of the env docstring's observation table."""
    rows = re.findall(r"^\| `(\w+)`\s*\| ([^|]+?)\s*\|", ENV_DOC, re.MULTILINE)
    assert rows, "no segment table in the pis_env.aec docstring"
    return rows


def _length(expr: str, n: int, deals: int) -> int:
    text = expr.replace("−", "-").replace("num_deals", str(deals)).replace("n", str(n))
    text = re.sub(r"(\d)\s*\(", r"\1 * (", text)
    return int(eval(text, {"__builtins__": {}}))  # digits, + - * ( ) only


@pytest.mark.parametrize("n,deals", [(2, 1), (4, 1), (7, 1), (3, 5)])
def test_env_docstring_segment_table_matches_segment_table(n, deals):
    documented = [(name, _length(expr, n, deals)) for name, expr in _doc_segments()]
    if deals == 1:
        documented = [row for row in documented if row[0] not in ("deal", "scores")]
    assert documented == segment_table(n, deals)


def test_env_docstring_states_the_two_player_length():
    size = re.search(r"\(L,\) with L from the table below \((\d+) for 2 players\)",
                     ENV_DOC)
    assert size and int(size.group(1)) == Layout.of(2).size


def test_env_docstring_action_table_matches_the_action_ids():
    doc = ENV_DOC
    nominate = f"| {actions.NOMINATE_BASE}–{actions.NOMINATE_BASE + 3} "
    assert nominate in doc and "nominate" in doc.split(nominate)[1].splitlines()[0]
    assert re.search(rf"^\| {actions.DRAW}\s+\| draw", doc, re.MULTILINE)
    assert re.search(rf"^\| {actions.PASS}\s+\| pass", doc, re.MULTILINE)
    assert actions.NUM_ACTIONS == actions.PASS + 1 == int(actions.Action.PASS) + 1


def test_engine_and_kernels_use_the_one_set_of_constants():
    from pis_env import cards, engine
    from pis_env.batched import kernels as K

    assert (engine.DRAW, engine.PASS, engine.NOMINATE_BASE, engine.NUM_ACTIONS) == (
        actions.DRAW, actions.PASS, actions.NOMINATE_BASE, actions.NUM_ACTIONS)
    assert (K.DRAW, K.PASS, K.NOMINATE_BASE, K.NUM_ACTIONS) == (
        actions.DRAW, actions.PASS, actions.NOMINATE_BASE, actions.NUM_ACTIONS)
    assert K.CARD_POINTS.tolist() == list(cards.CARD_POINTS)
    assert K.SUIT_MASKS.tolist() == list(cards.SUIT_MASKS)
    assert K.REASON_NAMES[1:] == (engine.GOING_OUT, engine.EMPTY_STOCK, engine.ILLEGAL,
                                  engine.TRUNCATED)
    for n, deals in [(2, 1), (5, 3)]:
        offsets = Layout.of(n, deals).offsets
        assert K.O_SIZES == offsets["hand_sizes"].start
        assert K.layout_starts(n, deals) == [offsets[s].start if s in offsets else -1
                                             for s in K.CFG_SEGMENTS]
        assert K.obs_size(n, deals) == Layout.of(n, deals).size
