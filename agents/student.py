"""The student: a network taught by the search that reads the table as the search does.

    agents.make("student", num_players=2)                  # models/student_2p.pt
    agents.make("student", path="runs/student_2p/student.pt")

Why: the default search wins its points where it reads the opponents' hands from their
past plays (the particle filter, ``agents.belief.ParticleBelief``), which the v0
observation does not keep and no network here learned to read from the event log. So the
student is given what the search reads: at every observation of its seat it runs the same
particle filter, with the settings of the search that labelled its data (its file's
``filter``), and its network reads the v0 observation, the filter's card-location
marginals (for each opponent and card, the probability that the opponent holds it) and
the legal mask; one forward pass in numpy, the argmax of the policy head over the legal
actions. ``python -m train.student.fit`` trains it from ``python -m train.student.labels``'
positions (docs/training.md).

Like the search it asks a table for ``pis_yedili_v1``'s observation (the exact public
events the filter replays; ``layout_version = 1``) and reads v0 observations too: the
network's own columns are the first v0 columns of either, which every later layout begins
with unchanged. A network trained on single deals plays each deal of a match through its
deal view (``pis_env.observation.deal_view_indices``), as ``agents.ppo`` does, while the
filter follows the match. It is deterministic for a seed and the observations it is shown
(the filter draws its worlds from the seed; the network's choice is an argmax).

The file is weights-only (``agents.common.weights_file``): ``{"format", "format_version",
"meta" (JSON), "state_dict"}``; ``meta`` says the table (``num_players``, ``num_deals``,
``rules``), the network's observation layout, the filter's settings, the input features
and the value head's unit (``value_unit``, ``value_scale``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from agents.base import Agent
from agents.search import PARTICLES_LAYOUT
from pis_env.cards import NUM_CARDS
from pis_env.engine import NUM_ACTIONS
from pis_env.observation import Layout, deal_view_indices

#: ``"format"`` of a student file and its version (bumped when the file layout changes).
STUDENT_FORMAT = "pis-yedili-student"
FORMAT_VERSION = 1
#: The network's input segments, in this order: the v0 observation, the filter's
#: marginals [n-1, 52] flattened, the legal mask.
FEATURES = ("obs", "belief", "mask")
ACTIVATIONS = ("relu", "tanh")
#: The shipped file of a table size.
DEFAULT_PATH = "models/student_{n}p.pt"


class StudentLoadError(ValueError):
    """A student file that is missing, damaged or made for another table."""


def input_size(num_players: int, num_deals: int = 1) -> int:
    """The network's input width at a table: v0 observation + marginals + mask."""
    return (Layout.of(num_players, num_deals, 0).size + (num_players - 1) * NUM_CARDS
            + NUM_ACTIONS)


def read_student(path: str | Path) -> tuple[dict, dict[str, np.ndarray]]:
    """``(metadata, weights as numpy arrays)`` of a student file, its digest checked."""
    from agents.common.weights_file import WeightsFileError, load_weights_file
    from pis_env.shipped import resolve

    p = resolve(path, "model")
    try:
        data = load_weights_file(p)
    except FileNotFoundError:
        raise StudentLoadError(f"student file not found: {path} (the shipped student is "
                               f"{DEFAULT_PATH.format(n=2)}; train one with python -m "
                               "train.student.fit)") from None
    except WeightsFileError as e:
        raise StudentLoadError(str(e)) from e
    if data.get("format") != STUDENT_FORMAT:
        raise StudentLoadError(f"{path}: not a student file (no {STUDENT_FORMAT} format)")
    if data.get("format_version") != FORMAT_VERSION:
        raise StudentLoadError(f"{path}: student file format {data.get('format_version')!r}; "
                               f"this version reads format {FORMAT_VERSION}")
    meta = json.loads(data["meta"])
    state = {k: v.detach().cpu().numpy() for k, v in data["state_dict"].items()}
    return meta, state


