"""Opponent models: the probability that an opponent makes a given move, in batch.

The particle belief (``agents.belief.particles``) weighs each world by how likely
the opponents' actual moves were in it. An opponent model answers that for many
positions at once: ``model.probs(rows, actions, cfg)`` takes batched-engine state rows
(``pis_env.batched.kernels``; the opponent to move, its hand in that world, the public
fields, the legal mask of that hand) and returns ``P(action | row)`` per row.

Why rows, not observations: the world arrays already are rows, the heuristic reads a
row exactly as it reads its own observation (``heuristic_actions_state``), and a
network's observation is written from the row by the engine's own encoder
(``kernels.write_obs``), so every model sees exactly what that opponent would see.

* :class:`UniformModel`: every legal move alike. Alone it makes the filter a sampler of
  worlds consistent with the public record (no inference from choices).
* :class:`HeuristicModel`: our heuristic's choice with probability ``1 - epsilon``,
  the rest spread over the legal moves (the heuristic gives an argmax, not scores).
* :class:`NetworkModel`: a policy network's own probabilities (softmax of its masked
  logits, ``temperature``): the shipped network as a "self-model".
* :class:`MixtureModel`: a weighted sum; :data:`DEFAULT_MODEL` mixes the heuristic with
  a uniform component, so that an opponent that plays nothing like our heuristic still
  gets every legal move a fair probability and no world dies for it.

``opponent_model(spec, num_players)`` builds one from a string: ``"uniform"``,
``"heuristic"`` (ε 0.1), ``"heuristic?epsilon=0.3"``, ``"network"`` (the shipped
``models/ppo_{n}p.zip``), ``"network?path=...&temperature=..."``, a mixture
``"heuristic:0.6,uniform:0.4"``, or the preset ``"panel"`` (``"panel?epsilon=0.1"``).

``"panel"`` (:data:`PANEL_MODEL`): one type per batched bot of the opponent panel's model
set (``agents.panel.MODEL_SET``; each ε-mixed, ``panel_model``, so no
world dies when the opponent is none of them; ``random`` is the uniform type), a
self-model (the shipped network, :class:`NetworkModel`) and uniform, with equal prior
weights. Why: an opponent that plays nothing like our heuristic is explained by the
type that does play like it, and the particle filter's posterior over the types
(``ParticleBelief.type_posterior``) says who the opponent is. Every type carries ``bot``:
the name of the batched policy that plays it in a search's rollouts
(``agents.search``'s ``rollout_policy="types"``; ``"self"`` the shipped network,
``"random"`` the uniform type). Evaluation-set bots are never types.
"""

from __future__ import annotations

import numpy as np

from pis_env.batched import kernels as K

#: The default: half our heuristic (itself ε-mixed), half uniform over the legal moves.
DEFAULT_MODEL = "heuristic:0.5,uniform:0.5"
#: The preset of every model-set type, a self-model and uniform (see the module docstring).
PANEL_MODEL = "panel"
#: The most rows one call of a model takes (the callers chunk nothing bigger than this).
MAX_ROWS = 1 << 20


#: Policy files a ``NetworkModel`` has read in this process: (path, players) -> policy.
_LOADED: dict = {}


def _legal_counts(rows: np.ndarray) -> np.ndarray:
    return np.bitwise_count(rows[:, K.LEGAL]).astype(np.float64)


def _check(rows: np.ndarray, actions: np.ndarray) -> None:
    if rows.ndim != 2 or rows.shape[1] != K.NF or actions.shape != (rows.shape[0],):
        raise ValueError(f"expected rows [K, {K.NF}] and actions [K], got {rows.shape} and "
                         f"{actions.shape}")
    if rows.shape[0] > MAX_ROWS:
        raise ValueError(f"{rows.shape[0]} rows in one call: at most {MAX_ROWS}")


