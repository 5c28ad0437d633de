"""Training configuration: typed dataclasses (OmegaConf structured configs), YAML, overrides.

Every hyperparameter is declared once, below, as a dataclass field with its default, its
help text and its allowed range (``python train/ppo.py --help-config`` prints them all).
OmegaConf checks and converts the types; this module adds what OmegaConf does not:

* ``key=value`` overrides with YAML values (``ppo.learning_rate=1e-4``,
  ``policy.net_arch=[512,512]``, ``league.opponents={heuristic: 0.5, self: 0.5}``; a
  mapping value replaces the whole mapping, except ``rules``, which is merged option by
  option);
* short names: a key unique among the leaves may be given without its section
  (``learning_rate=1e-4``); a name shared with ``ppo`` means PPO's (``batch_size`` is
  ``ppo.batch_size``);
* an unknown key is a ``ConfigError`` naming the nearest valid ones; a value of the wrong
  type or out of range names the key and what it accepts;
* config files: a YAML mapping of any subset of the keys; ``extends: other.yaml`` loads
  another file first; ``rules_file`` (or ``rules=PATH.yaml``) loads a rules YAML under
  ``rules``; ``num_players``, when set, overrides the rules' ``num_players``.

``build`` returns the resolved config as a plain dict (``rules`` expanded into every
option), which is what a run saves in its ``config.yaml`` and what ``--resume`` reads back.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from pis_env import Rules
from pis_env.observation import segment_table

REPO_ROOT = Path(__file__).resolve().parent.parent

#: The largest seed: seeds reach numpy's 32-bit legacy seeding with room for the step
#: counter added on resume.
MAX_SEED = 2**31 - 1


class ConfigError(ValueError):
    """A bad config key or value."""


def param(default: Any, help: str, **limits: Any) -> Any:
    """A config field: its default, help text and limits (``gt``/``ge``/``le``: bounds,
    ``choices``: allowed values), kept in the field's metadata."""
    meta = {"help": help, **limits}
    if isinstance(default, (list, dict)):
        return field(default_factory=functools.partial(copy.deepcopy, default), metadata=meta)
    return field(default=default, metadata=meta)


def section(cls: type, help: str) -> Any:
    return field(default_factory=cls, metadata={"help": help})


# ---------------------------------------------------------------------- the hyperparameters
@dataclass
class PPOConfig:
    learning_rate: float = param(5.0e-4, "Adam step size of the PPO updates", gt=0)
    lr_schedule: str = param("constant", "constant, or linear: annealed to lr_final_fraction "
                             "of learning_rate at total_timesteps",
                             choices=("constant", "linear"))
    lr_final_fraction: float = param(0.1, "the linear schedule's final fraction", ge=0, le=1)
    n_steps: int = param(32, "steps per env per rollout", gt=0)
    batch_size: int = param(8192, "minibatch size of the PPO updates", gt=0)
    n_epochs: int = param(1, "passes over each rollout", gt=0)
    gamma: float = param(1.0, "discount factor (a deal is short: 1 keeps the points exact)",
                         ge=0, le=1)
    gae_lambda: float = param(0.95, "GAE lambda (lower leans more on the critic)", ge=0, le=1)
    clip_range: float = param(0.2, "PPO's policy ratio clipping", gt=0)
    ent_coef: float = param(0.01, "entropy bonus coefficient", ge=0)
    vf_coef: float = param(0.5, "value loss coefficient", ge=0)
    max_grad_norm: float = param(0.5, "gradient clipping norm", gt=0)
    target_kl: float | None = param(None, "stop an update's epochs past this KL "
                                       "(null: never)")
    normalize_advantage: bool = param(True, "normalise advantages per minibatch")


