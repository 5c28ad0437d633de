"""Opponent models of the model set: ``P(action | state row)`` for a particle filter's
worlds, in the interface of ``agents.belief.opponent_models`` (``model.probs(rows,
actions, cfg)``, rows of ``pis_env.batched.kernels``).

A model-set style bot is deterministic up to its own epsilon, so its model is exact: the
style's move (``agents.panel.batched.PanelPolicy.base_actions``) with probability
``1 - e``, the rest spread evenly over the legal moves, where ``e = 1 - (1 - epsilon)(1 -
bot epsilon)`` (``epsilon``, the model's own share, keeps a world alive when the opponent
is not that bot). ``agents.belief.opponent_models.panel_model`` builds the model of any
model-set bot: these for the styles, its own models for ``heuristic``, ``random`` and
``ppo_v2``; evaluation-set names are refused there.
"""

from __future__ import annotations

import numpy as np

from agents.panel import STYLE_BOTS
from pis_env.batched import kernels as K


class StyleModel:
    """The model of a style bot (see the module docstring)."""

    def __init__(self, name: str, epsilon: float = 0.1):
        from agents.panel.batched import PanelPolicy

        epsilon = float(epsilon)
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon={epsilon!r}: must be in (0, 1] (0 would let one "
                             "surprising move kill every world)")
        style, bot_epsilon = STYLE_BOTS.get(name, ("greedy", 1.0 if name == "random" else 0.0))
        self.name = name
        self.epsilon = 1.0 - (1.0 - epsilon) * (1.0 - bot_epsilon)
        self.policy = PanelPolicy(1, style)
        self._out = np.empty(0, dtype=np.int64)

    def probs(self, rows: np.ndarray, actions: np.ndarray, cfg: np.ndarray) -> np.ndarray:
        if rows.ndim != 2 or rows.shape[1] != K.NF or actions.shape != (rows.shape[0],):
            raise ValueError(f"expected rows [K, {K.NF}] and actions [K], got {rows.shape} "
                             f"and {actions.shape}")
        if self._out.shape[0] != rows.shape[0]:
            self._out = np.empty(rows.shape[0], dtype=np.int64)
        chosen = self.policy.base_actions(rows, self._out) == actions
        legal_bits = rows[:, K.LEGAL]
        count = np.maximum(np.bitwise_count(legal_bits), 1).astype(np.float64)
        legal = ((legal_bits >> np.minimum(actions, 63)) & 1).astype(bool)
        p = self.epsilon / count + (1.0 - self.epsilon) * chosen
        return np.where(legal, p, 0.0)

    def __repr__(self) -> str:
        return f"StyleModel({self.name!r}, epsilon={self.epsilon:.3g})"


__all__ = ["StyleModel"]
