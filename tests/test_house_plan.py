"""The plan of the house: the import graph has no circles, the rooms keep their size, no
attribute shadows a module, every module path written as a string resolves, and the tests
mirror the rooms (each in its package's folder, named by what it checks).

The graph is read from the source (every ``import``, also inside functions, and
``importlib.import_module`` with a constant), between the project's own modules, so an
import that only runs on some path counts too. Strings that name code (the README, the
docs, the notebooks, the configs, ``pyproject.toml``, the registries) are checked against
the files, since no import ever reads them.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pis_env", "agents", "train")


def module_files() -> dict[str, Path]:
    """Every module of the project's packages: dotted name -> file."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules that ``name`` (at ``path``) imports, anywhere in its code."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    targets: set[str] = set()

    def add(dotted: str, names: list[str] = ()) -> None:
        for sub in names:  # ``from a.b import c``: the module a.b.c if there is one
            if f"{dotted}.{sub}" in modules:
                targets.add(f"{dotted}.{sub}")
                continue
            if dotted in modules:
                targets.add(dotted)
        if not names and dotted in modules:
            targets.add(dotted)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                dotted = ".".join(base + ([node.module] if node.module else []))
            else:
                dotted = node.module or ""
            add(dotted, [alias.name for alias in node.names])
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            add(node.args[0].value)
    targets.discard(name)
    return targets


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    assert circles(import_graph()) == []


def test_the_circle_finder_sees_a_circle_through_a_function_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    modules = module_files()
    # train.rllib.pretrain imports the config at the top: were the config to import the
    # pretraining inside a function, the two would be a circle
    assert "train.rllib.config" in imports_of("train.rllib.pretrain",
                                              modules["train.rllib.pretrain"], modules)


#: room -> the rooms of the same package it must never import (ARCHITECTURE.md).
FORBIDDEN_ROOMS = {
    "train.common": {"train.vector", "train.sb3", "train.expert", "train.rllib",
                     "train.belief_model"},
    "train.vector": {"train.sb3", "train.expert", "train.rllib", "train.belief_model"},
    "train.sb3": {"train.expert", "train.rllib", "train.belief_model"},
    "train.rllib": {"train.sb3", "train.expert", "train.belief_model"},
    "train.belief_model": {"train.sb3", "train.expert", "train.rllib"},
    "train.expert": {"train.rllib", "train.belief_model"},
    "agents.common": {"agents.bots", "agents.belief", "agents.panel", "agents.tournament",
                      "agents.bench", "agents.ui"},
    "agents.bots": {"agents.tournament", "agents.bench", "agents.ui"},
    "agents.belief": {"agents.tournament", "agents.bench", "agents.ui"},
    "agents.panel": {"agents.belief", "agents.tournament", "agents.bench", "agents.ui"},
    "agents.tournament": {"agents.bench", "agents.ui"},
    "agents.bench": {"agents.ui"},
}


def room_of(module: str) -> str:
    """``train.sb3.run`` -> ``train.sb3``; the bots at the top of ``agents`` are
    ``agents.bots``; the entry scripts at the top of ``train`` are ``train``."""
    parts = module.split(".")
    if parts[0] == "agents":
        rooms = ("belief", "panel", "tournament", "bench", "ui", "common")
        return f"agents.{parts[1]}" if len(parts) > 1 and parts[1] in rooms else "agents.bots"
    if parts[0] == "train" and len(parts) > 2:
        return f"train.{parts[1]}"
    return parts[0]


def test_each_room_imports_only_the_rooms_below_it():
    graph = import_graph()
    bad = [f"{a} -> {b}" for a, targets in sorted(graph.items()) for b in sorted(targets)
           if room_of(b) in FORBIDDEN_ROOMS.get(room_of(a), ())]
    assert bad == []
    assert room_of("train.vector.learner_batch") == "train.vector"
    assert room_of("agents.heuristic.batched") == "agents.bots"


#: Functions that may take more than twelve named parameters, and why.
WIDE = {
    # a position is its fields: the constructor of a state from every one of them
    ("pis_env/engine.py", "from_position"),
}


def wide_functions(limit: int = 12) -> list[tuple[str, str, int]]:
    """``(path, function, count)`` of every function of ``pis_env``, ``agents`` and
    ``train`` with more than ``limit`` named parameters (``self``/``cls`` aside), numba
    kernels (``@njit``) left out: a kernel takes arrays, not objects."""
    found = []
    for room in ("pis_env", "agents", "train"):
        for path in sorted((ROOT / room).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                if any("njit" in ast.unparse(d) for d in node.decorator_list):
                    continue
                a = node.args
                names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs
                         if x.arg not in ("self", "cls")]
                if len(names) > limit:
                    found.append((str(path.relative_to(ROOT)), node.name, len(names)))
    return found


