"""Warm start of ``train/rllib/ppo.py``: imitate a teacher bot before PPO (``pretrain:``).

``train.common.pretrain``'s warm start (its collector and its imitation loop, ``imitate``) for
the RLlib module: the teacher (``pretrain.teacher``, e.g. ``heuristic``) plays the
learner's seat -- a random seat each game, its opponents drawn per seat from the bots
of ``opponents`` (not ``self``: no snapshot exists yet) as in the RLlib env -- for
``pretrain.decisions`` decisions;
the learner's RLModule is then fitted on the driver for ``pretrain.epochs`` passes: the
actor to the teacher's actions (cross-entropy over the legal actions, the mask applied as
in the module) and the value head to the Monte Carlo return that followed (the run's
``ppo.gamma``; the reward is ``pis_env``'s, which the RLlib env passes on). The fitted
weights replace the learner's in the LearnerGroup and every EnvRunner before the first
PPO iteration.

Collection (``pretrain.collector``): ``batched`` steps the numba engine through
``train.vector.learner_batch.LearnerBatch`` (the SB3-free core of both vector adapters, with the
heuristic's numba port as the teacher: 300,000 decisions in a few seconds) and
``train.common.pretrain.collect``, the collection loop of the SB3 warm start; its observation
vectors are the very vectors ``pis_env.aec`` gives (the same ``ObservationEncoder``;
``tests_rllib`` checks a decoded position). It needs numba, which the ``rllib`` extra
installs (through ``fast``), and neither stable-baselines3 nor sb3-contrib (tested in a
process where they cannot be imported); ``aec`` plays ``pis_env.aec`` with the Python bots
(slower, no numba); ``auto`` takes ``batched`` when numba imports.
"""

from __future__ import annotations

import time

import numpy as np

from train.rllib.config import RLlibConfig, bots_of

#: Games stepped side by side by the batched collector.
BATCHED_GAMES = 64


def _teacher_seed(cfg: RLlibConfig) -> int:
    return int(cfg.seed) + 7919


def _gamma(cfg: RLlibConfig) -> float:
    return float(cfg.ppo.get("gamma", 0.99))  # RLlib's default


class CollectSource:
    """``LearnerBatch`` as the VecEnv ``train.common.pretrain.collect`` steps: ``seed`` then
    ``reset``, the masks through ``env_method("action_masks")``, ``step`` returning
    ``(obs, rewards, dones, infos)``. Only what ``collect`` calls, so that the one collection
    loop serves both warm starts without stable-baselines3 on this path."""

    def __init__(self, core):
        self.core = core
        self.num_envs = core.num_envs
        self._seed: int | None = None

    def seed(self, seed: int | None = None) -> None:
        self._seed = seed

    def reset(self) -> np.ndarray:
        seed, self._seed = self._seed, None
        return self.core.reset(seed)

    def env_method(self, name: str) -> list[np.ndarray]:
        if name != "action_masks":
            raise AttributeError(f"CollectSource answers env_method('action_masks') only, "
                                 f"not {name!r}")
        return list(self.core.action_masks())

    def step(self, actions: np.ndarray):
        out = self.core.step(actions)
        return out.obs, out.rewards, out.dones, [{}] * self.num_envs


