"""Bots that play Pis Yedili through the agent protocol (docs/bots.md).

``agents.make(name, **kwargs)`` builds one by name; every agent's ``act(observation)``
returns a legal action id for an ``env.observe()`` dict. ``agents.register(name, factory)``
adds a bot under a name, and an installed package adds its own through the entry-point
group ``pis_yedili.agents`` (docs/own-bot.md): either way the name then works wherever a
bot is named (``make``, tournaments, ``pis-play``, the browser table).
"""

from __future__ import annotations

import importlib
import inspect
import re
import warnings
from collections.abc import Callable, Iterator
from importlib import metadata
from typing import Any

from agents.base import Agent, AgentProtocol, legal_actions

#: The entry-point group in which installed packages name their bots:
#: ``[project.entry-points."pis_yedili.agents"]`` ``mybot = "mypkg.bots:MyBot"``.
ENTRY_POINT_GROUP = "pis_yedili.agents"
#: The bots shipped here, name -> "module:Class" (imported on demand: no bot drags in torch).
BUILTIN = {
    "random": "agents.random_agent:RandomAgent",
    "greedy": "agents.greedy:GreedyAgent",
    "heuristic": "agents.heuristic:HeuristicAgent",
    "held_out": "agents.heuristic.variants:HeldOutHeuristic",
    "mc": "agents.mc:MonteCarloAgent",
    "search": "agents.search:SearchAgent",
    "human": "agents.ui.human:HumanAgent",
    "ppo": "agents.ppo:PPOAgent",
}


class _Registry(dict[str, "str | Callable[..., Any]"]):
    """``REGISTRY``: a dict that reads the installed packages' entry points the first time
    a name is looked up, listed or counted, not at ``import agents`` (scanning every
    installed distribution takes a sizeable part of a second)."""

    _loaded = False

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            load_entry_points()

    def __contains__(self, key: object) -> bool:
        self._load()
        return super().__contains__(key)

    def __getitem__(self, key: str) -> str | Callable[..., Any]:
        self._load()
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._load()
        return super().get(key, default)

    def __iter__(self) -> Iterator[str]:
        self._load()
        return super().__iter__()

    def __len__(self) -> int:
        self._load()
        return super().__len__()

    def keys(self) -> Any:
        self._load()
        return super().keys()

    def items(self) -> Any:
        self._load()
        return super().items()

    def values(self) -> Any:
        self._load()
        return super().values()


#: Every bot name -> its factory: ``"module:attr"`` (imported on first use) or a callable
#: that takes the keyword arguments of ``make`` and returns an agent. The shipped bots,
#: then those of installed packages (``ENTRY_POINT_GROUP``, read on first use), then
#: ``register``'s.
REGISTRY: dict[str, str | Callable[..., Any]] = _Registry(BUILTIN)
#: A name must survive an agent spec (``name?key=value``, comma-separated lists).
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")