def test_no_function_takes_more_than_twelve_named_parameters():
    """Where options multiply, a function takes objects (the search's belief, rollouts and
    choice; ``mc``'s tracking; a vector env's learner), not a flag each."""
    wide = [(p, f, n) for p, f, n in wide_functions() if (p, f) not in WIDE]
    assert wide == []
    assert {(p, f) for p, f, _ in wide_functions()} == WIDE  # the exception still needs it
    # the finder counts keyword-only parameters and leaves self out: SearchAgent takes 12
    assert ("agents/search.py", "__init__", 12) in wide_functions(11)


def test_train_holds_at_most_twelve_modules_directly():
    direct = sorted(p.name for p in (ROOT / "train").glob("*.py"))
    assert len(direct) <= 12, direct


@pytest.mark.parametrize("package", PACKAGES)
def test_every_submodule_is_its_package_attribute(package):
    """``import pis_env.X as m`` gives the module X: no function or other name of the
    package shadows a submodule."""
    top = importlib.import_module(package)
    for info in pkgutil.walk_packages(top.__path__, f"{package}.", onerror=lambda _: None):
        parent_name, _, child = info.name.rpartition(".")
        if child == "__main__":
            continue  # runs its command when imported
        if info.name.startswith(("train.rllib", "agents.tournament.ray_backend")):
            continue  # Ray and RLlib: their own virtualenv (tests_rllib checks them there)
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as e:  # an optional extra's library, not our code
            assert e.name.split(".")[0] not in PACKAGES, (info.name, e)
            continue
        parent = importlib.import_module(parent_name)
        assert getattr(parent, child) is module, f"{parent_name}.{child} is shadowed"


# ---------------------------------------------------------------------- paths as strings
DOTTED = re.compile(r"(?<![\w./-])((?:pis_env|agents|train|benchmarks|scripts)(?:\.\w+)+)")
SLASHED = re.compile(r"(?<![\w./-])((?:pis_env|agents|train|benchmarks|scripts|configs|models"
                     r"|tests|notebooks|docs)/[\w./-]*\w)")


def text_sources() -> list[Path]:
    """Where users read code paths: the README, the architecture, the docs (not the
    changelogs, which name old paths on purpose), the notebooks, the configs."""
    paths = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", ROOT / "RULES.md",
             ROOT / "Makefile", ROOT / "mkdocs.yml", ROOT / "models" / "README.md"]
    paths += sorted(p for p in (ROOT / "docs").rglob("*.md") if p.name != "changelog.md")
    paths += sorted((ROOT / "notebooks").glob("*.ipynb"))
    paths += sorted((ROOT / "configs").rglob("*.yaml"))
    return [p for p in paths if p.exists()]


def top_level_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    body = list(tree.body)
    for node in body:  # top-level ``if`` and ``try`` blocks define module names too
        if isinstance(node, ast.If):
            body += node.body + node.orelse
        elif isinstance(node, ast.Try):
            body += node.body + node.orelse + [n for h in node.handlers for n in h.body]
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        if (isinstance(node, ast.Assign) and any(getattr(x, "id", "") == "__all__"
                                                 for x in node.targets)
                and isinstance(node.value, (ast.List, ast.Tuple))):
            names |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    return names


