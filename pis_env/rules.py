"""The rules configuration: every variant option of RULES.md, validated on construction.

``Rules()`` is the seed rules. Options are keyword arguments with exactly RULES.md's
names; an unknown key or value raises ``ValueError`` naming the allowed ones. YAML files
in ``configs/rules/`` hold the same keys (``Rules.from_yaml``).
"""

from __future__ import annotations

import dataclasses
import difflib
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

#: Allowed values of the string-valued options, the default first.
CHOICES: dict[str, tuple[str, ...]] = {
    "draw_rule": ("free", "one", "until_playable"),
    "seven_penalty": ("add", "double"),
    "after_penalty": ("end_turn", "continue"),
    "nominate": ("any", "other"),
    "opening": ("opener", "first_round"),
    "empty_stock": ("end_deal", "reshuffle"),
    "reward": ("points", "win"),
    "illegal_action": ("raise", "terminate"),
}

#: ``max_turns`` used with ``empty_stock="reshuffle"`` when none is given.
RESHUFFLE_DEFAULT_MAX_TURNS = 1000
#: Upper limits of the sized options. WHY: the observation has a one-hot of the deal
#: index (sized by ``num_deals``) and a replay steps every turn, so a rules file or an
#: uploaded history must not be able to ask for gigabytes; these are far above any real
#: match (a 100-deal match, a 100,000-turn deal).
MAX_NUM_DEALS = 100
MAX_MAX_TURNS = 100_000


class RulesOptions(TypedDict, total=False):
    """The rules options as keyword arguments (``env(**options)``, ``raw_env``,
    ``Rules.from_options``), for type checkers: a misspelt key is an error before the code
    runs. ``Rules`` checks the values; a test holds these keys to its fields."""

    num_players: int
    draw_rule: str
    seven_penalty: str
    after_penalty: str
    nominate: str
    opening: str
    empty_stock: str
    num_deals: int
    max_turns: int | None
    reward: str
    illegal_action: str


def _nearest(name, allowed) -> str:
    """`` (did you mean 'a', 'b'?)`` with up to three distinct close matches, or ``""``."""
    if not isinstance(name, str):
        return ""
    close = difflib.get_close_matches(name, list(dict.fromkeys(allowed)), n=3)
    return f" (did you mean {', '.join(map(repr, close))}?)" if close else ""


@dataclass(frozen=True)
class Rules:
    """One table's rules. Frozen, hashable, and cheap to pass around.

    Limits: ``num_players`` 2..7, ``num_deals`` 1..``MAX_NUM_DEALS`` (100), ``max_turns``
    None or 1..``MAX_MAX_TURNS`` (100,000); a stacked deck holds exactly 52 cards, its
    length checked before its cards (``engine.parse_deck``). Anything outside is a
    ``ValueError`` naming the limit, raised before any work sized by it."""

    num_players: int = 2
    draw_rule: str = "free"
    seven_penalty: str = "add"
    after_penalty: str = "end_turn"
    nominate: str = "any"
    opening: str = "opener"
    empty_stock: str = "end_deal"
    num_deals: int = 1
    max_turns: int | None = None
    reward: str = "points"
    illegal_action: str = "raise"

    def __post_init__(self):
        for key, allowed in CHOICES.items():
            value = getattr(self, key)
            if value not in allowed:
                raise ValueError(
                    f"{key}={value!r} is not allowed{_nearest(value, allowed)}; allowed values: "
                    + ", ".join(map(repr, allowed))
                )
        for key in ("num_players", "num_deals", "max_turns"):
            # numpy integers (np.int64(3)) count as ints, stored as plain ints so that
            # to_dict() stays JSON-ready.
            object.__setattr__(self, key, _plain_int(getattr(self, key)))
        if not _is_int(self.num_players) or not 2 <= self.num_players <= 7:
            raise ValueError(f"num_players={self.num_players!r}: allowed values are 2..7")
        if not _is_int(self.num_deals) or not 1 <= self.num_deals <= MAX_NUM_DEALS:
            raise ValueError(f"num_deals={self.num_deals!r}: must be an int 1..{MAX_NUM_DEALS}")
        if self.max_turns is not None and (
                not _is_int(self.max_turns) or not 1 <= self.max_turns <= MAX_MAX_TURNS):
            raise ValueError(f"max_turns={self.max_turns!r}: must be None or an int "
                             f"1..{MAX_MAX_TURNS}")
        if self.empty_stock == "reshuffle" and self.max_turns is None:
            object.__setattr__(self, "max_turns", RESHUFFLE_DEFAULT_MAX_TURNS)

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_options(cls, **options: Any) -> Rules:
        """Like ``Rules(**options)`` but an unknown key names the allowed ones."""
        unknown = [k for k in options if k not in cls.keys()]
        if unknown:
            key = unknown[0]
            raise ValueError(
                f"unknown rules option {key!r}{_nearest(key, cls.keys())}; "
                f"allowed options: {', '.join(cls.keys())}"
            )
        return cls(**options)

    @classmethod
    def from_yaml(cls, path: str | Path, **overrides: Any) -> Rules:
        """Rules from a YAML mapping of option names to values (``configs/rules/*.yaml``).

        ``path`` is a file, or the name of a shipped rules file (``strict``,
        ``configs/rules/strict.yaml`` from any directory, also from an installed wheel:
        ``pis_env.shipped``). A missing file, malformed YAML or a bad option is a one-line
        ``ValueError`` that starts with the file (and the line, for YAML errors): the CLIs
        print it as is."""
        import yaml

        from .shipped import resolve, shipped_names

        try:
            with open(resolve(path, "rules"), encoding="utf-8") as f:
                data = yaml.safe_load(f) or {}
        except FileNotFoundError:
            raise ValueError(f"{path}: rules file not found (shipped rules: "
                             f"{', '.join(shipped_names('rules'))})") from None
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: cannot read the rules file: {e}") from None
        except yaml.YAMLError as e:
            where = f"{path}{_yaml_where(e)}"
            raise ValueError(f"{where}: malformed YAML: {_yaml_problem(e)}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a rules file must be a mapping of option: value")
        try:
            return cls.from_options(**{**data, **overrides})
        except (TypeError, ValueError) as e:
            raise ValueError(f"{path}: {e}") from None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> Rules:
        return self.from_options(**{**self.to_dict(), **changes})


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _plain_int(value):
    """``value`` as a plain int when it is an integer of another type (``np.int64``);
    anything else (floats, strings, bools, None) unchanged, for the checks to reject."""
    if isinstance(value, (int, float, str, bytes)) or value is None:
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value


def _yaml_where(error) -> str:
    """``:LINE`` (1-based) of a PyYAML error: where the construct that failed starts (the
    unclosed bracket or quote) when known, else where the parser stopped; ``""`` without."""
    mark = getattr(error, "context_mark", None) or getattr(error, "problem_mark", None)
    return f":{mark.line + 1}" if mark is not None else ""


def _yaml_problem(error) -> str:
    """A PyYAML error's message on one line, without its multi-line source excerpt."""
    parts = []
    for text, mark in ((getattr(error, "context", None), getattr(error, "context_mark", None)),
                       (getattr(error, "problem", None), getattr(error, "problem_mark", None))):
        if text:
            parts.append(f"{text} (line {mark.line + 1})" if mark is not None else text)
    return " ".join(" ".join(parts).split()) or " ".join(str(error).split())