def register(name: str, factory: str | Callable[..., Any], *, replace: bool = False) -> None:
    """Make ``factory`` the bot ``name``: ``agents.make(name, **kwargs)`` then returns
    ``factory(**kwargs)``, and tournaments, the terminal game and the browser table seat it
    by name. ``factory`` is an agent class, a function returning an agent, or a
    ``"module:attr"`` string of one (imported on first use). It is called with the table's
    ``num_players``, ``seed`` and, when it takes them, ``num_deals`` and ``rules``.

    A name already taken is a ``ValueError`` unless ``replace=True`` (the shipped names
    can never be replaced). The registration lives in this process: worker processes see
    it when forked (the tournament's default on Linux); for spawned workers and other
    programs, name the bot in an installed package's ``pis_yedili.agents`` entry points."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"agent name {name!r}: use letters, digits, '_', '.' or '-', starting "
                         "with a letter or '_' (no ':', '?', ',' or spaces: they separate "
                         "specs)")
    if isinstance(factory, str):
        if ":" not in factory:
            raise ValueError(f"factory {factory!r}: a string factory is 'module:attr'")
    elif not callable(factory):
        raise TypeError(f"factory for {name!r} must be callable or 'module:attr', got "
                        f"{factory!r}")
    if name in BUILTIN:
        raise ValueError(f"{name!r} is a shipped bot's name; choose another")
    if name in REGISTRY and not replace:
        raise ValueError(f"agent {name!r} is already registered ({REGISTRY[name]!r}); pass "
                         "replace=True to replace it")
    REGISTRY[name] = factory


def load_entry_points() -> list[str]:
    """Add the bots that installed packages name in ``ENTRY_POINT_GROUP`` (done once, at
    the first look-up of ``REGISTRY``; call again after installing a package in a running
    process). A name that is already taken is skipped with a warning. Returns the names
    added."""
    added = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if dict.__contains__(REGISTRY, ep.name):
            if REGISTRY[ep.name] != ep.value:
                warnings.warn(f"entry point {ep.name} = {ep.value!r} ({ENTRY_POINT_GROUP}) is "
                              f"skipped: the name is taken by {REGISTRY[ep.name]!r}",
                              RuntimeWarning, stacklevel=2)
            continue
        if not _NAME.match(ep.name) or ":" not in ep.value:
            warnings.warn(f"entry point {ep.name} = {ep.value!r} ({ENTRY_POINT_GROUP}) is "
                          "skipped: it needs a plain name and a 'module:attr' value",
                          RuntimeWarning, stacklevel=2)
            continue
        REGISTRY[ep.name] = ep.value
        added.append(ep.name)
    return added


def factory_of(name: str) -> Callable[..., Any]:
    """The callable that builds the bot ``name``: a registered name's factory (its
    ``"module:attr"`` imported), or for ``"module:Class"`` that class, imported from
    ``sys.path`` (which holds the working directory under ``pis-tournament`` and
    ``python -m``). ``ValueError`` for an unknown name or an import that fails."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"an agent name must be a non-empty string, got {name!r}")
    factory = REGISTRY.get(name)
    if factory is None:
        if ":" not in name:
            raise ValueError(
                f"unknown agent {name!r}; known agents: {', '.join(sorted(REGISTRY))} (or "
                "'module:Class' for a class of yours; agents.register(name, factory) adds a "
                "name)")
        factory = name
    if not isinstance(factory, str):
        return factory
    module_name, _, attr = factory.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as e:
        where = "" if factory == name else f"agent {name!r}: "
        raise ValueError(f"{where}cannot load {factory!r}: {e}") from e
    if not callable(target):
        raise ValueError(f"{factory!r} is not a class or function, but {target!r}")
    return target


def _split(name: str) -> tuple[str, dict[str, Any]]:
    """``"ppo:PATH"`` -> ``("ppo", {"path": PATH})``; anything else as it is."""
    if isinstance(name, str) and name.startswith("ppo:") and name not in REGISTRY:
        return "ppo", {"path": name[4:]}
    return name, {}


def accepts(factory: Callable[..., Any], parameter: str) -> bool:
    """Whether ``factory`` takes the keyword ``parameter`` (or any keyword)."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    return parameter in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def make(name: str, **kwargs: Any) -> Agent:
    """An agent by name, e.g. ``make("heuristic", num_players=4, seed=0)`` or
    ``make("ppo", path="models/ppo_2p.zip")``. ``"ppo:PATH"`` is short for the latter;
    ``"module:Class"`` builds a class of yours (``Class(**kwargs)``)."""
    name, extra = _split(name)
    return factory_of(name)(**kwargs, **extra)


def make_for_table(name: str, rules: dict, seed: int | None = None) -> Agent:
    """``make(name)`` for a table of ``rules`` (a rules options dict): the table size and
    deal count, the seed when given, and the rules themselves for bots that take
    ``rules=`` (``mc`` simulates the variant being played)."""
    kwargs: dict[str, Any] = {"num_players": int(rules["num_players"]),
                              "num_deals": int(rules.get("num_deals", 1))}
    if seed is not None:
        kwargs["seed"] = seed
    factory = factory_of(_split(name)[0])
    if "rules" in _parameters(factory):
        kwargs["rules"] = {k: v for k, v in rules.items() if k != "illegal_action"}
    if kwargs["num_deals"] == 1 and not accepts(factory, "num_deals"):
        del kwargs["num_deals"]  # a bot of one deal need not know of matches
    return make(name, **kwargs)


def _parameters(factory: Callable[..., Any]) -> set[str]:
    try:
        return set(inspect.signature(factory).parameters)
    except (TypeError, ValueError):
        return set()


REGISTRY.update(importlib.import_module("agents.panel").PANEL_REGISTRY)  # the opponent panel

__all__ = [
    "BUILTIN", "ENTRY_POINT_GROUP", "REGISTRY", "Agent", "AgentProtocol", "accepts",
    "factory_of", "legal_actions", "load_entry_points", "make", "make_for_table", "register",
]