def module_path(dotted: str) -> Path | None:
    base = ROOT / Path(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def unresolved_dotted(name: str) -> str | None:
    """``a.b.c.d``: the longest prefix that is a module, then a name defined in it."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        path = module_path(".".join(parts[:cut]))
        if path is None:
            continue
        if cut == len(parts) or parts[cut] in top_level_names(path) or parts[cut] == "py":
            return None
        return f"{name}: {'.'.join(parts[:cut])} defines no {parts[cut]!r}"
    return f"{name}: no such module"


def strings_in(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
    return re.sub(r"[\w.ǁ]+__mutmut_\d+", "", text)  # mutmut's mutant names are no paths


def test_every_code_path_in_the_docs_resolves():
    bad = []
    for path in text_sources():
        text = strings_in(path)
        for name in set(DOTTED.findall(text)):
            problem = unresolved_dotted(name.rstrip("."))
            if problem:
                bad.append(f"{path.relative_to(ROOT)}: {problem}")
        for rel in set(SLASHED.findall(text)):
            if "." not in rel.rsplit("/", 1)[-1] or re.search(r"[A-Z*{]|_$|_\.", rel):
                continue  # a folder or a logged name (train/entropy_loss), a placeholder
            if not (ROOT / rel).exists():
                bad.append(f"{path.relative_to(ROOT)}: {rel} does not exist")
    assert bad == []


def test_entry_points_and_registrations_resolve():
    """pyproject's scripts, mypy's module list and package data, the gymnasium and
    PettingZoo entry points and the bots' registry name real modules and attributes."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    targets = list(meta["project"]["scripts"].values())
    mypy = meta["tool"]["mypy"]
    bad = [m for m in mypy["packages"] + mypy["modules"] if module_path(m) is None]
    bad += [pkg for pkg in meta["tool"]["setuptools"]["package-data"]
            if not pkg.startswith("pis_yedili_") and module_path(pkg) is None]
    import gymnasium
    import pettingzoo

    import agents
    import pis_env

    for env_id in [k for k in gymnasium.registry if k.startswith("PisYedili")]:
        spec = gymnasium.spec(env_id)
        targets += [spec.entry_point] + ([spec.vector_entry_point]
                                         if spec.vector_entry_point else [])
    targets.append(pettingzoo.spec("aec", pis_env.PETTINGZOO_ID).entry_point)
    targets += [entry.factory for entry in agents.REGISTRY.values()]
    for target in targets:
        module, _, attr = target.partition(":")
        path = module_path(module)
        if path is None or attr.split(".")[0] not in top_level_names(path):
            bad.append(target)
    assert bad == []


def test_the_path_checker_finds_a_moved_module():
    assert unresolved_dotted("train.vector.learner_batch.LearnerBatch") is None
    assert unresolved_dotted("train.learner_batch") is not None
    assert unresolved_dotted("train.vector.learner_batch.NoSuchThing") is not None


DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")


def test_no_dates_in_the_code():
    """Dates and what was measured on them belong to docs/results.md and the CHANGELOG; a
    docstring or comment that says "until 2026-12-04" is out of date the day it lands."""
    dated = [f"{path.relative_to(ROOT)}:{i}"
             for room in ("pis_env", "agents", "train")
             for path in sorted((ROOT / room).rglob("*.py"))
             for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if DATE.search(line)]
    assert dated == []
    assert DATE.search("the default until 2026-12-04,") and not DATE.search("v2026-1")


# ---------------------------------------------------------------------- the tests' own plan
#: A test file named for where it was put, not for what it checks.
CATCH_ALL = re.compile(r"_(units|plumbing|edges|misc)$")


def misplaced_tests(root: Path = ROOT) -> list[str]:
    """``tests/`` mirrors the source: every folder of ``tests/<package>/`` is a package of
    the source at the same path; a test file at the top of a folder is not named after a
    package below that folder's package (``tests/agents/test_web_*.py`` belongs in
    ``tests/agents/ui/web/``); and no test file has a catch-all name."""
    bad = []
    tests = root / "tests"
    for path in sorted(tests.rglob("test_*.py")):
        if CATCH_ALL.search(path.stem):
            bad.append(f"{path.relative_to(root)}: a catch-all name")
    for package in PACKAGES:
        for folder in sorted(p for p in [tests / package, *(tests / package).rglob("*")]
                             if p.is_dir() and p.name != "__pycache__"):
            source = root / folder.relative_to(tests)
            if not (source / "__init__.py").is_file():
                bad.append(f"{folder.relative_to(root)}: no package {source.relative_to(root)}")
                continue
            below = {p.parent.name for p in source.rglob("__init__.py") if p.parent != source}
            for path in sorted(folder.glob("test_*.py")):
                words = path.stem.removeprefix("test_")
                named = sorted(s for s in below if words == s or words.startswith(f"{s}_"))
                if named:
                    bad.append(f"{path.relative_to(root)}: a test of {named[0]}, at the top")
    return bad


def test_the_tests_mirror_the_source_and_are_named_by_behaviour():
    assert misplaced_tests() == []


def test_the_test_plan_finds_a_misplaced_or_catch_all_test(tmp_path):
    for package in ("pis_env/batched", "agents/ui/web", "train/common"):
        for part in range(1, package.count("/") + 2):
            folder = tmp_path / Path(*package.split("/")[:part])
            folder.mkdir(exist_ok=True)
            (folder / "__init__.py").touch()
        (tmp_path / "tests" / package).mkdir(parents=True)
    for test in ("agents/test_web_api.py", "agents/ui/test_web.py", "agents/ui/web/test_api.py",
                 "train/common/test_league_units.py", "pis_env/test_batched_draws.py",
                 "pis_env/test_cards.py"):
        (tmp_path / "tests" / test).touch()
    (tmp_path / "tests" / "agents" / "tournament").mkdir()
    assert misplaced_tests(tmp_path) == [
        "tests/train/common/test_league_units.py: a catch-all name",
        "tests/pis_env/test_batched_draws.py: a test of batched, at the top",
        "tests/agents/test_web_api.py: a test of web, at the top",
        "tests/agents/tournament: no package agents/tournament",
        "tests/agents/ui/test_web.py: a test of web, at the top",
    ]
