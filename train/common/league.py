"""The opponent league: bots and frozen snapshots of the learner.

``League`` (trainer side) keeps the pool of snapshots (numpy copies of the actor network,
see ``agents.ppo.NumpyPolicy``) and the learner's recent results against every opponent.
``LeagueEnv`` (one per vectorised env) is the gymnasium env the learner plays: at every
reset it draws the learner's seat and each opponent seat from the configured mix (agent
names and ``"self"``, the snapshot pool; snapshots are picked with prioritised fictitious
self-play weights ``(1 - score)^p``, favouring the ones the learner still loses to), and at
the end of an episode it reports the result in ``info["league"]``.

With ``DummyVecEnv`` every env holds the trainer's ``League`` object itself; with
``SubprocVecEnv`` each worker holds a copy that ``League.sync`` refreshes.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np

from agents.ppo import NumpyPolicy
from pis_env.engine import NUM_ACTIONS
from pis_env.privileged import (  # noqa: F401  (re-exported: the critic's input)
    STOCK_LOOKAHEAD,
    privileged_features,
    privileged_rows,
    privileged_size,
)
from pis_env.scoring import deal_rewards

SELF = "self"


def learner_env_class(env_version: int):
    """The single-agent view of ``pis_yedili_v<env_version>`` (``PisYedili-v0``/``-v1``)."""
    from pis_env import pis_yedili_v1, wrappers

    classes = {0: wrappers.SingleAgentEnv, 1: pis_yedili_v1.SingleAgentEnv}
    if env_version not in classes:
        raise ValueError(f"env_version={env_version!r}: allowed values are "
                         + ", ".join(map(str, classes)))
    return classes[env_version]


def table_env_class(env_version: int):
    """The AEC env (``raw_env``) of ``pis_yedili_v<env_version>``."""
    return learner_env_class(env_version).aec_class


class AtOwnLayout:
    """A bot shown the observation of the layout it was built for (``layout_version``)
    at a table of another layout: a v0 network opponent (``ppo:models/ppo_2p.zip``) at
    the v1 table a v1 learner plays. The observation is encoded anew from the env's
    game for the seat to move (``agents.tournament.worker.seat_observation``, as the
    tournament seats mixed tables), not cut from the table's vector."""

    def __init__(self, agent, aec):
        self.agent = agent
        self.aec = aec
        self.layout_version = agent.layout_version
        self._encoders: dict = {}

    def act(self, observation: dict) -> int:
        from agents.tournament.worker import seat_observation

        seat = self.aec.game.current
        return self.agent.act(seat_observation(self.aec, seat, self.layout_version,
                                               self._encoders))

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed=seed)

    def __repr__(self) -> str:
        return f"AtOwnLayout({self.agent!r})"


def needs_own_layout(agent, table_version: int) -> bool:
    """Whether ``agent`` cannot read a table of ``table_version`` as it is: a network
    reads exactly its layout; a rule-based bot (``reads_later_layouts``) any later one."""
    version = getattr(agent, "layout_version", table_version)
    if version == table_version:
        return False
    return not (version < table_version and getattr(agent, "reads_later_layouts", False))


def win_share(charges) -> float:
    """Seat 0's ``"win"`` reward (``deal_rewards``) when the lowest charges win: +1 split
    among them, -1 among the others, 0 when everyone ties. Training's ``win_bonus``
    scales it (here, not in the env: it is a training choice, not a rule)."""
    low = min(charges)
    return deal_rewards(list(charges), [c == low for c in charges], "win")[0]


class SnapshotAgent:
    """A frozen policy at one seat: a numpy forward pass through the mask."""

    def __init__(self, policy: NumpyPolicy, rng: np.random.Generator, deterministic: bool):
        self.policy = policy
        self.rng = rng
        self.deterministic = deterministic

    def act(self, observation: dict) -> int:
        return self.policy.act(observation["observation"], observation["action_mask"],
                               self.deterministic, self.rng)


