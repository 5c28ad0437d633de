"""Training configuration: embedded defaults, YAML files, ``key=value`` overrides.

A config is a nested dict. ``DEFAULTS`` is the complete default (the 2-player run of
``configs/ppo_2p.yaml``); a YAML file holds any subset of it (``extends: other.yaml`` first
loads another file), and command-line overrides are ``section.key=value`` (values are YAML:
``ppo.learning_rate=1e-4``, ``policy.net_arch=[512,512]``,
``league.opponents={heuristic: 0.5, self: 0.5}``). A key that is unique among the leaves may
be given without its section (``learning_rate=1e-4``; a name shared with ``ppo`` means
PPO's: ``batch_size`` is ``ppo.batch_size``). An unknown key is a ``ConfigError``
naming the nearest valid ones; a value of the wrong type or out of range names the key and
what it accepts.

``rules`` holds rules options of ``pis_env`` (``rules.draw_rule=one``); ``rules_file`` (or
``rules=PATH.yaml``) loads a rules YAML under them. ``num_players``, when set, overrides the
rules' ``num_players``. ``resolve`` returns the config with ``rules`` expanded into every
option, which is what a run saves.
"""

from __future__ import annotations

import copy
import difflib
from pathlib import Path
from typing import Any

import yaml

from pis_env import Rules
from pis_env.observation import segment_table

REPO_ROOT = Path(__file__).resolve().parent.parent


#: The largest seed: seeds reach numpy's 32-bit legacy seeding with room for the step
#: counter added on resume.
MAX_SEED = 2**31 - 1


class ConfigError(ValueError):
    """A bad config key or value."""


DEFAULTS: dict[str, Any] = {
    "name": "ppo_2p",            # run name: the run directory is runs/<name>-<timestamp>
    "run_dir": None,             # explicit run directory (overrides name)
    "seed": 0,
    "total_timesteps": 20_000_000,
    "max_minutes": 7.0,          # stop training after this much training time (cumulative,
                                 # pretraining included; null: no limit)
    "num_players": 2,            # null: take num_players from the rules
    "rules_file": None,          # a rules YAML (configs/rules/*.yaml)
    "rules": {},                 # rules options on top of rules_file (pis_env keywords)
    "win_bonus": 0.5,            # added to the learner's reward: +bonus for a win, -bonus
                                 # for a loss (shared as in reward="win"), on top of the
                                 # rules' reward
    "skip_forced": True,         # the env plays the learner's forced moves (1 legal action)
    "n_envs": 512,
    "vec_env": "batched",        # dummy | subproc | batched (numba engine, pis_env.batched)
                                 # | "module:function" (a VecEnv factory)
    "torch_threads": 1,          # torch.set_num_threads (0: torch default); 1 suits 2 busy cores
    "ppo": {
        "learning_rate": 5.0e-4,
        "lr_schedule": "constant",  # constant | linear (to lr_final_fraction at the end)
        "lr_final_fraction": 0.1,
        "n_steps": 32,           # per env per rollout
        "batch_size": 8192,
        "n_epochs": 1,
        "gamma": 1.0,
        "gae_lambda": 0.95,
        "clip_range": 0.2,
        "ent_coef": 0.01,
        "vf_coef": 0.5,
        "max_grad_norm": 0.5,
        "target_kl": None,
        "normalize_advantage": True,
    },
    "policy": {
        "net_arch": [256, 256],
        "activation": "tanh",    # tanh | relu
        "ortho_init": True,
        "features": ["obs", "mask"],  # network input: the observation, then the legal mask
        "normalize_obs": False,  # running mean/std normalisation of the input
        "privileged_critic": True,  # the value net also sees the hidden cards (train/policy.py)
        "hide_from_actor": [],   # observation segments the actor never reads (an ablation:
                                 # e.g. [drew_on_suit, discard]); see train/policy.py
    },
    "league": {
        # The mix each opponent seat is drawn from: agent names of agents.make, and "self"
        # for the pool of frozen snapshots of the learner.
        "opponents": {"heuristic": 0.8, "self": 0.2},
        "learner_seat": None,     # null: a random seat every episode
        "snapshot_every": 500_000,
        "pool_size": 10,
        "prioritized": True,      # pick snapshots the learner still loses to more often
        "priority_power": 2.0,    # weight (1 - score)^p (AlphaStar's PFSP "hard")
        "snapshot_deterministic": False,
        "window": 500,            # results kept per opponent for stats and priorities
    },
    "pretrain": {
        # Behaviour cloning of a bot before PPO (null: start from a random policy).
        "teacher": "heuristic",
        "decisions": 300_000,    # teacher decisions at the learner's seat
        "epochs": 4,
        "batch_size": 1024,
        "learning_rate": 1.0e-3,
        "value_coef": 1.0,       # weight of the value head's return regression
    },
    "checkpoint": {
        "every": 2_000_000,
        "keep": 2,
    },
    "eval": {
        "opponents": ["random", "greedy", "heuristic"],
        "deals": 1000,           # duplicate deals per opponent (0: no evaluation)
        "seed": 2024,
        "workers": None,         # tournament worker processes (null: all cores)
    },
    "log": {
        "tensorboard": True,
        "progress": True,        # a progress bar on a terminal, lines in a log file
        "interval": 30.0,        # seconds between lines when stderr is not a terminal
        "win_window": 1000,      # episodes in the "recent win rate"
    },
    "export_pt": True,           # also write the weights-only policy.pt
}

