"""
# Pis Yedili, version 1: the observation remembers the public events

| Import             | `from pis_env import pis_yedili_v1`                    |
|--------------------|--------------------------------------------------------|
| Gymnasium id       | `PisYedili-Events-v0` (`pis_env.GYMNASIUM_IDS[1]`)     |
| Observation shape  | (L,) with L from the table below (355 for 2 players)   |

Everything but the observation is `pis_yedili_v0`'s (rules, actions, rewards, rendering,
histories; see `pis_env.aec`). The v1 observation is the v0 one followed by the table's
public record, so `obs[:len_v0]` is the v0 observation: a per-opponent summary of the deal
(what a memoryless network reads) and the **event log**, the events since the observer's
own last action, that action first (also one the env or a wrapper played for it), oldest
first, across the end of a deal. Concatenating the logs a seat is shown at its decisions
rebuilds the whole public stream of the match (`pis_env.events.PublicHistory`).

### Observation Space

`observe(agent)` returns `{"observation": float32[L], "action_mask": int8[58]}`. Seats in
per-player segments are relative: index 0 is the observer, then clockwise.

| Segment                | Length     | Meaning                                           |
|------------------------|------------|---------------------------------------------------|
| `hand`                 | 52         | 1 for each card id the observer holds             |
| `top_card`             | 52         | one-hot top of the pile; zeros before the opening |
| `active_suit`          | 4          | one-hot suit to follow (nominated after a Jack)   |
| `pending_sevens`       | 5          | one-hot length 0–4 of the live chain of sevens    |
| `phase`                | 4          | one-hot `opening`, `play`, `nominate`, `ace`      |
| `has_drawn`            | 1          | the observer, to move, has drawn this turn        |
| `direction`            | 1          | 1 clockwise, 0 anticlockwise                      |
| `hand_sizes`           | n          | cards / 52, observer first                        |
| `stock_size`           | 1          | cards / 52                                        |
| `discard`              | 52         | the cards on the discard pile                     |
| `drew_on_suit`         | 4 (n − 1)  | per opponent: suits active when it drew (v0)      |
| `deal`                 | num_deals  | (matches only) one-hot index of the current deal  |
| `scores`               | n          | (matches only) total charge t as t / (t + 100)    |
| `opp_drawn`            | n − 1      | per opponent: cards drawn this deal / 52 (a)      |
| `opp_drawn_since_play` | n − 1      | per opponent: cards drawn since its last play (a) |
| `opp_refused_suits`    | 4 (n − 1)  | per opponent: suits it refused (b)                |
| `opp_refused_ranks`    | 13 (n − 1) | per opponent: ranks it refused (b)                |
| `opp_nominated`        | 4 (n − 1)  | per opponent: one-hot suit of its last nomination |
| `event_seat`           | 63 − 6n    | per event: (relative seat + 1) / 8; 0: empty slot |
| `event_action`         | 63 − 6n    | per event: (code + 1) / 64 (c)                    |
| `event_count`          | 63 − 6n    | per event: cards drawn / 52 (draws, penalties)    |
| `events_dropped`       | 1          | d / (d + 16): events older than the slots hold    |

(a) penalties included, capped at 52 (a reshuffling deal can draw more). (b) what it could
have played when it drew or passed, until it plays that suit / rank: in the opening the
clubs; else the active suit, and unless a Jack is on top the top's rank and the Jacks
(the Ace's extra play offers the same); the 7s when it took a penalty. (c) codes 0–51
play that card, 52–55 nominate ♣ ♦ ♥ ♠, 56 draw (a seat's consecutive draws are one
event, its count the cards), 57 pass, 58 take the penalty (count: cards taken), 59 a
deal starts (seat: the dealer). Events are oldest first; the first is the observer's own
last action.

The log has 63 − 6n slots (51 at 2 players, 21 at 7), which keeps the v1 observation
under twice the v0 one. When more events happened since the observer's last action, the
oldest after the first are dropped and counted in `events_dropped`. That is rare (under
1% of windows at 7 players in random play with reshuffles, none in thousands at 2–5), and
what inference needs from the dropped events (cards drawn, refusals, nominations) is in
the summary, which covers the whole deal.

`pis_env.decode_observation(vector, num_players, num_deals, version=1)` turns a vector
back into these fields (`events` as `(seat, kind, value)` tuples);
`pis_env.segment_table(n, num_deals, version=1)` lists them.

### Version History

* v1: the public event log and the per-opponent summary (layout version 1).
* v0: initial release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from . import aec as _v0
from . import wrappers as _wrappers
from .rules import RulesOptions

if TYPE_CHECKING:
    from typing_extensions import Unpack

ENV_NAME = "pis_yedili_v1"
#: The observation layout of this env version (``pis_env.observation``).
LAYOUT_VERSION = 1


class raw_env(_v0.raw_env):
    """``pis_yedili_v0.raw_env`` with the layout-1 observation; see the module docstring."""

    layout_version = LAYOUT_VERSION
    metadata = {**_v0.raw_env.metadata, "name": ENV_NAME}


def env(render_mode: str | None = None, render_view: str = "current",
        **options: Unpack[RulesOptions]) -> _v0.OrderEnforcingWrapper:
    """The v1 environment with PettingZoo's order-enforcing wrapper (as ``pis_yedili_v0.env``)."""
    return _v0.OrderEnforcingWrapper(raw_env(render_mode, render_view, **options))


def parallel_env(render_mode: str | None = None, render_view: str = "current",
                 **options: Unpack[RulesOptions]
                 ) -> ParallelEnv[str, _v0.Observation, _v0.ActionType]:
    """The v1 environment as a turn-based PettingZoo ``ParallelEnv`` (as
    ``pis_yedili_v0.parallel_env``)."""
    return turn_based_aec_to_parallel(env(render_mode, render_view, **options))


class SingleAgentEnv(_wrappers.SingleAgentEnv):
    """The gymnasium view (``gymnasium.make("PisYedili-Events-v0")``) over the v1 AEC env;
    its opponents are shown v1 observations too."""

    aec_class = raw_env


__all__ = ["ENV_NAME", "LAYOUT_VERSION", "SingleAgentEnv", "env", "parallel_env", "raw_env"]
