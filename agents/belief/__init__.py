"""Beliefs over the hidden cards: what the bots that search know of the cards they cannot see.

* ``tracker``: the card tracker (what each seat may hold, from the public play) and the
  learned belief model's inference.
* ``particles``: ``ParticleBelief``, the particle filter over the deal's hidden history,
  which weighs whole hidden worlds by how likely an opponent model finds the moves the
  opponents actually made.
* ``opponent_models``: the pluggable models of the opponents' moves (heuristic, a
  network's own probabilities, uniform, mixtures), evaluated in batch.
* ``worlds``: the numba kernels that deal, step, repair and rename the worlds.
* ``v0_events``: the two-player v0 windows rebuilt as v1 events where they are exact.
* ``state_from_obs``: a full engine state consistent with one observation.

The names below load on first use, so ``import agents.belief.tracker`` needs no numba.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "DEFAULT_MODEL": "opponent_models", "HeuristicModel": "opponent_models",
    "MixtureModel": "opponent_models", "NetworkModel": "opponent_models",
    "UniformModel": "opponent_models", "opponent_model": "opponent_models",
    "ParticleBelief": "particles",
}

__all__ = ["DEFAULT_MODEL", "HeuristicModel", "MixtureModel", "NetworkModel",
           "ParticleBelief", "UniformModel", "opponent_model"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