@dataclass
class PolicyConfig:
    net_arch: list[int] = param([256, 256], "hidden layer widths of the actor and the critic")
    activation: str = param("tanh", "hidden activation", choices=("tanh", "relu"))
    ortho_init: bool = param(True, "orthogonal initialisation (SB3's default)")
    features: list[str] = param(["obs", "mask"], "network input: the observation ('obs'), "
                                "then optionally the legal mask ('mask')")
    normalize_obs: bool = param(False, "running mean/std normalisation of the input "
                                "(VecNormalize)")
    privileged_critic: bool = param(True, "the value net also sees the hidden cards "
                                    "(train/policy.py)")
    hide_from_actor: list[str] = param([], "observation segments the actor never reads (an "
                                       "ablation, e.g. [drew_on_suit, discard])")


@dataclass
class LeagueConfig:
    opponents: dict[str, float] = param(
        {"heuristic": 0.8, "self": 0.2}, "the mix each opponent seat is drawn from: agent "
        "names of agents.make, 'ppo:PATH', and 'self' for the pool of the learner's snapshots")
    learner_seat: int | None = param(None, "the learner's seat (null: a random seat every "
                                        "episode)")
    snapshot_every: int = param(500_000, "steps between snapshots of the learner for the pool",
                                gt=0)
    pool_size: int = param(10, "snapshots kept in the pool", gt=0)
    prioritized: bool = param(True, "pick snapshots the learner still loses to more often")
    priority_power: float = param(2.0, "a snapshot's weight is (1 - score)^p (AlphaStar's "
                                  "PFSP 'hard')", ge=0)
    snapshot_deterministic: bool = param(False, "snapshots play their argmax instead of "
                                         "sampling")
    window: int = param(500, "results kept per opponent for stats and priorities", gt=0)


@dataclass
class PretrainConfig:
    teacher: str | None = param("heuristic", "behaviour cloning of this bot before PPO "
                                   "(null: start from a random policy)")
    decisions: int = param(300_000, "teacher decisions at the learner's seat", gt=0)
    epochs: int = param(4, "passes over the teacher's decisions", gt=0)
    batch_size: int = param(1024, "minibatch size of the imitation", gt=0)
    learning_rate: float = param(1.0e-3, "Adam step size of the imitation", gt=0)
    value_coef: float = param(1.0, "weight of the value head's return regression")
    data: list[str] = param([], "imitate the labelled positions of these .npz files "
                            "(train/expert_iteration.py) instead of a teacher's decisions")


@dataclass
class CheckpointConfig:
    every: int = param(2_000_000, "steps between checkpoints (also at the end and on Ctrl-C)",
                       gt=0)
    keep: int = param(2, "checkpoints kept (0: all)", ge=0)


@dataclass
class EvalConfig:
    opponents: list[str] = param(["random", "greedy", "heuristic"],
                                 "bots the final policy is evaluated against")
    deals: int = param(1000, "duplicate deals per opponent (0: no evaluation)", ge=0)
    seed: int = param(2024, "seed of the evaluation deals", ge=0, le=MAX_SEED)
    workers: int | None = param(None, "tournament worker processes (null: all cores)", ge=1)


@dataclass
class LogConfig:
    tensorboard: bool = param(True, "TensorBoard logs in the run's tb/ (with the resolved "
                              "config as text)")
    progress: bool = param(True, "a progress bar on a terminal, lines in a log file")
    interval: float = param(30.0, "seconds between progress lines when stderr is not a "
                            "terminal", ge=0)
    win_window: int = param(1000, "episodes in the 'recent win rate'", gt=0)