class League:
    """The opponent mix, the snapshot pool and the learner's results per opponent."""

    def __init__(self, mix: dict[str, float], pool_size: int = 10, prioritized: bool = True,
                 priority_power: float = 2.0, window: int = 500,
                 snapshot_deterministic: bool = False):
        total = float(sum(mix.values()))
        self.mix = {k: float(v) / total for k, v in mix.items() if v > 0}
        self.pool_size = pool_size
        self.prioritized = prioritized
        self.priority_power = priority_power
        self.window = window
        self.snapshot_deterministic = snapshot_deterministic
        self.snapshots: list[dict[str, Any]] = []  # {"id", "step", "policy"}
        # Per opponent key (agent name or snapshot id): recent pairwise scores of the
        # learner (1 beat it, 0.5 tie, 0 lost).
        self.scores: dict[str, deque] = {}
        self._weights: np.ndarray | None = None

    @classmethod
    def from_config(cls, league_cfg: Any) -> League:
        """The league of a run's ``league`` section (``train.sb3.config.LeagueConfig``)."""
        return cls(
            league_cfg.opponents,
            pool_size=league_cfg.pool_size,
            prioritized=league_cfg.prioritized,
            priority_power=league_cfg.priority_power,
            window=league_cfg.window,
            snapshot_deterministic=league_cfg.snapshot_deterministic,
        )

    @property
    def uses_pool(self) -> bool:
        return SELF in self.mix

    # ------------------------------------------------------------------ pool
    def add_snapshot(self, step: int, policy: NumpyPolicy) -> str:
        sid = f"snap@{step}"
        self.snapshots = [s for s in self.snapshots if s["id"] != sid]
        self.snapshots.append({"id": sid, "step": int(step), "policy": policy})
        while len(self.snapshots) > self.pool_size:
            old = self.snapshots.pop(0)
            self.scores.pop(old["id"], None)
        self._weights = None
        return sid

    def score(self, key: str, prior: float = 0.5, prior_games: float = 2.0) -> float:
        """The learner's mean recent score against ``key`` (shrunk towards ``prior``)."""
        results = self.scores.get(key)
        n = len(results) if results else 0
        total = sum(results) if results else 0.0
        return (total + prior * prior_games) / (n + prior_games)

    def snapshot_weights(self) -> np.ndarray:
        if self._weights is None:
            if not self.snapshots:
                self._weights = np.zeros(0)
            elif self.prioritized:
                w = np.array([(1.0 - self.score(s["id"])) ** self.priority_power + 1e-3
                              for s in self.snapshots])
                self._weights = w / w.sum()
            else:
                self._weights = np.full(len(self.snapshots), 1.0 / len(self.snapshots))
        return self._weights

    # ------------------------------------------------------------------ sampling
    def sample_keys(self, rng: np.random.Generator, count: int) -> list[str]:
        """Opponent keys for ``count`` seats: agent names or snapshot ids."""
        names = list(self.mix)
        probs = np.array([self.mix[k] for k in names])
        if SELF in self.mix and not self.snapshots:
            probs[names.index(SELF)] = 0.0
            if probs.sum() <= 0:
                raise RuntimeError("the league's mix is only 'self' and the pool is empty")
            probs = probs / probs.sum()
        keys = []
        for _ in range(count):
            name = names[rng.choice(len(names), p=probs)] if len(names) > 1 else names[0]
            if name == SELF:
                w = self.snapshot_weights()
                name = self.snapshots[rng.choice(len(w), p=w)]["id"]
            keys.append(name)
        return keys

    def policy_of(self, sid: str) -> NumpyPolicy:
        for s in self.snapshots:
            if s["id"] == sid:
                return s["policy"]
        raise KeyError(sid)

    # ------------------------------------------------------------------ results
    def record(self, result: dict) -> None:
        """One finished episode's ``info["league"]``."""
        charges = result["charges"]
        mine = charges[0]
        for key, theirs in zip(result["opponents"], charges[1:]):
            s = 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
            dq = self.scores.get(key)
            if dq is None:
                dq = self.scores[key] = deque(maxlen=self.window)
            dq.append(s)
        self._weights = None

    # ------------------------------------------------------------------ sync, state
    def sync_payload(self, with_pool: bool) -> dict:
        payload = {"weights": self.snapshot_weights().tolist()}
        if with_pool:
            payload["snapshots"] = [dict(s) for s in self.snapshots]
        return payload

    def apply_payload(self, payload: dict) -> None:
        if "snapshots" in payload:
            self.snapshots = payload["snapshots"]
        self._weights = np.asarray(payload["weights"], dtype=float)

    def state_dict(self) -> dict:
        """For checkpoints: plain tensors, strings and numbers (``weights_only`` loadable)."""
        import torch

        return {
            "snapshots": [
                {"id": s["id"], "step": s["step"], "meta": _json(s["policy"].meta),
                 "state": {k: torch.from_numpy(np.ascontiguousarray(v))
                           for k, v in _state_of(s["policy"]).items()}}
                for s in self.snapshots
            ],
            "scores": {k: list(v) for k, v in self.scores.items()},
        }

    def load_state_dict(self, state: dict) -> None:
        import json

        self.snapshots = []
        for s in state["snapshots"]:
            arrays = {k: v.numpy() for k, v in s["state"].items()}
            self.snapshots.append({"id": s["id"], "step": int(s["step"]),
                                   "policy": NumpyPolicy(json.loads(s["meta"]), arrays)})
        self.scores = {k: deque(v, maxlen=self.window) for k, v in state["scores"].items()}
        self._weights = None