#: Types of keys whose default is None (or that accept more than their default's type).
NULLABLE: dict[str, tuple[type, ...]] = {
    "run_dir": (str,),
    "max_minutes": (float, int),
    "num_players": (int,),
    "rules_file": (str,),
    "ppo.target_kl": (float, int),
    "league.learner_seat": (int,),
    "eval.workers": (int,),
    "pretrain.teacher": (str,),
}
#: Mappings whose keys are free (validated elsewhere): rules options, agent names.
OPEN_MAPS = ("rules", "league.opponents")
CHOICES = {
    "vec_env": ("dummy", "subproc", "batched"),
    "ppo.lr_schedule": ("constant", "linear"),
    "policy.activation": ("tanh", "relu"),
}


# ---------------------------------------------------------------------- key paths
def _leaves(d: dict, prefix: str = "") -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict) and path not in OPEN_MAPS:
            out.update(_leaves(v, path + "."))
        else:
            out[path] = v
    return out


LEAF_KEYS: dict[str, Any] = _leaves(DEFAULTS)


def _short_names() -> dict[str, str]:
    counts: dict[str, list[str]] = {}
    for path in LEAF_KEYS:
        counts.setdefault(path.rsplit(".", 1)[-1], []).append(path)
    out = {}
    for short, paths in counts.items():
        if len(paths) == 1:
            out[short] = paths[0]
        elif f"ppo.{short}" in paths:  # ambiguous names mean PPO's hyperparameter
            out[short] = f"ppo.{short}"
    return out


SHORT_NAMES = _short_names()


def _nearest(key: str) -> str:
    candidates = list(dict.fromkeys(
        [*LEAF_KEYS, *SHORT_NAMES, *(f"rules.{k}" for k in Rules.keys())]))
    close = difflib.get_close_matches(key, candidates, n=3, cutoff=0.5)
    if not close:
        last = key.rsplit(".", 1)[-1]
        close = [p for p in LEAF_KEYS if difflib.get_close_matches(last, [p.rsplit(".", 1)[-1]],
                                                                     cutoff=0.6)][:3]
    return f"; did you mean {', '.join(close)}?" if close else ""


def canonical_key(key: str) -> str:
    """The full dotted path of a key (``learning_rate`` -> ``ppo.learning_rate``)."""
    key = key.strip()
    if key == "rules":
        return "rules"
    if key in LEAF_KEYS:
        return key
    for open_map in OPEN_MAPS:
        if key.startswith(open_map + "."):
            rest = key[len(open_map) + 1:]
            if open_map == "rules" and rest not in Rules.keys():
                close = difflib.get_close_matches(rest, list(Rules.keys()), n=3)
                hint = f"; did you mean {', '.join('rules.' + c for c in close)}?" if close else ""
                raise ConfigError(f"unknown rules option {key!r}{hint}")
            if "." in rest:
                raise ConfigError(f"unknown config key {key!r}{_nearest(key)}")
            return key
    if key in SHORT_NAMES:
        return SHORT_NAMES[key]
    raise ConfigError(f"unknown config key {key!r}{_nearest(key)}")


