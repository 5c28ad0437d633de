"""The greedy bot, in one place: the reference in Python (``agents.greedy.bot``: the
rule, ``GreedyAgent``) and its numba port (``agents.greedy.batched``: ``GreedyPolicy``
for a batch of games of ``pis_env.batched``, imported only when asked for: it needs
numba). ``tests/pis_env/batched/test_differential.py`` holds the two equal move by move."""

from agents.greedy.bot import GreedyAgent, greedy_action, hand_mask, longest_suit

__all__ = ["GreedyAgent", "greedy_action", "hand_mask", "longest_suit"]
