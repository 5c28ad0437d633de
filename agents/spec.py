"""Bot specs: the one reader of the strings that name a bot, and the one loader of
``"module:attr"``.

A spec is what a user types wherever a bot is named (``--agents``, ``--opponents``,
``--bots``, a config's league, a teacher, an opponent model):

* ``name`` -- a registered bot (``heuristic``, ``search``, a panel member, an installed
  package's entry point, a name given to ``agents.register``);
* ``name?key=value&key=value`` -- the same with keyword arguments, each value read as a
  YAML scalar (``8`` an int, ``true`` a bool, ``0.1`` a float, anything else a string);
* ``ppo:PATH`` -- the ``ppo`` bot with ``path=PATH`` (a Windows drive letter is part of
  the path: ``ppo:C:/nets/a.zip``);
* ``module:Class`` -- a class or function of yours, imported by :func:`load` (the working
  folder is searched too, so ``mybot:Shedder`` works from the folder holding
  ``mybot.py`` whatever command reads it);
* ``a:0.5,b:0.5`` -- a weighted mixture of such specs (opponent models only; the weight
  follows each part's last ``:``).

Why one module: every command, config check and trainer used to read these strings its own
way, and a spec that worked in one place failed in another. Everything that reads a spec
asks :func:`parse`; nothing else splits a spec at ``?``.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: The registry name that ``ppo:PATH`` stands for.
PPO = "ppo"


@dataclass(frozen=True)
class BotSpec:
    """A parsed spec: ``base`` as written before ``?`` (``"heuristic"``,
    ``"ppo:models/a.zip"``, ``"mybot:Shedder"``), ``name`` the registry name it resolves
    to (``"ppo"`` for a ``ppo:PATH``, the ``module:Class`` itself for a class of yours)
    and ``options`` the keyword arguments (``path`` included for ``ppo:PATH``)."""

    base: str
    name: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def query(self) -> dict[str, Any]:
        """The keyword arguments written after ``?`` (without a ``ppo:PATH``'s path)."""
        if self.name == PPO and self.base != PPO:
            return {k: v for k, v in self.options.items() if k != "path"}
        return dict(self.options)

    @property
    def is_import(self) -> bool:
        """Whether the spec names a ``module:Class`` of the user's, not a registered bot."""
        return ":" in self.name


def parse(spec: str, registered: Callable[[str], bool] | None = None) -> BotSpec:
    """``"mc?samples=8&rollouts=2"`` -> ``BotSpec("mc", "mc", {"samples": 8,
    "rollouts": 2})``. ``registered(base)`` says whether a base containing ``:`` is a
    registered name (an installed package may register ``"ppo:mine"``), which then wins
    over the ``ppo:PATH`` reading. A malformed query is a ``ValueError`` naming the
    spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec must be a non-empty string, got {spec!r}")
    base, _, query = spec.strip().partition("?")
    base = base.strip()
    options: dict[str, Any] = {}
    if query:
        import yaml

        for item in query.split("&"):
            key, eq, value = item.partition("=")
            if not eq or not key:
                raise ValueError(f"agent spec {spec!r}: expected key=value after '?', got {item!r}")
            try:
                options[key.strip()] = yaml.safe_load(value) if value.strip() else ""
            except yaml.YAMLError as e:
                raise ValueError(_yaml_error_text(e, item)) from None
    name = base
    if base.startswith(PPO + ":") and not (registered is not None and registered(base)):
        name = PPO
        options = {"path": base[len(PPO) + 1:], **options}
    return BotSpec(base, name, options)


def base_of(spec: str) -> str:
    """What a spec names, before its query, without reading the query (which may be
    malformed): for checks that must find a name whatever follows it, such as the
    evaluation set's guard."""
    return str(spec).partition("?")[0].strip()


def load(target: str, what: str | None = None) -> Callable[..., Any]:
    """The callable named by ``"module:attr"`` (``attr`` may be dotted). The module is
    imported from ``sys.path`` and, failing that, from the working folder, so that a
    ``mybot.py`` beside the user loads under every command (``pis-serve``, ``pis-play``,
    ``pis-tournament``, ``python -m``, a notebook) alike. ``ValueError`` for an import
    that fails or a target that is not callable; ``what`` names the bot in the message."""
    module_name, _, attr = target.partition(":")
    where = "" if what is None or what == target else f"agent {what!r}: "
    try:
        module: Any = _import(module_name)
        obj = module
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"{where}cannot load {target!r}: {e}") from e
    if not callable(obj):
        raise ValueError(f"{target!r} is not a class or function, but {obj!r}")
    return obj


def _import(module_name: str) -> Any:
    """``importlib.import_module(module_name)``, and when the module (or its top package)
    is not found on ``sys.path``, once more with the working folder appended to it.

    Why: ``python -m`` puts the working folder on ``sys.path`` but an installed command
    (``pis-serve``, ``pis-play``, ``pis-tournament``) puts its ``bin`` folder there
    instead, so ``mybot:MyBot`` loaded under one and not the other. The folder is appended
    (it shadows nothing found before) and stays when the import works: the module's own
    later imports of its neighbours need it, and worker processes inherit it. An error
    inside the module, a missing module of its own imports included, is raised as it
    is."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        top = module_name.partition(".")[0]
        try:
            cwd = os.getcwd()
        except OSError:  # the working folder was removed
            raise e from None
        if e.name != top or "" in sys.path or cwd in sys.path:
            raise
        sys.path.append(cwd)
        importlib.invalidate_caches()
        try:
            return importlib.import_module(module_name)
        except ModuleNotFoundError as again:
            if again.name == top:  # not in the working folder either: leave no trace
                sys.path.remove(cwd)
            raise


def _yaml_error_text(e, item: str) -> str:
    from agents.common.cli import yaml_error_text

    return yaml_error_text(e, item)


__all__ = ["PPO", "BotSpec", "base_of", "load", "parse"]