def _json(obj) -> str:
    import json

    return json.dumps(obj)


def _state_of(policy: NumpyPolicy) -> dict[str, np.ndarray]:
    """The SB3 state-dict entries that rebuild a NumpyPolicy."""
    out = {}
    for i, (w, b) in enumerate(policy.layers[:-1]):
        out[f"mlp_extractor.policy_net.{2 * i}.weight"] = w.T
        out[f"mlp_extractor.policy_net.{2 * i}.bias"] = b
    w, b = policy.layers[-1]
    out["action_net.weight"] = w.T
    out["action_net.bias"] = b
    return out


def make_bot(name: str, rules: dict, seed: int):
    """``agents.make(name)`` for this table; bots that take ``rules=`` get the variant."""
    import agents

    return agents.make_for_table(name, rules, seed)


class LeagueEnv(gym.Env):
    """The learner's env: ``SingleAgentEnv`` with league-sampled opponents and seat.

    The observation is the policy input (the env's observation, then the legal mask when
    ``features`` includes ``"mask"``); ``action_masks()`` is for MaskablePPO. With
    ``skip_forced`` the learner's moves that have no alternative (one legal action) are
    played by the env, so every step the learner sees is a real decision. With
    ``privileged`` the hidden cards (``privileged_features``) follow, for the critic of
    ``train.sb3.policy.PrivilegedCriticPolicy`` only. ``env_version`` is the table's
    (``pis_yedili_v0`` / ``v1``: the learner's observation layout); a bot opponent built
    for another layout (a v0 network at a v1 table) is shown its own. At the end
    of an episode ``info["league"]`` holds the opponent keys, the charges (learner first,
    then the opponents as seated clockwise from its left) and whether it won, and
    ``info["episode"]`` the usual return/length/time (as SB3's Monitor writes it)."""

    metadata = {"render_modes": []}

    def __init__(self, league: League, rules: dict, features=("obs", "mask"),
                 learner_seat: int | None = None, seed: int = 0, win_bonus: float = 0.0,
                 skip_forced: bool = False, privileged: bool = False, env_version: int = 0):
        self.league = league
        self.env_version = int(env_version)
        self.skip_forced = skip_forced
        self.privileged = privileged
        self.win_bonus = float(win_bonus)
        self.rules = dict(rules)
        self.features = tuple(features)
        self.num_players = int(rules["num_players"])
        self.multi_deal = int(rules.get("num_deals", 1)) > 1
        self._agent_rng = np.random.default_rng(seed)
        self._bots: dict[tuple[str, int], Any] = {}
        self._keys: list[str] = []
        self.inner = learner_env_class(self.env_version)(
            opponent_sampler=self._sample, learner_seat=learner_seat, **self.rules)
        size = self.inner.observation_space.shape[0]
        if "mask" in self.features:
            size += NUM_ACTIONS
        self.actor_dim = size
        if privileged:
            size += privileged_size(self.num_players)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (size,), dtype=np.float32)
        self.action_space = self.inner.action_space
        self._ep_return = 0.0
        self._ep_len = 0
        self._t0 = time.time()

    # ------------------------------------------------------------------ opponents
    def _bot(self, name: str, seat: int):
        bot = self._bots.get((name, seat))
        if bot is None:

            bot_seed = int(self._agent_rng.integers(2**31))
            bot = make_bot(name, self.rules, bot_seed)
            if needs_own_layout(bot, self.env_version):
                bot = AtOwnLayout(bot, self.inner.aec)
            self._bots[(name, seat)] = bot
        return bot

    def _sample(self, np_random: np.random.Generator):
        keys = self.league.sample_keys(np_random, self.num_players - 1)
        self._keys = keys
        out = []
        for seat, key in enumerate(keys):
            if key.startswith("snap@"):
                out.append(SnapshotAgent(self.league.policy_of(key), self._agent_rng,
                                         self.league.snapshot_deterministic))
            else:
                out.append(self._bot(key, seat))
        return out

    # ------------------------------------------------------------------ gym API
    def _obs(self, obs: np.ndarray) -> np.ndarray:
        parts = [obs]
        if "mask" in self.features:
            parts.append(self.inner.legal_mask.astype(np.float32))
        if self.privileged:
            parts.append(privileged_features(self.inner.game, self.inner.seat))
        return np.concatenate(parts) if len(parts) > 1 else obs

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._agent_rng = np.random.default_rng([seed, 1])
        obs, info = self.inner.reset(seed=seed, options=options)
        while True:
            # A deal can end before the learner's first decision (the opener drawing the
            # stock dry at a big table, or only forced moves): it teaches nothing, so the
            # learner gets the next deal.
            over = self._over()
            if self.skip_forced and not over:
                obs, _, terminated, truncated, info = self._skip(obs, 0.0, False, False, info)
                over = terminated or truncated
            if not over:
                break
            obs, info = self.inner.reset()
        self._ep_return = 0.0
        self._ep_len = 0
        self._t0 = time.time()
        return self._obs(obs), info

    def _over(self) -> bool:
        aec, learner = self.inner.aec, self.inner.learner
        return bool(aec.terminations[learner] or aec.truncations[learner])

    def _skip(self, obs, reward, terminated, truncated, info):
        """Plays the learner's forced moves (a single legal action) itself."""
        inner = self.inner
        while not (terminated or truncated):
            legal = np.flatnonzero(inner.legal_mask)
            if legal.size != 1:
                break
            obs, r, terminated, truncated, info = inner.step(int(legal[0]))
            reward += r
        return obs, reward, terminated, truncated, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.inner.step(action)
        if self.skip_forced:
            obs, reward, terminated, truncated, info = self._skip(obs, reward, terminated,
                                                                  truncated, info)
        self._ep_return += reward
        self._ep_len += 1
        if terminated or truncated:
            info["episode"] = {"r": self._ep_return, "l": self._ep_len,
                               "t": round(time.time() - self._t0, 6)}
            if terminated:
                result = info["league"] = self._result()
                if self.win_bonus:
                    bonus = self.win_bonus * win_share(result["charges"])
                    reward += bonus
                    self._ep_return += bonus
                    info["episode"]["r"] = self._ep_return
        return self._obs(obs), reward, terminated, truncated, info

    def _result(self) -> dict:
        game = self.inner.aec.game
        n = self.num_players
        seat = self.inner.seat
        order = [(seat + k) % n for k in range(n)]
        scores = game.totals if self.multi_deal else game.charges
        charges = [int(scores[i]) for i in order]
        return {"opponents": list(self._keys), "charges": charges,
                "win": charges[0] == min(charges)}

    def action_masks(self) -> np.ndarray:
        return self.inner.action_masks()

    def league_sync(self, payload: dict) -> None:
        """Refreshes this worker's copy of the league (SubprocVecEnv)."""
        self.league.apply_payload(payload)