def collect_batched(cfg: RLlibConfig, log=print) -> dict[str, np.ndarray]:
    """The teacher's decisions on the numba engine (``train.common.pretrain.collect`` over
    ``train.vector.learner_batch.LearnerBatch``)."""
    from train.common.pretrain import collect, make_teacher, teacher_columns
    from train.vector.learner_batch import LearnerBatch

    p, rules = cfg.pretrain, cfg.rules
    seed = _teacher_seed(cfg)
    # each game plays many deals: only finished ones have a return
    games = max(1, min(BATCHED_GAMES, int(p.decisions) // 200))
    core = LearnerBatch(games, rules, opponent_mix=bots_of(cfg), mix_per="seat",
                        learner_seat="random", seed=seed, layout_version=cfg.env_version)
    teacher = make_teacher(p.teacher, rules, seed=seed)
    # the columns the teacher reads: the numba heuristic reads the v0 prefix of a v1 row
    size = teacher_columns(teacher, rules, cfg.env_version)
    return collect(CollectSource(core), teacher, int(p.decisions), size, _gamma(cfg),
                   seed=seed, log=log)


def collect_aec(cfg: RLlibConfig, log=print) -> dict[str, np.ndarray]:
    """The teacher's decisions in ``pis_env.aec`` (``pis_yedili_v1.env`` for
    ``env_version: 1``) with the Python bots, game after game (every episode finished: all
    rows have a return)."""
    import agents
    from train.rllib.env import pis_aec_env

    p, rules = cfg.pretrain, cfg.rules
    seed = _teacher_seed(cfg)
    rng = np.random.default_rng(seed)
    bots_mix = bots_of(cfg)
    names = list(bots_mix)
    weights = np.asarray([bots_mix[k] for k in names])
    weights /= weights.sum()
    bots = {k: agents.make_for_table(k, rules, seed=seed + 1 + i) for i, k in enumerate(names)}
    teacher = agents.make_for_table(p.teacher, rules, seed=seed)
    gamma = _gamma(cfg)
    n = int(rules["num_players"])
    env = pis_aec_env(rules, cfg.env_version)
    xs, masks, actions, returns = [], [], [], []
    game = 0
    t0 = last = time.time()
    while len(actions) < p.decisions:
        env.reset(seed=int(rng.integers(2**31)))
        seat = int(rng.integers(n))
        seated = [bots[names[int(i)]] for i in rng.choice(len(names), size=n, p=weights)]
        learner = env.possible_agents[seat]
        first, reward = len(actions), 0.0
        for agent in env.agent_iter():
            obs, rew, term, trunc, _ = env.last()
            if agent == learner:
                reward += rew
            if term or trunc:
                env.step(None)
                continue
            player = teacher if agent == learner else seated[env.possible_agents.index(agent)]
            action = int(player.act(obs))
            if agent == learner:
                xs.append(np.asarray(obs["observation"], np.float32))
                masks.append(np.asarray(obs["action_mask"], bool))
                actions.append(action)
            env.step(action)
        k = len(actions) - first  # the deal's one reward comes at its end
        returns.extend(reward * gamma ** np.arange(k - 1, -1, -1))
        game += 1
        if time.time() - last > 30:
            last = time.time()
            log(f"pretrain: {len(actions):,}/{p.decisions:,} teacher decisions "
                f"({len(actions) / (last - t0):,.0f}/s)")
    return {"x": np.stack(xs), "masks": np.stack(masks), "actions": np.asarray(actions),
            "returns": np.asarray(returns, np.float32), "rows": np.arange(len(actions))}


def collect_decisions(cfg: RLlibConfig, log=print) -> tuple[dict[str, np.ndarray], str]:
    """``(data, collector used)`` for ``cfg.pretrain``."""
    kind = cfg.pretrain.collector
    if kind in ("auto", "batched"):
        try:
            import numba  # noqa: F401
        except ImportError as e:
            if kind == "batched":
                raise RuntimeError(f"pretrain.collector=batched needs numba ({e}): install "
                                   f"pis-yedili[rllib] (or [fast]), or use collector=aec") from e
        else:
            return collect_batched(cfg, log=log), "batched"
    return collect_aec(cfg, log=log), "aec"


def fit_module(module, data: dict[str, np.ndarray], epochs: int, batch_size: int, lr: float,
               value_coef: float, seed: int, log=print) -> dict[str, float]:
    """``train.common.pretrain.imitate`` (the SB3 pipeline's loop) into a
    ``MaskedPPOTorchRLModule``, in place: its masked logits and its value head."""
    from ray.rllib.core.columns import Columns

    from train.common.pretrain import imitate
    from train.vector.keys import MASK_KEY, OBS_KEY

    def forward(x, masks):
        batch = {Columns.OBS: {OBS_KEY: x, MASK_KEY: masks.float()}}
        out = module.forward_train(batch)
        values = module.compute_values(batch, embeddings=out.get(Columns.EMBEDDINGS))
        return out[Columns.ACTION_DIST_INPUTS], values

    return imitate(module, forward, data, epochs, batch_size, lr, value_coef, seed, log=log)


def pretrain_state(cfg: RLlibConfig, spec, state: dict, log=print) -> tuple[dict, dict]:
    """``(fitted weights, statistics)``: a module built from ``spec`` (the learner's
    ``RLModuleSpec``) starting from ``state`` (its weights), fitted to the teacher."""
    import torch

    p = cfg.pretrain
    t0 = time.perf_counter()
    data, collector = collect_decisions(cfg, log=log)
    t1 = time.perf_counter()
    log(f"pretrain: {len(data['rows']):,} decisions of {p.teacher} ({collector}) "
        f"in {t1 - t0:.1f} s")
    torch.manual_seed(int(cfg.seed))
    module = spec.build()
    module.set_state(state)
    stats = fit_module(module, data, int(p.epochs), int(p.batch_size),
                       float(p.learning_rate), float(p.value_coef), seed=int(cfg.seed),
                       log=log)
    stats.update({"teacher": p.teacher, "collector": collector,
                  "decisions": int(len(data["rows"])),
                  "collect_seconds": round(t1 - t0, 2),
                  "seconds": round(time.perf_counter() - t0, 2)})
    return module.get_state(), stats


def warm_start(algo, cfg: RLlibConfig, spec, module_id: str, log=print) -> dict:
    """Fits the learner ``module_id`` of ``algo`` to the teacher and installs the weights
    in its LearnerGroup and (synced from there) every EnvRunner; returns the statistics."""
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE

    start = algo.learner_group.get_weights(module_ids=[module_id])[module_id]
    weights, stats = pretrain_state(cfg, spec, start, log=log)
    # Algorithm.set_state sets the LearnerGroup's module, then syncs every EnvRunner
    # (the local one too) from it.
    algo.set_state({COMPONENT_LEARNER_GROUP: {COMPONENT_LEARNER: {COMPONENT_RL_MODULE: {
        module_id: weights}}}})
    return stats