def _set(cfg: dict, path: str, value: Any) -> None:
    parts = path.split(".")
    node = cfg
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = value


def _get(cfg: dict, path: str) -> Any:
    node = cfg
    for p in path.split("."):
        node = node[p]
    return node


def parse_value(text: str) -> Any:
    """A command-line value: YAML, with ``1e-4``-style floats and ``none`` understood."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if isinstance(value, str):
        if value.lower() in ("none", "null"):
            return None
        try:
            return float(value) if any(c in value.lower() for c in ".e") else int(value)
        except ValueError:
            return value
    return value


# ---------------------------------------------------------------------- merging
def apply(cfg: dict, updates: dict, source: str = "config") -> None:
    """Merges a (nested or dotted) mapping of updates into ``cfg``, checking every key."""
    if not isinstance(updates, dict):
        raise ConfigError(f"{source}: expected a mapping of config keys")
    for key, value in _flatten_updates(updates).items():
        if key == "extends":
            continue
        if key == "rules" and isinstance(value, str):
            key = "rules_file"
        path = canonical_key(key)
        if path == "rules" and isinstance(value, dict):
            for k, v in value.items():
                _set(cfg, f"rules.{canonical_key('rules.' + str(k)).split('.', 1)[1]}", v)
            continue
        _set(cfg, path, value)


def _flatten_updates(updates: dict, prefix: str = "") -> dict[str, Any]:
    out = {}
    for k, v in updates.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict) and path not in OPEN_MAPS and path != "rules" and (
            any(p.startswith(path + ".") for p in LEAF_KEYS)
        ):
            out.update(_flatten_updates(v, path + "."))
        else:
            out[path] = v
    return out


def yaml_error(path, error: yaml.YAMLError) -> str:
    """``PATH:LINE: not valid YAML: problem`` on one line (PyYAML's own message spans
    several, with a source excerpt)."""
    mark = getattr(error, "context_mark", None) or getattr(error, "problem_mark", None)
    where = f", line {mark.line + 1}" if mark is not None else ""
    problem = " ".join(str(getattr(error, "problem", None) or error).split())
    return f"{path}{where}: not valid YAML: {problem}"


def load_file(path: str | Path, _seen: tuple = ()) -> dict:
    """A config YAML as a mapping of updates (following ``extends``)."""
    p = Path(path)
    if not p.exists() and not p.is_absolute() and (REPO_ROOT / p).exists():
        p = REPO_ROOT / p
    if not p.exists():
        raise ConfigError(f"config file not found: {path}")
    if p.resolve() in _seen:
        raise ConfigError(f"{p}: 'extends' loops back to itself")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise ConfigError(yaml_error(p, e)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: a config file must be a mapping of keys")
    if "extends" in data:
        base_path = (p.parent / data["extends"])
        base = load_file(base_path, _seen + (p.resolve(),))
        merged = copy.deepcopy(DEFAULTS)
        apply(merged, base, str(base_path))
        apply(merged, data, str(p))
        return _diff(merged)
    if isinstance(data.get("rules_file"), str):
        data["rules_file"] = _rel_path(p.parent, data["rules_file"])
    if isinstance(data.get("rules"), str):
        data["rules"] = _rel_path(p.parent, data["rules"])
    return data


def _rel_path(base: Path, value: str) -> str:
    cand = base / value
    return str(cand) if cand.exists() else value


def _diff(cfg: dict) -> dict:
    out = {}
    for path, value in _leaves(cfg).items():
        if path not in LEAF_KEYS or LEAF_KEYS[path] != value:
            out[path] = value
    return out


def parse_overrides(items: list[str]) -> dict[str, Any]:
    updates = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(
                f"override {item!r} is not key=value (e.g. total_timesteps=200000); "
                + (f"did you mean {canonical_key(item)}=...?" if _is_key(item) else "")
            )
        key, text = item.split("=", 1)
        updates[key.strip()] = parse_value(text)
    return updates


def _is_key(text: str) -> bool:
    try:
        canonical_key(text)
        return True
    except ConfigError:
        return False


def build(config_file: str | Path | None = None, overrides: list[str] | dict | None = None,
          base: dict | None = None) -> dict:
    """DEFAULTS (or ``base``) + config file + overrides, validated and resolved."""
    cfg = copy.deepcopy(base if base is not None else DEFAULTS)
    if config_file is not None:
        apply(cfg, load_file(config_file), str(config_file))
    if overrides:
        if isinstance(overrides, dict):
            apply(cfg, overrides, "overrides")
        else:
            apply(cfg, parse_overrides(list(overrides)), "command line")
    return resolve(cfg)


# ---------------------------------------------------------------------- validation
def _type_ok(value, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)


def _check(cfg: dict) -> None:
    for path, default in LEAF_KEYS.items():
        value = _get(cfg, path)
        if path in OPEN_MAPS:
            if not isinstance(value, dict):
                raise ConfigError(f"{path} must be a mapping, got {value!r}")
            continue
        if value is None:
            if path in NULLABLE:
                continue
            raise ConfigError(f"{path} may not be null")
        if path in NULLABLE:
            types = NULLABLE[path]
        elif isinstance(default, bool):
            types = (bool,)
        elif isinstance(default, float):
            types = (float, int)
        elif isinstance(default, int):
            types = (int,)
            if isinstance(value, float) and value.is_integer():
                value = int(value)
                _set(cfg, path, value)
        else:
            types = (type(default),)
        if not _type_ok(value, types):
            names = " or ".join(t.__name__ for t in types)
            raise ConfigError(f"{path}={value!r}: expected {names}")
        if path == "vec_env" and ":" in str(value):
            continue
        if path in CHOICES and value not in CHOICES[path]:
            extra = " or module:function" if path == "vec_env" else ""
            raise ConfigError(
                f"{path}={value!r}: allowed values are {', '.join(CHOICES[path])}{extra}"
            )
    positive = ["total_timesteps", "n_envs", "ppo.n_steps", "ppo.batch_size", "ppo.n_epochs",
                "ppo.learning_rate", "league.snapshot_every", "league.pool_size",
                "checkpoint.every", "log.win_window", "league.window", "pretrain.decisions",
                "pretrain.epochs", "pretrain.batch_size", "pretrain.learning_rate"]
    for path in positive:
        if _get(cfg, path) <= 0:
            raise ConfigError(f"{path}={_get(cfg, path)!r}: must be > 0")
    for path in ["seed", "eval.seed"]:  # numpy's legacy seeding (SB3) takes 32 bits
        if not 0 <= _get(cfg, path) <= MAX_SEED:
            raise ConfigError(f"{path}={_get(cfg, path)!r}: must be in 0..{MAX_SEED}")
    if cfg["eval"]["workers"] is not None and cfg["eval"]["workers"] < 1:
        raise ConfigError(f"eval.workers={cfg['eval']['workers']!r}: must be >= 1 (or null: "
                          "all cores)")
    for path in ["ppo.gamma", "ppo.gae_lambda", "ppo.lr_final_fraction"]:
        if not 0.0 <= _get(cfg, path) <= 1.0:
            raise ConfigError(f"{path}={_get(cfg, path)!r}: must be in [0, 1]")
    for path in ["ppo.clip_range", "ppo.max_grad_norm"]:
        if _get(cfg, path) <= 0:
            raise ConfigError(f"{path}={_get(cfg, path)!r}: must be > 0")
    for path in ["win_bonus", "ppo.ent_coef", "ppo.vf_coef", "eval.deals", "checkpoint.keep",
                 "torch_threads", "league.priority_power"]:
        if _get(cfg, path) < 0:
            raise ConfigError(f"{path}={_get(cfg, path)!r}: must be >= 0")
    if cfg["max_minutes"] is not None and cfg["max_minutes"] <= 0:
        raise ConfigError(f"max_minutes={cfg['max_minutes']!r}: must be > 0 (or null)")
    arch = cfg["policy"]["net_arch"]
    if not arch or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0
                           for h in arch):
        raise ConfigError(f"policy.net_arch={arch!r}: a list of positive layer widths")
    feats = cfg["policy"]["features"]
    if not feats or len(set(feats)) != len(feats) or not set(feats) <= {"obs", "mask"} \
            or "obs" not in feats:
        raise ConfigError(f"policy.features={feats!r}: 'obs', optionally with 'mask'")
    hidden = cfg["policy"]["hide_from_actor"]
    segments = [name for name, _ in segment_table(7, 2)]
    unknown = [h for h in hidden if h not in segments]
    if unknown:
        raise ConfigError(f"policy.hide_from_actor: unknown observation segment(s) "
                          f"{unknown}; the segments are {', '.join(segments)}")
    _check_agents(cfg)


def _check_agents(cfg: dict) -> None:
    from agents import REGISTRY

    mix = cfg["league"]["opponents"]
    if not mix:
        raise ConfigError("league.opponents is empty: give at least one opponent with a weight")
    for name, weight in mix.items():
        if name != "self" and name not in REGISTRY and not str(name).startswith("ppo:"):
            close = difflib.get_close_matches(str(name), list(REGISTRY) + ["self"], n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ConfigError(
                f"league.opponents: unknown opponent {name!r}{hint} (agent names, 'ppo:PATH' "
                "or 'self' for the snapshot pool)"
            )
        if name in ("human",):
            raise ConfigError("league.opponents: 'human' cannot train")
        if not _type_ok(weight, (int, float)) or weight < 0:
            raise ConfigError(f"league.opponents.{name}={weight!r}: a weight >= 0")
    if sum(mix.values()) <= 0:
        raise ConfigError("league.opponents: the weights sum to 0")
    teacher = cfg["pretrain"]["teacher"]
    if teacher is not None and (teacher not in REGISTRY or teacher in ("human", "ppo")):
        close = difflib.get_close_matches(str(teacher), list(REGISTRY), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(f"pretrain.teacher: unknown or unusable agent {teacher!r}{hint}")
    evals = cfg["eval"]["opponents"]
    if not isinstance(evals, list):
        raise ConfigError(f"eval.opponents={evals!r}: a list of agent names")
    for name in evals:
        if name not in REGISTRY and not str(name).startswith("ppo:"):
            close = difflib.get_close_matches(str(name), list(REGISTRY), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ConfigError(f"eval.opponents: unknown agent {name!r}{hint}")


def resolve(cfg: dict) -> dict:
    """Validates ``cfg`` and expands the rules into every option (a new dict)."""
    cfg = copy.deepcopy(cfg)
    for key in cfg:
        if key not in DEFAULTS:
            raise ConfigError(f"unknown config key {key!r}{_nearest(key)}")
    for section, default in DEFAULTS.items():
        if isinstance(default, dict) and section not in OPEN_MAPS:
            for key in cfg.get(section, {}):
                if key not in default:
                    canonical_key(f"{section}.{key}")  # raises with the nearest names
    _check(cfg)
    options: dict[str, Any] = {}
    if cfg["rules_file"]:
        path = Path(cfg["rules_file"])
        if not path.exists() and (REPO_ROOT / path).exists():
            path = REPO_ROOT / path
        if not path.exists():
            raise ConfigError(f"rules_file not found: {cfg['rules_file']}")
        try:
            options.update(Rules.from_yaml(path).to_dict())
        except ValueError as e:
            raise ConfigError(f"rules_file: {e}") from e
    options.update(cfg["rules"])
    if cfg["num_players"] is not None:
        options["num_players"] = cfg["num_players"]
    options.pop("illegal_action", None)
    try:
        rules = Rules.from_options(**options)
    except ValueError as e:
        raise ConfigError(f"rules: {e}") from e
    cfg["rules"] = {k: v for k, v in rules.to_dict().items() if k != "illegal_action"}
    cfg["num_players"] = rules.num_players
    seat = cfg["league"]["learner_seat"]
    if seat is not None and not 0 <= seat < rules.num_players:
        raise ConfigError(f"league.learner_seat={seat}: must be in 0..{rules.num_players - 1}")
    return cfg


def dump(cfg: dict) -> str:
    return yaml.safe_dump(cfg, sort_keys=False, default_flow_style=None)