@dataclass
class TrainConfig:
    """A training run of ``train/ppo.py``: the 2-player recipe of ``configs/ppo_2p.yaml``."""

    name: str = param("ppo_2p", "run name: the run directory is runs/<name>-<timestamp>")
    run_dir: str | None = param(None, "explicit run directory (overrides name)")
    seed: int = param(0, "seed of the model, the envs and the pretraining", ge=0, le=MAX_SEED)
    init_policy: str | None = param(None, "start from this saved policy's weights (a .zip "
                                       "or .pt of train/ppo.py for the same table and "
                                       "network); pretraining, if set, continues from them")
    total_timesteps: int = param(20_000_000, "PPO steps to train for", gt=0)
    max_minutes: float | None = param(7.0, "stop after this much training time, "
                                         "cumulative, pretraining included (null: no limit)",
                                         gt=0)
    num_players: int | None = param(2, "players at the table (null: take it from the "
                                       "rules)")
    rules_file: str | None = param(None, "a rules YAML (configs/rules/*.yaml); also "
                                      "rules=PATH.yaml")
    rules: dict[str, Any] = param({}, "rules options on top of rules_file (pis_env keywords, "
                                  "e.g. rules.draw_rule=one)")
    win_bonus: float = param(0.5, "added to the learner's reward at a match end: +bonus for a "
                             "win, -bonus shared by the losers", ge=0)
    skip_forced: bool = param(True, "the env plays the learner's forced moves (1 legal "
                              "action)")
    n_envs: int = param(512, "games stepped together", gt=0)
    vec_env: str = param("batched", "dummy | subproc | batched (the numba engine) | "
                         "module:function (a VecEnv factory)",
                         choices=("dummy", "subproc", "batched"))
    torch_threads: int = param(1, "torch.set_num_threads (0: torch's default); 1 suits 2 "
                               "busy cores", ge=0)
    ppo: PPOConfig = section(PPOConfig, "MaskablePPO")
    policy: PolicyConfig = section(PolicyConfig, "the network")
    league: LeagueConfig = section(LeagueConfig, "the opponents")
    pretrain: PretrainConfig = section(PretrainConfig, "imitation of a bot before PPO")
    checkpoint: CheckpointConfig = section(CheckpointConfig, "checkpoints")
    eval: EvalConfig = section(EvalConfig, "the final evaluation")
    log: LogConfig = section(LogConfig, "logging and progress")
    export_pt: bool = param(True, "also write the weights-only policy.pt")


# ---------------------------------------------------------------------- key paths
@dataclass(frozen=True)
class Key:
    """A leaf of the config: its dotted path, type and field metadata (help, limits)."""

    path: str
    type: Any
    default: Any
    metadata: Any


def _keys(cls: type, prefix: str = "") -> dict[str, Key]:
    """Every leaf by dotted path (mappings such as ``rules`` are leaves)."""
    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        tp, path = hints[f.name], f"{prefix}{f.name}"
        if dataclasses.is_dataclass(tp):
            out.update(_keys(tp, path + "."))
        else:
            default = f.default_factory() if f.default is dataclasses.MISSING else f.default
            out[path] = Key(path, tp, default, f.metadata)
    return out


FIELDS: dict[str, Key] = _keys(TrainConfig)
SECTIONS = tuple(dict.fromkeys(p.split(".")[0] for p in FIELDS if "." in p))
#: The defaults as a plain nested dict.
DEFAULTS: dict[str, Any] = OmegaConf.to_container(OmegaConf.structured(TrainConfig))


def _short_names() -> dict[str, str]:
    paths: dict[str, list[str]] = {}
    for path in FIELDS:
        paths.setdefault(path.rsplit(".", 1)[-1], []).append(path)
    out = {}
    for short, found in paths.items():
        if len(found) == 1:
            out[short] = found[0]
        elif f"ppo.{short}" in found:  # ambiguous names mean PPO's hyperparameter
            out[short] = f"ppo.{short}"
    return out


SHORT_NAMES = _short_names()


def _nearest(key: str) -> str:
    candidates = list(dict.fromkeys(
        [*FIELDS, *SHORT_NAMES, *(f"rules.{k}" for k in Rules.keys())]))
    close = difflib.get_close_matches(key, candidates, n=3, cutoff=0.5)
    if not close:
        last = key.rsplit(".", 1)[-1]
        close = [p for p in FIELDS
                 if difflib.get_close_matches(last, [p.rsplit(".", 1)[-1]], cutoff=0.6)][:3]
    return f"; did you mean {', '.join(close)}?" if close else ""


