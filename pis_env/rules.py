"""The rules configuration: every variant option of SPEC §4, validated on construction.

``Rules()`` is the seed rules. Options are keyword arguments with exactly the SPEC's
names; an unknown key or value raises ``ValueError`` naming the allowed ones. YAML files
in ``configs/rules/`` hold the same keys (``Rules.from_yaml``).
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def _nearest(name: str, allowed) -> str:
    close = difflib.get_close_matches(name, list(allowed), n=3)
    return f" (did you mean {', '.join(map(repr, close))}?)" if close else ""


@dataclass(frozen=True)
class Rules:
    """One table's rules. Frozen, hashable, and cheap to pass around."""

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
                    f"{key}={value!r} is not allowed; allowed values: "
                    + ", ".join(map(repr, allowed))
                )
        if not _is_int(self.num_players) or not 2 <= self.num_players <= 7:
            raise ValueError(f"num_players={self.num_players!r}: allowed values are 2..7")
        if not _is_int(self.num_deals) or self.num_deals < 1:
            raise ValueError(f"num_deals={self.num_deals!r}: must be an int >= 1")
        if self.max_turns is not None and (not _is_int(self.max_turns) or self.max_turns < 1):
            raise ValueError(f"max_turns={self.max_turns!r}: must be None or an int >= 1")
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
        """Rules from a YAML mapping of option names to values (``configs/rules/*.yaml``)."""
        import yaml

        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a rules file must be a mapping of option: value")
        return cls.from_options(**{**data, **overrides})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> Rules:
        return self.from_options(**{**self.to_dict(), **changes})


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
