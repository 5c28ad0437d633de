"""The heuristic bot, in one place: the reference in Python and its numba port.

* ``agents.heuristic.bot``: ``choose`` (the decision on plain bit masks), ``Params`` /
  ``DEFAULT_PARAMS`` (its weights), ``ObservationReader`` and ``HeuristicAgent`` (the bot
  at a table), ``state_action`` (from an engine state, for rollouts). Its names are
  re-exported here, so ``agents.heuristic.HeuristicAgent`` is the bot.
* ``agents.heuristic.batched``: ``choose`` ported to numba and ``HeuristicPolicy``, one
  kernel call for a batch of games of ``pis_env.batched``; it imports numba, so it is
  imported only when asked for. ``tests/agents/heuristic/test_batched.py`` holds the two equal.

A change to the bot's play is made in both files, in the same commit.
"""

from agents.heuristic.bot import (
    DEFAULT_PARAMS,
    HeuristicAgent,
    ObservationReader,
    Params,
    Table,
    choose,
    decoded_action,
    mask_int,
    nomination_scores,
    state_action,
    table_rules,
)

__all__ = [
    "DEFAULT_PARAMS", "HeuristicAgent", "ObservationReader", "Params", "Table", "choose",
    "decoded_action", "mask_int", "nomination_scores", "state_action", "table_rules",
]