def canonical_key(key: str) -> str:
    """The full dotted path of a key (``learning_rate`` -> ``ppo.learning_rate``)."""
    key = key.strip()
    if key in FIELDS:
        return key
    if key.startswith("rules."):
        option = key[len("rules."):]
        if option not in Rules.keys():
            close = difflib.get_close_matches(option, list(Rules.keys()), n=3)
            hint = f"; did you mean {', '.join('rules.' + c for c in close)}?" if close else ""
            raise ConfigError(f"unknown rules option {key!r}{hint}")
        return key
    if key in SHORT_NAMES:
        return SHORT_NAMES[key]
    if key in SECTIONS:
        keys = ", ".join(p for p in FIELDS if p.startswith(key + "."))
        raise ConfigError(f"{key!r} is a section, not a value: give its keys ({keys})")
    raise ConfigError(f"unknown config key {key!r}{_nearest(key)}")


def _type_name(tp: Any) -> str:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return f"{_type_name(inner[0])} or null"
    if origin is list:
        return f"a list of {_type_name(args[0])}"
    if origin is dict:
        return f"a mapping of {_type_name(args[0])} to {_type_name(args[1])}"
    return getattr(tp, "__name__", str(tp)).replace("Any", "anything")


def _limits_text(meta: dict) -> str:
    if "ge" in meta and "le" in meta:
        low, high = meta["ge"], meta["le"]
        return f"in {low}..{high}" if isinstance(high, int) and high > 1 else \
            f"in [{low}, {high}]"
    if "gt" in meta:
        return f"> {meta['gt']}"
    if "ge" in meta:
        return f">= {meta['ge']}"
    return ""


