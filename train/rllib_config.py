"""The config of ``train/rllib_ppo.py``: ``configs/rllib_ppo.yaml`` plus ``key=value`` overrides.

Kept apart from ``train.config`` (the SB3 pipeline's, with its own keys): this one only
holds what the RLlib run needs, and refuses any key it does not know, naming the valid
ones, so that a typo never trains with a silent default.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from pis_env import shipped

DEFAULT_CONFIG = shipped.shipped_dir("config") / "rllib_ppo.yaml"
#: Sections whose keys are passed through to RLlib (checked by RLlib itself).
FREE_SECTIONS = ("rules", "opponents", "ppo", "model")
ACTIVATIONS = ("tanh", "relu")


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> dict:
    """The defaults file, then ``path`` (a partial or full config), then overrides."""
    cfg = _read(DEFAULT_CONFIG)
    if path is not None and Path(path).resolve() != DEFAULT_CONFIG:
        _merge(cfg, _read(shipped.resolve(path, "config")), "")
    for item in overrides or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"overrides are key=value (dotted keys), got {item!r}")
        tree: dict = {}
        node = tree
        parts = key.strip().split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = yaml.safe_load(value) if value.strip() else None
        _merge(cfg, tree, "")
    validate(cfg)
    return cfg


def _read(path: Path) -> dict:
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a config is a YAML mapping")
    return data


def _merge(base: dict, new: dict, prefix: str) -> None:
    for key, value in new.items():
        name = f"{prefix}{key}"
        free = prefix.rstrip(".") in FREE_SECTIONS
        if key not in base and not free:
            valid = ", ".join(sorted(prefix + k for k in base))
            raise ValueError(f"unknown config key {name!r}; valid keys: {valid}")
        if isinstance(value, dict) and isinstance(base.get(key), dict) and not (
                prefix == "" and key == "opponents"):
            _merge(base[key], value, f"{name}.")
        else:
            base[key] = copy.deepcopy(value)


def validate(cfg: dict) -> None:
    """Clear errors for values RLlib would reject late (or accept wrongly)."""
    from pis_env import Rules

    rules = Rules.from_options(**cfg["rules"]).to_dict()
    if rules["num_deals"] != 1:
        raise ValueError("rllib_ppo trains on single deals: rules.num_deals must be 1")
    cfg["rules"] = rules
    opp = cfg["opponents"]
    if not isinstance(opp, dict) or not opp:
        raise ValueError("opponents is a mapping bot name -> weight, e.g. {heuristic: 1}")
    from agents import REGISTRY

    for name, weight in opp.items():
        if name not in REGISTRY or name in ("human", "ppo"):
            raise ValueError(f"opponent {name!r}: use a built-in bot "
                             f"({', '.join(n for n in REGISTRY if n not in ('human', 'ppo'))})")
        if not isinstance(weight, (int, float)) or weight <= 0:
            raise ValueError(f"opponent {name!r}: weight must be a positive number, got {weight!r}")
    runners = cfg["env_runners"]
    for key in ("num_env_runners", "num_envs_per_env_runner"):
        value = runners[key]
        low = 0 if key == "num_env_runners" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"env_runners.{key} must be an int >= {low}, got {value!r}")
    act = cfg["model"].get("fcnet_activation", "tanh")
    if act not in ACTIVATIONS:
        raise ValueError(f"model.fcnet_activation={act!r}: the exported policy supports "
                         f"{', '.join(ACTIVATIONS)}")
    for key in ("minutes", "env_steps", "iterations"):
        value = cfg["stop"][key]
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or value <= 0):
            raise ValueError(f"stop.{key} must be a positive number or null, got {value!r}")
    if all(cfg["stop"][k] is None for k in ("minutes", "env_steps", "iterations")):
        raise ValueError("set at least one of stop.minutes, stop.env_steps, stop.iterations")
    threads = cfg["torch_threads"]
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise ValueError(f"torch_threads must be an int >= 1 or null, got {threads!r}")
    _validate_pretrain(cfg)
    every = cfg["checkpoint_every"]
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"checkpoint_every must be an int >= 1, got {every!r}")


def _validate_pretrain(cfg: dict) -> None:
    from agents import REGISTRY
    from train.rllib_pretrain import COLLECTORS

    p = cfg["pretrain"]
    if not isinstance(p, dict):
        raise ValueError(f"pretrain is a mapping (teacher, decisions, ...), got {p!r}; "
                         "pretrain.teacher=null skips the warm start")
    teacher = p["teacher"]
    bots = [n for n in REGISTRY if n not in ("human", "ppo")]
    if teacher is not None and (not isinstance(teacher, str) or teacher not in bots):
        raise ValueError(f"pretrain.teacher={teacher!r}: a built-in bot ({', '.join(bots)}) "
                         "or null (no warm start)")
    for key in ("decisions", "epochs", "batch_size"):
        value = p[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"pretrain.{key} must be an int >= 1, got {value!r}")
    for key, low in (("learning_rate", None), ("value_coef", 0)):
        value = p[key]
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or (value <= 0 if low is None else value < low)):
            what = "a positive number" if low is None else "a number >= 0"
            raise ValueError(f"pretrain.{key} must be {what}, got {value!r}")
    if p["collector"] not in COLLECTORS:
        raise ValueError(f"pretrain.collector={p['collector']!r}: one of {', '.join(COLLECTORS)}")


def dump(cfg: dict[str, Any]) -> str:
    return yaml.safe_dump(cfg, sort_keys=False)