class StudentNetwork:
    """The network as numpy matrix products: a trunk of ``(W.T, b)`` layers with
    ``activation``, then a policy head (58 logits) and a value head (one number, in the
    file's ``value_unit``). The torch module of ``train.student.fit`` has the same keys."""

    def __init__(self, meta: dict, state: dict[str, np.ndarray]):
        self.activation = meta["activation"]
        if self.activation not in ACTIVATIONS:
            raise StudentLoadError(f"unknown activation {self.activation!r}")
        trunk, idx = [], 0
        try:
            while f"trunk.{idx}.weight" in state:
                trunk.append((np.ascontiguousarray(state[f"trunk.{idx}.weight"].T, np.float32),
                              state[f"trunk.{idx}.bias"].astype(np.float32)))
                idx += 2  # Linear, activation, Linear, ...
            self.policy = (np.ascontiguousarray(state["policy.weight"].T, np.float32),
                           state["policy.bias"].astype(np.float32))
            self.value = (np.ascontiguousarray(state["value.weight"].T, np.float32),
                          state["value.bias"].astype(np.float32))
        except KeyError as e:
            raise StudentLoadError(f"the weights lack {e}") from None
        self.trunk = trunk
        first = trunk[0][0] if trunk else self.policy[0]
        if first.shape[0] != int(meta["input_size"]) or self.policy[0].shape[1] != NUM_ACTIONS:
            raise StudentLoadError(f"the weights take {first.shape[0]} inputs and give "
                                   f"{self.policy[0].shape[1]} logits; the metadata says "
                                   f"{meta['input_size']} and {NUM_ACTIONS}")

    def hidden(self, x: np.ndarray) -> np.ndarray:
        relu = self.activation == "relu"
        for w, b in self.trunk:
            x = x @ w + b
            x = np.maximum(x, 0.0) if relu else np.tanh(x)
        return x

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(logits [..., 58], value [...])`` of inputs ``x [..., input_size]``."""
        h = self.hidden(np.asarray(x, np.float32))
        return h @ self.policy[0] + self.policy[1], (h @ self.value[0] + self.value[1])[..., 0]


class StudentAgent(Agent):
    """The student bot (module docstring): the particle filter of its file's settings,
    then one forward pass, the argmax over the legal actions.

    ``path``: a student file (default ``models/student_{num_players}p.pt``);
    ``num_players``/``num_deals``: the table (default: the file's players, one deal); a
    table of another size than the file's is a ``ValueError`` saying so; ``rules`` or
    RULES.md's options as keywords: the table's variant, which the filter simulates;
    ``seed``: the filter's worlds."""

    name = "student"
    #: Asks for the v1 observation (the filter's exact public events); reads v0 too.
    layout_version = PARTICLES_LAYOUT

    def __init__(self, path: str | Path | None = None, num_players: int | None = None,
                 num_deals: int = 1, seed: int | None = None,
                 rules: Mapping | None = None, **options):
        from agents.belief.particles import ParticleBelief
        from agents.heuristic import table_rules

        if path is None:
            path = DEFAULT_PATH.format(n=2 if num_players is None else num_players)
            if num_players not in (None, 2):
                from pis_env.shipped import resolve

                if not resolve(path, "model").is_file():
                    raise ValueError(f"student: no student for {num_players} players "
                                     f"({path} does not exist; the shipped student plays 2 "
                                     "players): train one with python -m train.student.fit")
        try:
            meta, state = read_student(path)
        except StudentLoadError as e:
            raise ValueError(f"student: {e}") from e
        trained = int(meta["num_players"])
        num_players = trained if num_players is None else num_players
        if num_players != trained:
            raise ValueError(f"student: {path} was trained for {trained} players; this table "
                             f"has {num_players} players (a student plays only its own table "
                             "size)")
        if int(meta["num_deals"]) != 1:
            raise ValueError(f"student: {path} was trained on {meta['num_deals']}-deal "
                             "matches; this version plays students of single deals")
        super().__init__(num_players, num_deals, seed)
        self._readable_sizes.setdefault(Layout.of(num_players, num_deals, 0).size, 0)
        self.path, self.meta = str(path), meta
        self.network = StudentNetwork(meta, state)
        if self.network.trunk and self.network.trunk[0][0].shape[0] != input_size(trained):
            raise ValueError(f"student: {path} takes {meta['input_size']} inputs; a "
                             f"{trained}-player student takes {input_size(trained)}")
        self.rules = table_rules(rules, num_players, num_deals, **options)
        #: The particle filter, with the settings the labelling search's filter had.
        self.filter = ParticleBelief(num_players, self.rules, seed=seed, num_deals=num_deals,
                                     **dict(meta["filter"]))
        self._v0_size = Layout.of(num_players, num_deals, 0).size
        self._deal_view = (deal_view_indices(num_players, num_deals, 0) if num_deals > 1
                           else None)
        #: The value head's estimate at the last decision (``meta["value_unit"]``).
        self.last_value: float | None = None

    def reset(self, seed: int | None = None, opponents_changed: bool = False) -> None:
        """Forget the deal and, with ``seed``, reseed the filter; what the filter learnt
        of who the opponents are stays unless ``opponents_changed``."""
        super().reset(seed)
        self.filter.reset(seed)
        if opponents_changed:
            self.filter.forget_opponents()

    def inputs(self, vector: np.ndarray, mask: np.ndarray, belief: np.ndarray) -> np.ndarray:
        """The network's input: the v0 (deal) observation, the marginals, the mask."""
        obs = np.asarray(vector, np.float32)[:self._v0_size]
        if self._deal_view is not None:
            obs = obs[self._deal_view]
        return np.concatenate([obs, np.asarray(belief, np.float32).ravel(),
                               np.asarray(mask, np.float32)])

    def act(self, observation: dict) -> int:
        vector, mask = observation["observation"], observation["action_mask"]
        self.check_observation(vector)
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("no legal action in this observation: it is not this agent's turn")
        decoded = self.decode(observation)
        self.filter.observe(decoded)
        if legal.size == 1:
            action = int(legal[0])
        else:
            logits, value = self.network.forward(
                self.inputs(vector, mask, self.filter.belief(decoded)))
            self.last_value = float(value)
            action = int(legal[int(np.argmax(logits[legal]))])
        self.filter.record(action)
        return action

    def __repr__(self) -> str:
        return (f"StudentAgent(path={self.path!r}, num_players={self.num_players}, "
                f"seed={self.seed})")


__all__ = ["DEFAULT_PATH", "FEATURES", "FORMAT_VERSION", "STUDENT_FORMAT", "StudentAgent",
           "StudentLoadError", "StudentNetwork", "input_size", "read_student"]
