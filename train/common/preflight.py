"""Checks a training run makes before it creates its run directory or takes a step.

Why: a bad opponent file or a policy made for another table would otherwise surface as a
traceback minutes into a run (at the first league game, or in the final evaluation), after
the run directory had been created. ``check_run`` builds every agent the run will seat —
league opponents, the pretraining teacher, evaluation opponents — at the run's table,
reads the ``init_policy`` and the ``pretrain.data`` files,
and checks where the VecEnv factory comes from, so that every such mistake is a
``ConfigError`` up front.

**Trust.** ``vec_env: "module:function"`` imports and calls that module. A config file,
or a run directory's saved ``config.yaml`` read by ``--resume``, may name only the
project's own factories (modules of ``PROJECT_PACKAGES``); any other module must be
named by the user on the command line (``vec_env=mymodule:factory``), which
``trusted_modules`` carries here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from train.common.schema import ConfigError

#: Packages whose modules a config may name as the VecEnv factory.
PROJECT_PACKAGES = ("pis_env", "agents", "train")


def check_run(cfg: Any, trusted_modules: Iterable[str] = ()) -> None:
    """Raises ``ConfigError`` for anything in a resolved config that would fail later."""
    check_vec_env(cfg.vec_env, trusted_modules)
    rules = cfg.rules
    seats = [("league.opponents", name) for name in cfg.league.opponents
             if name != "self"]
    if cfg.pretrain.teacher:
        seats.append(("pretrain.teacher", cfg.pretrain.teacher))
    if cfg.eval.deals > 0:
        seats += [("eval.opponents", name) for name in cfg.eval.opponents]
    for key, name in seats:
        check_agent(key, name, rules)
    if cfg.init_policy:
        from train.common.checkpoint import CheckpointError, read_initial_policy

        try:
            read_initial_policy(cfg.init_policy, cfg)
        except CheckpointError as e:
            raise ConfigError(str(e)) from e
    if cfg.pretrain.data:
        from train.common.pretrain import load_labelled

        try:
            load_labelled(cfg.pretrain.data, cfg)
        except ValueError as e:
            raise ConfigError(f"pretrain.data: {e}") from e


def check_vec_env(vec_env: str, trusted_modules: Iterable[str] = ()) -> None:
    if ":" not in vec_env:
        return
    module = vec_env.partition(":")[0]
    if module.split(".")[0] in PROJECT_PACKAGES or module in set(trusted_modules):
        return
    raise ConfigError(
        f"vec_env={vec_env!r}: a config may only name the project's own VecEnv factories "
        f"(modules of {', '.join(PROJECT_PACKAGES)}); to import {module!r}, give "
        f"vec_env={vec_env} on the command line"
    )


def check_agent(key: str, name: str, rules: dict) -> None:
    """Builds agent ``name`` for the table of ``rules`` (a ``ppo:`` policy is loaded and
    its observation layout checked)."""
    import agents

    try:
        agents.make_for_table(name, rules, seed=0)
    except (ValueError, OSError, ImportError) as e:
        raise ConfigError(f"{key}: {name!r} cannot sit at this table: {e}") from e
