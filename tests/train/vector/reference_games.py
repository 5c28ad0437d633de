"""The reference side of the batched adapters' differential tests: the same stacked deals
played one by one through ``pis_env.wrappers.SingleAgentEnv`` (the independent path), with
the same deterministic opponents and learner actions. ``test_batched_vec_env`` (SB3) and
``test_vector_env`` (gymnasium) compare their adapter with these games step by step."""

from __future__ import annotations

import numpy as np

from agents.greedy import GreedyAgent
from pis_env import pis_yedili_v1
from pis_env.wrappers import SingleAgentEnv

#: The single-agent view of each env version (``PisYedili-v0``, ``PisYedili-Events-v0``).
SINGLE_AGENT_ENVS = {0: SingleAgentEnv, 1: pis_yedili_v1.SingleAgentEnv}


def pick(masks: np.ndarray, step: int) -> np.ndarray:
    """A deterministic legal action per row that varies with the row and the step (0 for
    a row with no legal action: a game showing its terminal observation)."""
    out = np.zeros(len(masks), dtype=np.int64)
    for i, m in enumerate(masks):
        legal = np.flatnonzero(m)
        if legal.size:
            out[i] = legal[(7 * step + 3 * i) % legal.size]
    return out


def lowest_legal(obs, masks):
    """A batched opponent policy: the lowest legal action of every row."""
    return np.asarray(masks).argmax(axis=1)


class LowestAgent:
    """``lowest_legal`` as an agent of the reference env."""

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def stacked_deals(num_envs: int, seed: int, num_players: int, num_deals: int):
    """Decks ``[num_envs, num_deals, 52]`` and dealers ``[num_envs]`` for a seed."""
    rng = np.random.default_rng(seed)
    decks = np.stack([np.stack([rng.permutation(52) for _ in range(num_deals)])
                      for _ in range(num_envs)])
    return decks, rng.integers(num_players, size=num_envs)


def step_reference(ref: SingleAgentEnv, action: int | None, skip_forced: bool):
    """One learner step of the reference (``None``: none, only the forced moves that follow
    a reset), then, with ``skip_forced``, every forced learner move after it, rewards
    summed, as the batched adapters do."""
    o = info = None
    r, term, trunc = 0.0, False, False
    if action is not None:
        o, r, term, trunc, info = ref.step(int(action))
    while skip_forced and not (term or trunc) and ref.action_masks().sum() == 1:
        o, rr, term, trunc, info = ref.step(int(np.flatnonzero(ref.action_masks())[0]))
        r += rr
    return o, r, term, trunc, info


def reference_games(kinds: np.ndarray, decks, dealers, *, seat: int, skip_forced: bool,
                    version: int = 0, **options):
    """The reference env of every game, its opponents seated clockwise from the learner's
    left as the adapter's mix drew them (``kinds[b, seat] == 1``: greedy, else lowest
    legal). Returns ``(refs, first_obs, active)``: ``refs[b] = [env, reward carried to the
    first step]``; a game whose match ended in forced moves before the learner's first
    decision is inactive (the adapter replaced it: nothing to compare). ``version``: the
    env version whose single-agent view plays (``SINGLE_AGENT_ENVS``)."""
    n = options.get("num_players", 2)
    deals = options.get("num_deals", 1)
    refs, first_obs, active = [], [], np.ones(len(decks), dtype=bool)
    for b in range(len(decks)):
        opps = [GreedyAgent(n, deals) if kinds[b, (seat + k) % n] == 1 else LowestAgent()
                for k in range(1, n)]
        ref = SINGLE_AGENT_ENVS[version](opponents=opps, learner_seat=seat, **options)
        o, _ = ref.reset(options={"deck": decks[b].tolist(), "dealer": int(dealers[b])})
        forced_o, r, term, _, _ = step_reference(ref, None, skip_forced)
        refs.append([ref, r])
        first_obs.append(o if forced_o is None else forced_o)
        active[b] = not term
    return refs, first_obs, active
