"""How often an exported policy plays its teacher's move, and what chance would give.

The imitation tests compare a policy file (``agents.make("ppo", path=...)``) with the
teacher on positions of teacher-vs-teacher games it never trained on, and compare that
agreement with uniform play among the legal moves on those same positions."""

from __future__ import annotations

import numpy as np

import agents
import pis_env

#: The AEC env of each observation layout.
AEC_ENVS = {0: pis_env.pis_yedili_v0.env, 1: pis_env.pis_yedili_v1.env}


def agreement_with_teacher(path, teacher: str = "heuristic", positions: int = 300,
                           seed: int = 1000, env_version: int = 0,
                           **rules) -> tuple[float, float]:
    """``(agreement, chance)`` over the first ``positions`` decisions with a choice (2+
    legal actions) of ``teacher``-vs-``teacher`` games at the table of ``rules``
    (``pis_yedili_v<env_version>``'s observations):
    the share where the policy file plays the teacher's move, and the mean of
    1/|legal| (uniform play's expected agreement) on the same decisions."""
    bot = agents.make("ppo", path=str(path), **rules)
    coach = agents.make(teacher, seed=0, **rules)
    env = AEC_ENVS[env_version](**rules)
    same, legal_counts = 0, []
    game = 0
    while len(legal_counts) < positions:
        env.reset(seed=seed + game)
        game += 1
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = coach.act(obs)
            legal = int(obs["action_mask"].sum())
            if legal > 1 and len(legal_counts) < positions:
                legal_counts.append(legal)
                same += int(bot.act(obs) == action)
            env.step(action)
    return same / positions, float(np.mean(1.0 / np.asarray(legal_counts)))
