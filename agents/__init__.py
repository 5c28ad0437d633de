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
from collections.abc import Callable
from typing import Any

from agents.base import Agent, AgentProtocol, legal_actions
from agents.registry import (
    BUILTIN,
    ENTRY_POINT_GROUP,
    REGISTRY,
    BotEntry,
    factory_of,
    is_registered,
    load_entry_points,
    register,
)
from agents.spec import parse


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
    ``"module:Class"`` builds a class of yours (``Class(**kwargs)``); a spec's
    ``?key=value`` options (``"mc?samples=8"``) are keywords too (``agents.spec``)."""
    spec = parse(name, is_registered) if isinstance(name, str) else None
    if spec is None:
        factory_of(name)  # refuses a non-string with the usual message
    name, extra = spec.name, spec.options
    _check_table_size(name, kwargs.get("num_players"))
    factory = factory_of(name)
    try:
        return factory(**kwargs, **extra)
    except TypeError as e:
        option = _unknown_option(e, factory, {**kwargs, **extra})
        if option is None:
            raise
        raise TypeError(_unknown_option_text(name, factory, option,
                                            rules_options=hasattr(e, "option"))) from e


def _check_table_size(name: str, num_players: Any) -> None:
    """Refuse, before anything is built, a table size outside the bot's registry entry
    (``BotEntry.players``): a network trained for two players says so in one line."""
    if not isinstance(num_players, int) or name not in REGISTRY:
        return
    lo, hi = REGISTRY[name].players
    if not lo <= num_players <= hi:
        sizes = f"{lo}" if lo == hi else f"{lo} to {hi}"
        raise ValueError(f"{name} sits at tables of {sizes} players, not {num_players}")


def _unknown_option(error: TypeError, factory: Callable[..., Any],
                    kwargs: dict[str, Any]) -> str | None:
    """The keyword of ``kwargs`` that ``error`` refuses, when it is one the bot takes
    neither by name nor as a rules option: the bots' ``table_rules`` names it
    (``option``), Python's own "unexpected keyword argument 'x'" for a factory that takes
    no ``**options``. ``None`` for any other ``TypeError`` (one from inside the bot)."""
    option = getattr(error, "option", None)
    if option is None:
        found = re.search(r"unexpected keyword argument '([^']+)'", str(error))
        option = found.group(1) if found else None
        if option is None or not _parameters(factory) or accepts(factory, option):
            return None
    return option if option in kwargs else None


def _unknown_option_text(name: str, factory: Callable[..., Any], option: str,
                        rules_options: bool = True) -> str:
    """"unknown option 'sampels' for mc (did you mean samples?): mc's options: ...; rules
    options: ...": the bot's own keywords and, for a bot that takes rules options as
    keywords (``rules_options``), those apart, so that a misspelt bot keyword is not
    answered with the rules options alone."""
    import difflib

    from pis_env import Rules

    rules = list(Rules.keys()) if rules_options else []
    own = [p for p, kind in _kinds(factory).items()
           if kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
           and p not in rules] + list(getattr(factory, "SHORTHAND", ()))
    close = difflib.get_close_matches(option, own + rules, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    text = (f"unknown option {option!r} for {name}{hint}: {name}'s options: "
            f"{', '.join(own) or 'none'}")
    return text + (f"; rules options: {', '.join(rules)}" if rules else "")


def make_for_table(name: str, rules: dict, seed: int | None = None) -> Agent:
    """``make(name)`` for a table of ``rules`` (a rules options dict): the table size and
    deal count, the seed when given, and the rules themselves for bots that take
    ``rules=`` (``mc`` simulates the variant being played)."""
    kwargs: dict[str, Any] = {"num_players": int(rules["num_players"]),
                              "num_deals": int(rules.get("num_deals", 1))}
    if seed is not None:
        kwargs["seed"] = seed
    factory = factory_of(parse(name, is_registered).name)
    if "rules" in _parameters(factory):
        kwargs["rules"] = {k: v for k, v in rules.items() if k != "illegal_action"}
    if kwargs["num_deals"] == 1 and not accepts(factory, "num_deals"):
        del kwargs["num_deals"]  # a bot of one deal need not know of matches
    return make(name, **kwargs)


def _parameters(factory: Callable[..., Any]) -> set[str]:
    return set(_kinds(factory))


def _kinds(factory: Callable[..., Any]) -> dict[str, Any]:
    """The factory's parameters in order, name -> kind; empty when it has no signature."""
    try:
        return {n: p.kind for n, p in inspect.signature(factory).parameters.items()}
    except (TypeError, ValueError):
        return {}


REGISTRY.update(importlib.import_module("agents.panel").panel_entries())  # the opponent panel

__all__ = [
    "BUILTIN", "ENTRY_POINT_GROUP", "REGISTRY", "Agent", "AgentProtocol", "BotEntry", "accepts",
    "factory_of", "legal_actions", "load_entry_points", "make", "make_for_table", "register",
]
