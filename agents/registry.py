"""The bot registry: one entry per bot name, holding everything a consumer asks of a bot.

An entry (:class:`BotEntry`) says how to build the bot (``factory``), how the batched
numba engine plays it (``batched``: leagues, rollouts, batched teachers) and how a
particle filter weighs its moves (``model``: opponent models). Every consumer asks here:
``agents.make`` and the tournaments build through :func:`factory_of`; the learner's
batch, the warm start's teacher and the panel ask :func:`batched_port`; opponent models
ask :func:`opponent_model_of`. A spec string is read by ``agents.spec.parse`` first.

Why one table: a bot used to be a name that four modules each switched on to find its
numba port or its model; a bot added in one place was missing in the others. Here a
name either has a port or says why not.

Ports and models are ``"module:attr"`` strings (or callables) imported on first use, so
that reading the registry loads no numba and no torch and imports no bot. A port is
called as ``port(name, num_games, rules, seed, **options)`` with a ``pis_env.Rules`` and
returns a batched policy (``policy(game) -> actions`` on a ``BatchedGame``, and the
``(obs, masks)`` form where the bot reads observations); a model as ``model(name,
num_players, epsilon)``. The bot's name comes first so that one function serves several
bots (the panel's styles); the shipped ones are in ``agents.ports``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from agents import spec as specs

#: The entry-point group in which installed packages name their bots:
#: ``[project.entry-points."pis_yedili.agents"]`` ``mybot = "mypkg.bots:MyBot"``.
ENTRY_POINT_GROUP = "pis_yedili.agents"
#: A name must survive an agent spec (``name?key=value``, comma-separated lists).
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
#: Why the evaluation set has no port and no model (``agents.panel``).
HELD_OUT = "is in the evaluation set: nothing may model or roll it out"


@dataclass(frozen=True)
class BotEntry:
    """What the toolkit knows of one bot name.

    ``factory``: ``"module:attr"`` or a callable that takes ``make``'s keywords and
    returns an agent. ``batched``: its port for the batched engine (``"module:attr"``, see
    the module docstring), or ``None``. ``model``: its opponent model, or ``None``.
    ``no_port``: why it has no port, when it has none on purpose (the message a consumer
    shows). ``rows``: the port also plays rows of observations, ``policy(obs [K, L],
    masks [K, 58]) -> actions [K]``, so it can teach at a learner's seat (the warm start's
    batched teacher). ``players``: the table sizes it sits at (lowest, highest), checked by
    ``agents.make`` before the bot is built; the deals and observation layouts it reads are
    the built bot's own (``num_deals``, ``layout_version``, ``Agent.check_observation``),
    since for a network they are its file's."""

    factory: str | Callable[..., Any]
    batched: str | Callable[..., Any] | None = None
    model: str | Callable[..., Any] | None = None
    no_port: str | None = None
    rows: bool = False
    players: tuple[int, int] = (2, 7)


# ------------------------------------------------------------------ the entries
#: The ports and models of the shipped bots (``agents.ports``).
_PORTS = "agents.ports"
#: The bots shipped here (the opponent panel adds its own: ``agents.panel.panel_entries``).
SHIPPED = {
    "random": BotEntry("agents.random_agent:RandomAgent", f"{_PORTS}:style_port",
                       f"{_PORTS}:uniform_model"),
    "greedy": BotEntry("agents.greedy:GreedyAgent", f"{_PORTS}:greedy_port",
                       f"{_PORTS}:style_model"),
    "heuristic": BotEntry("agents.heuristic:HeuristicAgent", f"{_PORTS}:heuristic_port",
                          f"{_PORTS}:heuristic_model", rows=True),
    "held_out": BotEntry("agents.heuristic.variants:HeldOutHeuristic"),
    "mc": BotEntry("agents.mc:MonteCarloAgent",
                   no_port="a search of its own, ~30 ms a decision"),
    "search": BotEntry("agents.search:SearchAgent",
                       no_port="a search of its own, tens of ms a decision"),
    "human": BotEntry("agents.ui.human:HumanAgent", no_port="a person at a terminal"),
    "ppo": BotEntry("agents.ppo:PPOAgent", f"{_PORTS}:ppo_port"),
    "student": BotEntry("agents.student:StudentAgent", players=(2, 2)),
}


class _Registry(dict[str, BotEntry]):
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

    def __getitem__(self, key: str) -> BotEntry:
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


#: Every bot name -> its :class:`BotEntry`: the shipped bots and the opponent panel, then
#: those of installed packages (``ENTRY_POINT_GROUP``, read on first use), then
#: ``register``'s.
REGISTRY: dict[str, BotEntry] = _Registry(SHIPPED)
#: The names no ``register`` may replace.
BUILTIN = frozenset(SHIPPED)


