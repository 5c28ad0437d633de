"""Policy-based inference: beliefs over the hidden cards that weigh whole hidden worlds
by how likely an opponent model finds the moves the opponents actually made.

* ``particles``: ``ParticleBelief``, the particle filter over the deal's hidden history.
* ``opponent_models``: the pluggable models of the opponents' moves (heuristic, a
  network's own probabilities, uniform, mixtures), evaluated in batch.
* ``worlds``: the numba kernels that deal, step, repair and rename the worlds.
* ``v0_events``: the two-player v0 windows rebuilt as v1 events where they are exact.
"""

from agents.inference.opponent_models import (
           DEFAULT_MODEL,
           HeuristicModel,
           MixtureModel,
           NetworkModel,
           UniformModel,
           opponent_model,
)
from agents.inference.particles import ParticleBelief

__all__ = ["DEFAULT_MODEL", "HeuristicModel", "MixtureModel", "NetworkModel",
           "ParticleBelief", "UniformModel", "opponent_model"]
