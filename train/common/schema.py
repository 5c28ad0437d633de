"""The configuration machinery of every training entry point: typed dataclasses (OmegaConf
structured configs), YAML files, ``key=value`` overrides, help and clear errors.

``Schema`` is the machinery, one per entry point's root dataclass: ``train/sb3/run.py``'s
``TrainConfig`` (below, ``TRAIN``), ``train/expert/iteration.py``'s and
``train/rllib/config.py``'s. Every key is declared once, as a dataclass field with its
default, its help text and its allowed range (``--help-config`` prints them all).
OmegaConf checks and converts the types; ``Schema`` adds what OmegaConf does not:

* ``key=value`` overrides with YAML values (``ppo.learning_rate=1e-4``,
  ``policy.net_arch=[512,512]``, ``league.opponents={heuristic: 0.5, self: 0.5}``; a
  mapping value replaces the whole mapping, except a ``mapping`` field (``rules``, or the
  keyword arguments another library receives), which is merged key by key);
* short names: a key unique among the leaves may be given without its section
  (``learning_rate=1e-4``); a name shared with the preferred section means its key
  (``batch_size`` is ``ppo.batch_size`` in ``train/sb3/run.py``);
* an unknown key is a ``ConfigError`` naming the nearest valid ones; a value of the wrong
  type or out of range names the key and what it accepts;
* config files: a YAML mapping of any subset of the keys; ``extends: other.yaml`` loads
  another file first; a path key (``rules_file``) is taken relative to the file when the
  file is there; ``rules=PATH.yaml`` is ``rules_file``. In ``train/sb3/run.py``
  ``num_players``, when set, overrides the rules' ``num_players``.

``Schema.build`` returns the resolved config as the root dataclass (``rules`` expanded into
every option): each component takes the section it needs (``cfg.ppo``, ``cfg.league``) and
reads attributes, so a misspelt key fails at once and type checkers see every use.
``as_dict`` turns it back into the plain dict a run saves in its ``config.yaml`` (``dump``)
and ``--resume`` reads back as ``base``. The checks that relate keys (``check``) take the
typed object too.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from pis_env import shipped

REPO_ROOT = Path(__file__).resolve().parents[2]

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


def section(cls: type, help: str, **defaults: Any) -> Any:
    """A section of keys (a dataclass); ``defaults`` change some of its defaults for this
    config (a section shared by two entry points with other recipes)."""
    return field(default_factory=functools.partial(cls, **defaults), metadata={"help": help})


def mapping(default: dict, help: str, keys: Callable[[], Iterable[str]] | None = None,
            **limits: Any) -> Any:
    """A mapping merged key by key (``rules.draw_rule=one`` sets one key, a mapping value
    sets the keys it gives): the options of another module, such as the rules or the
    keyword arguments RLlib receives. ``keys()`` gives the allowed keys (checked, with the
    nearest named); without it, or when it returns None, any key passes, to be checked by
    whoever receives them."""
    return param(default, help, merge=True, keys=keys, **limits)


# ---------------------------------------------------------------------- key paths
@dataclass(frozen=True)
class Key:
    """A leaf of the config: its dotted path, type, default and field metadata (help,
    limits; ``merge``: a mapping merged key by key, ``keys``: its allowed keys)."""

    path: str
    type: Any
    default: Any
    metadata: Any

    @property
    def merge(self) -> bool:
        return bool(self.metadata.get("merge"))


def _keys(cls: type, instance: Any = None, prefix: str = "") -> dict[str, Key]:
    """Every leaf by dotted path (mappings such as ``rules`` are leaves), with the defaults
    of ``instance`` (a section's own defaults may differ from its class's)."""
    hints = typing.get_type_hints(cls)
    instance = cls() if instance is None else instance
    out = {}
    for f in dataclasses.fields(cls):
        tp, path, value = hints[f.name], f"{prefix}{f.name}", getattr(instance, f.name)
        if dataclasses.is_dataclass(tp):
            out.update(_keys(tp, value, path + "."))
        else:
            out[path] = Key(path, tp, value, f.metadata)
    return out


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


def _hint(close: list[str]) -> str:
    return f"; did you mean {', '.join(close)}?" if close else ""


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


def _unflatten(flat: dict[str, Any]) -> dict:
    out: dict = {}
    for path, value in flat.items():
        node = out
        *parents, last = path.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    return out


def _get(node: dict, path: str) -> Any:
    for p in path.split("."):
        node = node[p]
    return node


def to_object(root: type, data: dict) -> Any:
    """The plain nested dict of a resolved config as the dataclass ``root`` (its sections
    as their dataclasses; mappings such as ``rules`` stay dicts)."""
    hints = typing.get_type_hints(root)
    return root(**{f.name: to_object(hints[f.name], data[f.name])
                   if dataclasses.is_dataclass(hints[f.name]) else data[f.name]
                   for f in dataclasses.fields(root)})


def as_dict(cfg: Any) -> dict:
    """A config (the typed object of ``Schema.build``, or already a dict) as a plain nested
    dict: what a run saves in its ``config.yaml`` and ``--resume`` reads back."""
    return dataclasses.asdict(cfg) if dataclasses.is_dataclass(cfg) else cfg


# ---------------------------------------------------------------------- files
def yaml_error(path, error: yaml.YAMLError) -> str:
    """``PATH:LINE: not valid YAML: problem`` on one line (PyYAML's own message spans
    several, with a source excerpt)."""
    mark = getattr(error, "context_mark", None) or getattr(error, "problem_mark", None)
    where = f", line {mark.line + 1}" if mark is not None else ""
    problem = " ".join(str(getattr(error, "problem", None) or error).split())
    return f"{path}{where}: not valid YAML: {problem}"


def find_file(path: str | Path, kind: shipped.Kind = "config") -> Path:
    """``path`` as given when it exists, else the shipped config (or, with
    ``kind="rules"``, rules file) of that name, in a checkout or an installed wheel
    (``configs/ppo_4p.yaml``, ``ppo_4p``; ``pis_env.shipped``), else ``path`` unchanged."""
    return shipped.resolve(path, kind)


# ---------------------------------------------------------------------- the machinery
class Schema:
    """The config of one entry point: the keys of the dataclass ``root``, read from YAML
    files and ``key=value`` overrides, checked, with help (the module docstring).

    ``prefer``: the section a shared short name belongs to. ``check(cfg) -> cfg``: what
    relates several keys (or needs the bots' registry), after every field's own limits;
    it takes and returns the typed config and may resolve values (``train/sb3/run.py``
    expands ``rules``)."""

    def __init__(self, root: type, prefer: str | None = None,
                 check: Callable[[Any], Any] | None = None):
        self.root, self._check = root, check
        self.fields: dict[str, Key] = _keys(root)
        hints = typing.get_type_hints(root)
        self.sections = {f.name: f.metadata["help"] for f in dataclasses.fields(root)
                         if dataclasses.is_dataclass(hints[f.name])}
        self.mappings = {path: key for path, key in self.fields.items() if key.merge}
        paths: dict[str, list[str]] = {}
        for path in self.fields:
            paths.setdefault(path.rsplit(".", 1)[-1], []).append(path)
        self.short_names = {}
        for short, found in paths.items():
            if len(found) == 1:
                self.short_names[short] = found[0]
            elif prefer and f"{prefer}.{short}" in found:
                self.short_names[short] = f"{prefer}.{short}"

    @functools.cached_property
    def defaults(self) -> dict[str, Any]:
        """The defaults as a plain nested dict."""
        return OmegaConf.to_container(OmegaConf.structured(self.root))

    # ------------------------------------------------------------------ keys
    def _mapping_keys(self, path: str) -> list[str] | None:
        keys = self.mappings[path].metadata.get("keys")
        allowed = keys() if keys is not None else None
        return None if allowed is None else list(allowed)

    def _nearest(self, key: str) -> str:
        candidates = list(dict.fromkeys([*self.fields, *self.short_names, *(
            f"{path}.{k}" for path in self.mappings for k in self._mapping_keys(path) or ())]))
        close = difflib.get_close_matches(key, candidates, n=3, cutoff=0.5)
        if not close:
            last = key.rsplit(".", 1)[-1]
            close = [p for p in self.fields
                     if difflib.get_close_matches(last, [p.rsplit(".", 1)[-1]], cutoff=0.6)][:3]
        return _hint(close)

    def canonical_key(self, key: str) -> str:
        """The full dotted path of a key (``learning_rate`` -> ``ppo.learning_rate``)."""
        key = key.strip()
        if key in self.fields:
            return key
        for path in self.mappings:
            if key.startswith(path + "."):
                option, allowed = key[len(path) + 1:], self._mapping_keys(path)
                if allowed is not None and option not in allowed:
                    close = difflib.get_close_matches(option, allowed, n=3)
                    raise ConfigError(f"unknown {path} option {key!r}"
                                      f"{_hint([f'{path}.{c}' for c in close])}")
                return key
        if key in self.short_names:
            return self.short_names[key]
        if key in self.sections:
            keys = ", ".join(p for p in self.fields if p.startswith(key + "."))
            raise ConfigError(f"{key!r} is a section ({self.sections[key]}), not a value: "
                              f"give its keys ({keys})")
        raise ConfigError(f"unknown config key {key!r}{self._nearest(key)}")

    def _is_section(self, key: str) -> bool:
        """A section's path (``opt``, or a nested one: ``opt.sched``), not a leaf's."""
        return key in self.sections or any(p.startswith(key + ".") for p in self.fields)

    def parse_overrides(self, items: list[str]) -> dict[str, Any]:
        """``["key=value", ...]`` as a mapping of updates."""
        updates = {}
        for item in items:
            if "=" not in item:
                hint = ""
                try:
                    hint = f"did you mean {self.canonical_key(item)}=...?"
                except ConfigError:
                    pass
                example = next(k for k in self.fields.values() if k.type is int)
                raise ConfigError(f"override {item!r} is not key=value (e.g. "
                                  f"{example.path}={example.default}); {hint}")
            key, text = item.split("=", 1)
            updates[key.strip()] = parse_value(text)
        return updates

    def flatten(self, updates: dict, source: str = "config") -> dict[str, Any]:
        """A (nested or dotted) mapping of updates as ``{full dotted path: value}``, every
        key checked; a ``mapping`` field's mapping becomes ``<path>.<key>`` entries, a
        string for it is its ``<path>_file`` key (``rules=x.yaml``)."""
        if not isinstance(updates, dict):
            raise ConfigError(f"{source}: expected a mapping of config keys")
        out: dict[str, Any] = {}
        for key, value in updates.items():
            key = str(key).strip()
            if key == "extends":
                continue
            if key in self.mappings:
                file_key = f"{key}_file"
                if isinstance(value, str) and file_key in self.fields:
                    out[file_key] = value
                elif isinstance(value, dict):
                    out.update({self.canonical_key(f"{key}.{k}"): v for k, v in value.items()})
                else:
                    also = f" or a {key} YAML" if file_key in self.fields else ""
                    raise ConfigError(f"{key}={value!r}: a mapping of {key} options{also}")
            elif isinstance(value, dict) and self._is_section(key):
                out.update(self.flatten({f"{key}.{k}": v for k, v in value.items()}, source))
            else:
                out[self.canonical_key(key)] = value
        return out

    # ------------------------------------------------------------------ files
    def load_file(self, path: str | Path, _seen: tuple = ()) -> dict:
        """A config YAML as a nested mapping of updates (``extends`` followed, every key
        checked, path keys made relative to the file when the file is there)."""
        p = find_file(path)
        if not p.exists():
            raise ConfigError(f"config file not found: {path} (shipped configs: "
                              f"{', '.join(shipped.shipped_names('config'))})")
        if p.resolve() in _seen:
            raise ConfigError(f"{p}: 'extends' loops back to itself")
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as e:
            raise ConfigError(yaml_error(p, e)) from None
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(f"{p}: cannot read the config file ({e})") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{p}: a config file must be a mapping of keys")
        flat = {}
        if "extends" in data:
            flat = self.flatten(self.load_file(p.parent / data["extends"],
                                               _seen + (p.resolve(),)), str(p))
        own = self.flatten(data, str(p))
        for key, value in own.items():
            if self.fields.get(key) and self.fields[key].metadata.get("path") \
                    and isinstance(value, str) and (p.parent / value).exists():
                own[key] = str(p.parent / value)
        flat.update(own)
        return _unflatten(flat)

    # ------------------------------------------------------------------ building
    def _apply(self, cfg, flat: dict[str, Any]) -> None:
        """Sets each ``{path: value}`` on an OmegaConf structured config: OmegaConf checks
        and converts the type (a mapping or list replaces the old one)."""
        for path, value in flat.items():
            tp = self.fields[path].type if path in self.fields else Any
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

    def build(self, config_file: str | Path | None = None,
              overrides: list[str] | dict | None = None, base: Any = None) -> Any:
        """The defaults, then ``base`` (e.g. a run's saved config, a dict or a typed
        config), the config file and the overrides, checked and resolved: an instance of
        ``root`` (``as_dict`` gives the plain dict)."""
        cfg = OmegaConf.structured(self.root)
        layers = [as_dict(base) or {}]
        if config_file is not None:
            layers.append(self.load_file(config_file))
        if isinstance(overrides, dict):
            layers.append(overrides)
        elif overrides:
            layers.append(self.parse_overrides(list(overrides)))
        for layer in layers:
            self._apply(cfg, self.flatten(layer))
        out = to_object(self.root, self._check_limits(OmegaConf.to_container(cfg, resolve=False)))
        return self._check(out) if self._check is not None else out

    def _check_limits(self, cfg: dict) -> dict:
        """Every field's own limits (``choices``, ``gt``/``ge``/``le``)."""
        for path, f in self.fields.items():
            value = _get(cfg, path)
            meta = f.metadata
            if value is None:
                continue
            choices, also = meta.get("choices"), meta.get("also")
            if choices and value not in choices and not (also and ":" in str(value)):
                extra = f" or {also}" if also else ""
                raise ConfigError(f"{path}={value!r}: allowed values are "
                                  f"{', '.join(map(str, choices))}{extra}")
            bad = (("gt" in meta and not value > meta["gt"])
                   or ("ge" in meta and not value >= meta["ge"])
                   or ("le" in meta and not value <= meta["le"]))
            if bad:
                nullable = " (or null)" if "null" in _type_name(f.type) else ""
                raise ConfigError(f"{path}={value!r}: must be {_limits_text(meta)}{nullable}")
        return cfg

    # ------------------------------------------------------------------ output
    def help_text(self) -> str:
        """Every key with its type, default, limits and help (``--help-config``)."""
        shorts = {path: short for short, path in self.short_names.items() if short != path}
        lines = ["Config keys (key=value on the command line; a short name works where "
                 "shown):"]
        current = None
        for path, f in self.fields.items():
            head = path.split(".")[0] if "." in path else None
            if head != current and head is not None:
                lines.append(f"{head}: {self.sections[head]}")
            current = head
            limits = _limits_text(f.metadata)
            extra = [f"short: {shorts[path]}"] if path in shorts else []
            if f.metadata.get("choices"):
                extra.append("one of " + ", ".join(map(str, f.metadata["choices"]))
                             + (f" or {f.metadata['also']}" if f.metadata.get("also") else ""))
            if limits:
                extra.append(limits)
            if f.merge:
                extra.append(f"merged key by key: {path}.KEY=value")
            tail = f"  ({'; '.join(extra)})" if extra else ""
            lines.append(f"  {path}: {_type_name(f.type)} = {_show(f.default)}{tail}")
            lines.append(f"      {f.metadata['help']}")
        return "\n".join(lines)

    def hyperparameters_markdown(self, cfg: Any) -> str:
        """The resolved config as a markdown table, for TensorBoard's text tab (as CleanRL
        logs its arguments)."""
        cfg = as_dict(cfg)
        rows = ["| key | value |", "| --- | --- |"]
        rows += [f"| {path} | {_show(_get(cfg, path))} |" for path in self.fields]
        return "\n".join(rows)


def dump(cfg: Any) -> str:
    """A resolved config (typed or a dict) as YAML (a run's ``config.yaml``)."""
    return yaml.safe_dump(as_dict(cfg), sort_keys=False, default_flow_style=None)


def _show(value: Any) -> str:
    """A value as YAML on one line (``null``, ``[256, 256]``, ``{heuristic: 0.8}``)."""
    return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip() \
        .removesuffix("...").strip()


def add_arguments(parser, default_config: Path | None) -> None:
    """The config arguments every entry point takes: ``key=value`` overrides,
    ``--config``, ``--print-config`` and ``--help-config``."""
    parser.add_argument("overrides", nargs="*", metavar="key=value",
                        help="config overrides (YAML values, dotted keys; --help-config "
                        "lists every key)")
    default = f" (default {default_config.name})" if default_config else ""
    parser.add_argument("--config", help=f"a config YAML{default}")
    parser.add_argument("--print-config", action="store_true",
                        help="print the resolved config and exit")
    parser.add_argument("--help-config", action="store_true",
                        help="list every config key with its type, default and help, and exit")


# ---------------------------------------------------------------------- shared checks
def playable_bots() -> list[str]:
    """The registered bots that can sit at a table by themselves (not the human, not a
    policy without its file)."""
    from agents import REGISTRY

    return [name for name in REGISTRY if name not in ("human", "ppo")]


def check_mix(key: str, mix: dict, also: tuple[str, ...] = ()) -> None:
    """An opponent mix ``{bot: weight}``: bots of ``playable_bots()`` (and the names of
    ``also``: ``"self"``, ``"ppo:"`` for any ``ppo:PATH``), weights >= 0, not all 0."""
    if not mix:
        raise ConfigError(f"{key} is empty: give at least one bot with a weight")
    bots = playable_bots()
    for name, weight in mix.items():
        name = str(name)
        if name not in bots and name not in also \
                and not ("ppo:" in also and name.startswith("ppo:")):
            close = difflib.get_close_matches(name, [*bots, *also], n=3)
            extra = "".join(f", {a}PATH" if a == "ppo:" else f", {a!r}" for a in also)
            raise ConfigError(f"{key}: unknown bot {name!r}{_hint(close)} (the built-in "
                              f"bots: {', '.join(bots)}{extra})")
        if weight < 0:
            raise ConfigError(f"{key}.{name}={weight!r}: a weight >= 0")
    if sum(mix.values()) <= 0:
        raise ConfigError(f"{key}: the weights sum to 0")


def check_teacher(key: str, teacher: str | None) -> None:
    """A warm start's teacher: a bot of ``playable_bots()`` or null."""
    bots = playable_bots()
    if teacher is not None and teacher not in bots:
        close = difflib.get_close_matches(str(teacher), bots, n=3)
        raise ConfigError(f"{key}={teacher!r}: a built-in bot ({', '.join(bots)}) or null "
                          f"(no warm start){_hint(close)}")