def register(name: str, factory: str | Callable[..., Any], *, replace: bool = False,
             batched: str | Callable[..., Any] | None = None,
             model: str | Callable[..., Any] | None = None) -> None:
    """Make ``factory`` the bot ``name``: ``agents.make(name, **kwargs)`` then returns
    ``factory(**kwargs)``, and tournaments, the terminal game and the browser table seat it
    by name. ``factory`` is an agent class, a function returning an agent, or a
    ``"module:attr"`` string of one (imported on first use). It is called with the table's
    ``num_players``, ``seed`` and, when it takes them, ``num_deals`` and ``rules``.
    ``batched`` / ``model``: its port for the batched engine and its opponent model (see
    the module docstring), when it has them.

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
        raise ValueError(f"agent {name!r} is already registered ({REGISTRY[name].factory!r}); "
                         "pass replace=True to replace it")
    REGISTRY[name] = BotEntry(factory, batched, model)


def load_entry_points() -> list[str]:
    """Add the bots that installed packages name in ``ENTRY_POINT_GROUP`` (done once, at
    the first look-up of ``REGISTRY``; call again after installing a package in a running
    process). A name that is already taken is skipped with a warning. Returns the names
    added."""
    added = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if dict.__contains__(REGISTRY, ep.name):
            taken = dict.__getitem__(REGISTRY, ep.name).factory
            if taken != ep.value:
                warnings.warn(f"entry point {ep.name} = {ep.value!r} ({ENTRY_POINT_GROUP}) is "
                              f"skipped: the name is taken by {taken!r}",
                              RuntimeWarning, stacklevel=2)
            continue
        if not _NAME.match(ep.name) or ":" not in ep.value:
            warnings.warn(f"entry point {ep.name} = {ep.value!r} ({ENTRY_POINT_GROUP}) is "
                          "skipped: it needs a plain name and a 'module:attr' value",
                          RuntimeWarning, stacklevel=2)
            continue
        REGISTRY[ep.name] = BotEntry(ep.value)
        added.append(ep.name)
    return added


def is_registered(name: str) -> bool:
    return name in REGISTRY


def entry_of(name: str) -> BotEntry:
    """The entry of a registered name, or for ``"module:Class"`` an entry of its own
    (no port, no model). ``ValueError`` for an unknown name."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"an agent name must be a non-empty string, got {name!r}")
    entry = REGISTRY.get(name)
    if entry is None:
        if ":" not in name:
            raise ValueError(
                f"unknown agent {name!r}; known agents: {', '.join(sorted(REGISTRY))} (or "
                "'module:Class' for a class of yours; agents.register(name, factory) adds a "
                "name)")
        entry = BotEntry(name)
    return entry


def factory_of(name: str) -> Callable[..., Any]:
    """The callable that builds the bot ``name``: a registered name's factory (its
    ``"module:attr"`` imported), or for ``"module:Class"`` that class, imported by
    ``agents.spec.load`` (the working folder searched too). ``ValueError`` for an unknown
    name or an import that fails."""
    factory = entry_of(name).factory
    return specs.load(factory, name) if isinstance(factory, str) else factory


def _resolved(part: str | Callable[..., Any]) -> Callable[..., Any]:
    return specs.load(part) if isinstance(part, str) else part


def has_port(name: str, rows: bool = False) -> bool:
    """Whether the spec ``name`` has a port for the batched engine (with ``rows``: one
    that also plays rows of observations)."""
    entry = entry_of(specs.parse(name, is_registered).name)
    return entry.batched is not None and (entry.rows or not rows)


def batched_port(spec: str, num_games: int, rules=None, seed: int | None = None):
    """The batched policy of the bot ``spec`` (a spec string: ``"heuristic"``,
    ``"ppo:PATH"``) for ``num_games`` games of a table with ``rules`` (a ``pis_env.Rules``;
    default two players). A bot without one is a ``ValueError`` that says why."""
    from pis_env.rules import Rules

    parsed = specs.parse(spec, is_registered)
    entry = entry_of(parsed.name)
    if entry.batched is None:
        why = entry.no_port or "it registered none (agents.register(..., batched=))"
        raise ValueError(f"{parsed.name!r} has no batched policy: {why}" if why != HELD_OUT
                         else f"{parsed.name!r} {HELD_OUT}")
    rules = rules if rules is not None else Rules()
    return _resolved(entry.batched)(parsed.name, num_games, rules, seed, **parsed.options)


def opponent_model_of(name: str, num_players: int = 2, epsilon: float = 0.1):
    """The opponent model of the bot ``name`` (``model.probs(rows, actions, cfg)``), its
    own share ``epsilon`` of uniform moves included. A bot without one is a
    ``ValueError`` that says why."""
    entry = entry_of(name)
    if entry.model is None:
        if entry.no_port == HELD_OUT:
            raise ValueError(f"{name!r} is in the evaluation set: nothing may model it")
        modelled = sorted(n for n, e in REGISTRY.items() if e.model is not None)
        raise ValueError(f"no opponent model for {name!r}: one of {', '.join(modelled)}")
    return _resolved(entry.model)(name, num_players, epsilon)


__all__ = ["BUILTIN", "ENTRY_POINT_GROUP", "HELD_OUT", "REGISTRY", "BotEntry", "batched_port",
           "entry_of", "factory_of", "has_port", "is_registered", "load_entry_points",
           "opponent_model_of", "register", "SHIPPED"]
