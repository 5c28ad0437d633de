"""What a PPO policy thinks of a decision: its probabilities over the legal moves and,
where it may be shown, its critic's value estimate.

The probabilities are ``agents.ppo``'s own (``PPOAgent.probabilities``, the distribution
the bot plays from), so the page shows exactly what the bot computes. The critic is read
from the same file. A critic whose input is the actor's (public information) may be shown
anywhere; a *privileged* critic (``policy.privileged_critic`` in training: it also reads
every hidden hand and the next stock cards) would leak those cards, so ``PolicyView``
evaluates it only when the caller passes the whole game, which the server does only for
full-table replays.

A policy reads the observation layout it was trained on (``agent.layout_version``: a v1
network the ``pis_yedili_v1`` observation): positions the view encodes itself (replay
frames) are encoded at that layout.
"""

from __future__ import annotations

import threading

import numpy as np

from agents.ppo import PPOAgent, read_policy
from agents.ui.web.views import move_label
from pis_env.aec import mask_array
from pis_env.engine import GameState
from pis_env.observation import observation_encoder
from pis_env.privileged import privileged_features, privileged_size

PUBLIC, PRIVILEGED = "public", "privileged"


class ValueHead:
    """The critic (``mlp_extractor.value_net`` + ``value_net``) as numpy products."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], activation: str, kind: str):
        self.layers = layers
        self.activation = activation
        self.kind = kind

    @classmethod
    def of(cls, meta: dict, state: dict[str, np.ndarray], input_size: int) -> ValueHead | None:
        """The file's critic, or ``None`` when it has none or one whose inputs are unknown
        (a privileged critic trained with observation normalisation: only the actor's part
        of the statistics is saved)."""
        layers, idx = [], 0
        while f"mlp_extractor.value_net.{idx}.weight" in state:
            layers.append((state[f"mlp_extractor.value_net.{idx}.weight"].T.astype(np.float32),
                           state[f"mlp_extractor.value_net.{idx}.bias"].astype(np.float32)))
            idx += 2
        if "value_net.weight" not in state:
            return None
        layers.append((state["value_net.weight"].T.astype(np.float32),
                       state["value_net.bias"].astype(np.float32)))
        width = layers[0][0].shape[0]
        if width == input_size:
            return cls(layers, meta["activation"], PUBLIC)
        if width == input_size + privileged_size(meta["num_players"]) and not meta.get(
                "obs_norm"):
            return cls(layers, meta["activation"], PRIVILEGED)
        return None

    def __call__(self, x: np.ndarray) -> float:
        for w, b in self.layers[:-1]:
            x = x @ w + b
            x = np.maximum(x, 0.0) if self.activation == "relu" else np.tanh(x)
        w, b = self.layers[-1]
        return float((x @ w + b)[0])


class PolicyView:
    """A ``ppo:PATH`` bot's view of decisions at its table size."""

    def __init__(self, spec: str, agent: PPOAgent):
        self.spec = spec
        self.agent = agent
        meta, state = read_policy(agent.path)
        self.value = ValueHead.of(meta, state, agent.policy.input_size)
        self.encoder = observation_encoder(agent.num_players, agent.num_deals,
                                           agent.layout_version)
        # replay frames are served from a thread pool; the encoder writes one buffer
        self._encoding = threading.Lock()

    def fits(self, num_players: int, num_deals: int) -> bool:
        return (self.agent.num_players, self.agent.num_deals) == (num_players, num_deals)

    def decision(self, game: GameState, seat: int, observation: dict | None = None,
                 full_table: bool = False) -> dict:
        """The policy at ``seat``'s decision in ``game``: ``{"policy", "seat", "moves":
        [{"action", "label", "p"}] (legal moves, most likely first), "value",
        "value_kind", "value_note"}``. ``observation`` defaults to ``seat``'s own; a
        privileged critic is evaluated only with ``full_table=True``."""
        if observation is None:
            with self._encoding:
                vector = self.encoder.encode(game, seat)
            observation = {"observation": vector,
                           "action_mask": mask_array(game.legal_mask())}
        probs = self.agent.probabilities(observation)
        legal = np.flatnonzero(observation["action_mask"])
        moves = sorted(({"action": int(a), "label": move_label(int(a), game),
                         "p": float(probs[a])} for a in legal), key=lambda m: -m["p"])
        out = {"policy": self.spec, "seat": seat, "moves": moves, "value": None,
               "value_kind": None, "value_note": None}
        head = self.value
        if head is None:
            out["value_note"] = "this policy file has no critic the page can evaluate"
            return out
        x = self.agent.policy.inputs(observation["observation"], observation["action_mask"])
        if head.kind == PUBLIC:
            out["value"], out["value_kind"] = head(x), PUBLIC
        elif full_table:
            x = np.concatenate([x, privileged_features(game, seat)])
            out["value"], out["value_kind"] = head(x), PRIVILEGED
        else:
            out["value_note"] = ("the critic sees hidden cards: its value is shown only in "
                                 "full-table replays")
        return out