# ---------------------------------------------------------------------- values
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


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["key=value", ...]`` as a mapping of updates."""
    updates = {}
    for item in items:
        if "=" not in item:
            hint = ""
            try:
                hint = f"did you mean {canonical_key(item)}=...?"
            except ConfigError:
                pass
            raise ConfigError(f"override {item!r} is not key=value (e.g. "
                              f"total_timesteps=200000); {hint}")
        key, text = item.split("=", 1)
        updates[key.strip()] = parse_value(text)
    return updates


def flatten(updates: dict, source: str = "config") -> dict[str, Any]:
    """A (nested or dotted) mapping of updates as ``{full dotted path: value}``, every key
    checked; ``rules`` mappings become ``rules.<option>`` entries, a ``rules`` string is
    ``rules_file``."""
    if not isinstance(updates, dict):
        raise ConfigError(f"{source}: expected a mapping of config keys")
    out: dict[str, Any] = {}
    for key, value in updates.items():
        key = str(key).strip()
        if key == "extends":
            continue
        if key == "rules" and isinstance(value, str):
            out["rules_file"] = value
        elif key == "rules" and isinstance(value, dict):
            out.update({canonical_key(f"rules.{k}"): v for k, v in value.items()})
        elif key == "rules":
            raise ConfigError(f"rules={value!r}: a mapping of rules options or a rules YAML")
        elif key in SECTIONS and isinstance(value, dict):
            out.update(flatten({f"{key}.{k}": v for k, v in value.items()}, source))
        else:
            out[canonical_key(key)] = value
    return out


def _unflatten(flat: dict[str, Any]) -> dict:
    out: dict = {}
    for path, value in flat.items():
        node = out
        *parents, last = path.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    return out


# ---------------------------------------------------------------------- files
def yaml_error(path, error: yaml.YAMLError) -> str:
    """``PATH:LINE: not valid YAML: problem`` on one line (PyYAML's own message spans
    several, with a source excerpt)."""
    mark = getattr(error, "context_mark", None) or getattr(error, "problem_mark", None)
    where = f", line {mark.line + 1}" if mark is not None else ""
    problem = " ".join(str(getattr(error, "problem", None) or error).split())
    return f"{path}{where}: not valid YAML: {problem}"


def _find(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists() and not p.is_absolute() and (REPO_ROOT / p).exists():
        return REPO_ROOT / p
    return p


def load_file(path: str | Path, _seen: tuple = ()) -> dict:
    """A config YAML as a nested mapping of updates (``extends`` followed, every key
    checked, ``rules_file`` made relative to the file when it exists there)."""
    p = _find(path)
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
    flat = {}
    if "extends" in data:
        flat = flatten(load_file(p.parent / data["extends"], _seen + (p.resolve(),)), str(p))
    own = flatten(data, str(p))
    if isinstance(own.get("rules_file"), str) and (p.parent / own["rules_file"]).exists():
        own["rules_file"] = str(p.parent / own["rules_file"])
    flat.update(own)
    return _unflatten(flat)


# ---------------------------------------------------------------------- building
def _apply(cfg, flat: dict[str, Any]) -> None:
    """Sets each ``{path: value}`` on an OmegaConf structured config: OmegaConf checks
    and converts the type (a mapping or list replaces the old one)."""
    for path, value in flat.items():
        tp = FIELDS[path].type if path in FIELDS else Any
        if tp is int and isinstance(value, float) and value.is_integer():
            value = int(value)  # total_timesteps=2e5
        try:
            OmegaConf.update(cfg, path, value, merge=False)
        except OmegaConfBaseException as e:
            if value is None:
                raise ConfigError(f"{path} may not be null") from None
            detail = str(e).splitlines()[0]
            raise ConfigError(f"{path}={value!r}: expected {_type_name(tp)} ({detail})") \
                from None


def build(config_file: str | Path | None = None, overrides: list[str] | dict | None = None,
          base: dict | None = None) -> dict:
    """The defaults, then ``base`` (e.g. a run's saved config), the config file and the
    overrides, checked and resolved (a plain dict)."""
    cfg = OmegaConf.structured(TrainConfig)
    layers = [base or {}]
    if config_file is not None:
        layers.append(load_file(config_file))
    if isinstance(overrides, dict):
        layers.append(overrides)
    elif overrides:
        layers.append(parse_overrides(list(overrides)))
    for layer in layers:
        _apply(cfg, flatten(layer))
    return _resolve_rules(_check(OmegaConf.to_container(cfg, resolve=False)))


def resolve(cfg: dict) -> dict:
    """Checks a complete config dict and expands its rules into every option (a new dict)."""
    return build(base=cfg)


# ---------------------------------------------------------------------- checks
def _check(cfg: dict) -> dict:
    """The limits of the fields' metadata, then what relates several keys."""
    for path, f in FIELDS.items():
        value = _get(cfg, path)
        meta = f.metadata
        if value is None:
            continue
        choices = meta.get("choices")
        if choices and value not in choices and not (path == "vec_env" and ":" in value):
            extra = " or module:function" if path == "vec_env" else ""
            raise ConfigError(f"{path}={value!r}: allowed values are "
                              f"{', '.join(choices)}{extra}")
        bad = (("gt" in meta and not value > meta["gt"])
               or ("ge" in meta and not value >= meta["ge"])
               or ("le" in meta and not value <= meta["le"]))
        if bad:
            nullable = " (or null)" if f.default is None or "null" in _type_name(f.type) else ""
            raise ConfigError(f"{path}={value!r}: must be {_limits_text(meta)}{nullable}")
    arch = cfg["policy"]["net_arch"]
    if not arch or not all(h > 0 for h in arch):
        raise ConfigError(f"policy.net_arch={arch!r}: a list of positive layer widths")
    feats = cfg["policy"]["features"]
    if len(set(feats)) != len(feats) or not set(feats) <= {"obs", "mask"} or "obs" not in feats:
        raise ConfigError(f"policy.features={feats!r}: 'obs', optionally with 'mask'")
    segments = [name for name, _ in segment_table(7, 2)]
    unknown = [h for h in cfg["policy"]["hide_from_actor"] if h not in segments]
    if unknown:
        raise ConfigError(f"policy.hide_from_actor: unknown observation segment(s) "
                          f"{unknown}; the segments are {', '.join(segments)}")
    _check_agents(cfg)
    return cfg


def _get(cfg: dict, path: str) -> Any:
    for p in path.split("."):
        cfg = cfg[p]
    return cfg


def _unknown_agent(key: str, name: str, known: list[str], what: str) -> ConfigError:
    close = difflib.get_close_matches(str(name), known, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return ConfigError(f"{key}: unknown {what} {name!r}{hint}")


def _check_agents(cfg: dict) -> None:
    from agents import REGISTRY

    mix = cfg["league"]["opponents"]
    if not mix:
        raise ConfigError("league.opponents is empty: give at least one opponent with a weight")
    for name, weight in mix.items():
        if name != "self" and name not in REGISTRY and not str(name).startswith("ppo:"):
            error = _unknown_agent("league.opponents", name, [*REGISTRY, "self"], "opponent")
            raise ConfigError(f"{error} (agent names, 'ppo:PATH' or 'self' for the snapshot "
                              "pool)")
        if name == "human":
            raise ConfigError("league.opponents: 'human' cannot train")
        if weight < 0:
            raise ConfigError(f"league.opponents.{name}={weight!r}: a weight >= 0")
    if sum(mix.values()) <= 0:
        raise ConfigError("league.opponents: the weights sum to 0")
    teacher = cfg["pretrain"]["teacher"]
    if teacher is not None and cfg["pretrain"]["data"]:
        raise ConfigError("pretrain.teacher and pretrain.data are alternatives: set one "
                          "(the other null)")
    if teacher is not None and (teacher not in REGISTRY or teacher in ("human", "ppo")):
        raise _unknown_agent("pretrain.teacher", teacher, list(REGISTRY),
                             "or unusable agent")
    for name in cfg["eval"]["opponents"]:
        if name not in REGISTRY and not str(name).startswith("ppo:"):
            raise _unknown_agent("eval.opponents", name, list(REGISTRY), "agent")


def _resolve_rules(cfg: dict) -> dict:
    """``rules`` expanded into every option (``rules_file`` under the ``rules`` options,
    ``num_players`` over both) and ``num_players`` set from them."""
    options: dict[str, Any] = {}
    if cfg["rules_file"]:
        path = _find(cfg["rules_file"])
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


# ---------------------------------------------------------------------- output
def dump(cfg: dict) -> str:
    """A resolved config as YAML (a run's ``config.yaml``)."""
    return yaml.safe_dump(cfg, sort_keys=False, default_flow_style=None)


def help_text() -> str:
    """Every key with its type, default, limits and help (``--help-config``)."""
    shorts = {path: short for short, path in SHORT_NAMES.items() if short != path}
    sections = {f.name: f.metadata["help"] for f in dataclasses.fields(TrainConfig)
                if f.name in SECTIONS}
    lines = ["Config keys (key=value on the command line; a short name works where shown):"]
    current = None
    for path, f in FIELDS.items():
        head = path.split(".")[0] if "." in path else None
        if head != current and head is not None:
            lines.append(f"{head}: {sections[head]}")
        current = head
        limits = _limits_text(f.metadata)
        extra = [f"short: {shorts[path]}"] if path in shorts else []
        if f.metadata.get("choices"):
            extra.append("one of " + ", ".join(f.metadata["choices"]))
        if limits:
            extra.append(limits)
        tail = f"  ({'; '.join(extra)})" if extra else ""
        lines.append(f"  {path}: {_type_name(f.type)} = {_show(f.default)}{tail}")
        lines.append(f"      {f.metadata['help']}")
    return "\n".join(lines)


def hyperparameters_markdown(cfg: dict) -> str:
    """The resolved config as a markdown table, for TensorBoard's text tab (as CleanRL
    logs its arguments)."""
    rows = ["| key | value |", "| --- | --- |"]
    rows += [f"| {path} | {_show(_get(cfg, path))} |" for path in FIELDS]
    return "\n".join(rows)


def _show(value: Any) -> str:
    """A value as YAML on one line (``null``, ``[256, 256]``, ``{heuristic: 0.8}``)."""
    return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip() \
        .removesuffix("...").strip()