def _is_legal(rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
    return ((rows[:, K.LEGAL] >> actions) & 1).astype(bool)


class UniformModel:
    """Every legal move equally likely; an illegal one has probability 0."""

    name = "uniform"
    bot = "random"

    def probs(self, rows: np.ndarray, actions: np.ndarray, cfg: np.ndarray) -> np.ndarray:
        _check(rows, actions)
        return np.where(_is_legal(rows, actions), 1.0 / np.maximum(_legal_counts(rows), 1),
                        0.0)

    def __repr__(self) -> str:
        return "UniformModel()"


class HeuristicModel:
    """The heuristic (``agents.heuristic``, ``params`` its weights) plays its choice with
    probability ``1 - epsilon`` and a uniformly random legal move otherwise."""

    name = "heuristic"
    bot = "heuristic"

    def __init__(self, epsilon: float = 0.1, params=None):
        epsilon = float(epsilon)
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon={epsilon!r}: must be in (0, 1] (0 would let one "
                             "surprising move kill every world)")
        from agents.heuristic.batched import params_vector

        self.epsilon = epsilon
        self.params = params_vector(params)
        self._out = np.empty(0, dtype=np.int64)

    def choices(self, rows: np.ndarray, cfg: np.ndarray) -> np.ndarray:
        """The heuristic's move in every row (a reused buffer)."""
        from agents.heuristic.batched import heuristic_actions_state

        if self._out.shape[0] != rows.shape[0]:
            self._out = np.empty(rows.shape[0], dtype=np.int64)
        heuristic_actions_state(rows, cfg, self.params, self._out)
        return self._out

    def probs(self, rows: np.ndarray, actions: np.ndarray, cfg: np.ndarray) -> np.ndarray:
        _check(rows, actions)
        chosen = self.choices(rows, cfg) == actions
        legal = _is_legal(rows, actions)
        p = self.epsilon / np.maximum(_legal_counts(rows), 1) + (1 - self.epsilon) * chosen
        return np.where(legal, p, 0.0)

    def __repr__(self) -> str:
        return f"HeuristicModel(epsilon={self.epsilon})"


class NetworkModel:
    """A policy network's probabilities of the move: softmax of its masked logits over
    ``temperature``, on the observation that opponent would be shown in the row
    (``kernels.write_obs``, the network's own layout). ``policy``: an
    ``agents.batched_policy.TorchPolicy`` or a policy file path."""

    name = "network"

    def __init__(self, policy, num_players: int, temperature: float = 1.0):
        temperature = float(temperature)
        if not 0.05 <= temperature <= 100.0:
            raise ValueError(f"temperature={temperature!r}: must be in [0.05, 100]")
        if isinstance(policy, str):
            from agents.batched_policy import TorchPolicy
            from agents.ppo import resolve_path

            if not resolve_path(policy).exists():
                raise ValueError(f"network opponent model: no policy file {policy!r}")
            key = (str(resolve_path(policy)), num_players)
            if key not in _LOADED:  # read once per process: its weights are only read
                _LOADED[key] = TorchPolicy.from_file(policy, num_players, 1)
            policy = _LOADED[key]
        self.policy = policy
        self.num_players = num_players
        self.temperature = temperature
        from pis_env.batched.core import size_table

        self._size_tab = size_table(np.float32)

    def probs(self, rows: np.ndarray, actions: np.ndarray, cfg: np.ndarray) -> np.ndarray:
        import torch

        _check(rows, actions)
        count = rows.shape[0]
        if count == 0:
            return np.zeros(0)
        games = np.arange(count, dtype=np.int64)
        obs = np.empty((count, K.obs_size(int(cfg[K.C_N]), int(cfg[K.C_DEALS]))),
                       dtype=np.float32)
        K.observe_games(rows, cfg, games, np.full(count, -1, dtype=np.int64), obs,
                        self._size_tab)
        masks = np.empty((count, K.NUM_ACTIONS), dtype=np.int8)
        K.masks_of(rows, games, masks)
        before = torch.get_num_threads()
        torch.set_num_threads(1)  # small passes: torch's pool only slows them down
        try:
            logits = self.policy.logits(obs, masks) / self.temperature
            logp = torch.log_softmax(logits, dim=1)
            picked = logp.gather(1, torch.as_tensor(np.minimum(actions, K.NUM_ACTIONS - 1))
                                 .long()[:, None])[:, 0].numpy().astype(np.float64)
        finally:
            torch.set_num_threads(before)
        return np.where(_is_legal(rows, actions), np.exp(picked), 0.0)

    def __repr__(self) -> str:
        return f"NetworkModel({self.policy!r}, temperature={self.temperature})"


class MixtureModel:
    """``sum_i w_i P_i(action)`` with weights normalised to one."""

    name = "mixture"

    def __init__(self, parts):
        parts = [(float(w), m) for w, m in parts]
        if not parts or any(w <= 0 for w, _ in parts):
            raise ValueError("a mixture needs at least one model, every weight > 0")
        total = sum(w for w, _ in parts)
        self.parts = [(w / total, m) for w, m in parts]

    def probs(self, rows: np.ndarray, actions: np.ndarray, cfg: np.ndarray) -> np.ndarray:
        out = np.zeros(rows.shape[0])
        for w, m in self.parts:
            out += w * m.probs(rows, actions, cfg)
        return out

    def __repr__(self) -> str:
        return "MixtureModel(" + ", ".join(f"{w:.3g} {m!r}" for w, m in self.parts) + ")"


def panel_model(name: str, num_players: int = 2, epsilon: float = 0.1):
    """The opponent model of the model-set bot ``name`` (see the module docstring): its
    ``agents.registry`` entry's model, for the model set only (the panel's split)."""
    from agents.panel import EVALUATION_SET, MODEL_SET
    from agents.registry import REGISTRY, opponent_model_of

    if name in EVALUATION_SET:
        raise ValueError(f"{name!r} is in the evaluation set: nothing may model it")
    modelled = [m for m in MODEL_SET if REGISTRY[m].model is not None]
    if name not in modelled:
        raise ValueError(f"no opponent model for {name!r}: one of {', '.join(modelled)}")
    return opponent_model_of(name, num_players, epsilon)


def panel_types(num_players: int = 2, epsilon: float = 0.1,
                networks: bool = True) -> MixtureModel:
    """The ``"panel"`` preset (see the module docstring): every batched model-set bot but
    ``random``, then the self-model, then uniform, equal weights; each part's ``bot`` names
    its rollout policy. ``networks=False`` leaves out the network types (``ppo_v2`` and
    the self-model), the costly ones to evaluate and to roll out."""
    from agents.panel import MODEL_SET, NOT_BATCHED

    parts = []
    for name in MODEL_SET:
        if name in NOT_BATCHED or name == "random" or (name == "ppo_v2" and not networks):
            continue
        model = panel_model(name, num_players, epsilon)
        model.bot = name
        parts.append(model)
    if networks:
        self_model = NetworkModel(f"models/ppo_{num_players}p.zip", num_players)
        self_model.bot = "self"
        parts.append(self_model)
    parts.append(UniformModel())
    return MixtureModel([(1.0, m) for m in parts])


def _single(spec: str, num_players: int):
    from agents.spec import parse

    parsed = parse(spec)
    name, options = parsed.base, parsed.options
    known = {"uniform": set(), "heuristic": {"epsilon"}, "network": {"path", "temperature"},
             PANEL_MODEL: {"epsilon", "networks"}}
    if name not in known:
        raise ValueError(f"opponent model {name!r}: one of {', '.join(known)} (or a "
                         "mixture like 'heuristic:0.5,uniform:0.5')")
    extra = set(options) - known[name]
    if extra:
        raise ValueError(f"opponent model {name!r} takes no option {sorted(extra)}; its "
                         f"options: {sorted(known[name]) or 'none'}")
    try:
        if name == "uniform":
            return UniformModel()
        if name == "heuristic":
            return HeuristicModel(float(options.get("epsilon", 0.1)))
        if name == PANEL_MODEL:
            return panel_types(num_players, float(options.get("epsilon", 0.1)),
                               bool(options.get("networks", True)))
        return NetworkModel(str(options.get("path", f"models/ppo_{num_players}p.zip")),
                            num_players, float(options.get("temperature", 1.0)))
    except (TypeError, ValueError) as e:
        raise ValueError(f"opponent model {spec!r}: {e}") from e


def opponent_model(spec=None, num_players: int = 2):
    """An opponent model from a spec string (see the module docstring), or ``spec``
    itself when it already has ``probs``; ``None``: :data:`DEFAULT_MODEL`."""
    from agents.spec import base_of

    if spec is None:
        spec = DEFAULT_MODEL
    if hasattr(spec, "probs"):
        return spec
    if not isinstance(spec, str) or len(spec) > 500:
        raise ValueError(f"opponent model spec {spec!r}: a string of at most 500 characters")
    if "," not in spec and ":" not in base_of(spec):
        return _single(spec, num_players)
    parts = []
    for item in spec.split(","):
        head, sep, weight = item.rpartition(":")
        if not sep or not head:
            raise ValueError(f"opponent model mixture {spec!r}: write 'model:weight,...'")
        try:
            w = float(weight)
        except ValueError:
            raise ValueError(f"opponent model mixture {spec!r}: weight {weight!r} is not "
                             "a number") from None
        parts.append((w, _single(head, num_players)))
    return MixtureModel(parts)


__all__ = ["DEFAULT_MODEL", "PANEL_MODEL", "HeuristicModel", "MixtureModel", "NetworkModel",
           "UniformModel", "opponent_model", "panel_types"]
