"""The held-out heuristics (``agents.heuristic.variants``, registered as ``held_out``):
the heuristic's play with other weights, built by name like every bot."""

from __future__ import annotations

import numpy as np
import pytest

import agents
import pis_env
from agents.heuristic.variants import HELD_OUT


def _moves(bots: dict, positions: int = 300) -> dict[str, np.ndarray]:
    """Each bot's move at the positions with a choice of heuristic-vs-heuristic games."""
    driver = agents.make("heuristic", num_players=2, seed=0)
    out: dict[str, list[int]] = {k: [] for k in bots}
    env = pis_env.env()
    game = 0
    while len(out["heuristic"]) < positions:
        env.reset(seed=500 + game)
        game += 1
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if obs["action_mask"].sum() > 1:
                for k, bot in bots.items():
                    action = bot.act(obs)
                    assert obs["action_mask"][action] == 1, k
                    out[k].append(action)
            env.step(driver.act(obs))
    return {k: np.array(v) for k, v in out.items()}


def test_each_variant_plays_differently_from_the_heuristic():
    moves = _moves({
        "heuristic": agents.make("heuristic", num_players=2, seed=0),
        "loose": agents.make("held_out", num_players=2, seed=0),
        "tight": agents.make("held_out", variant="heuristic_tight", num_players=2, seed=0),
    })
    # an unweighted copy of the heuristic would differ nowhere (the bots are deterministic)
    for variant in ("loose", "tight"):
        assert (moves[variant] != moves["heuristic"]).sum() >= 3, variant
    assert (moves["loose"] != moves["tight"]).sum() >= 3


def test_a_variant_is_named_and_checked():
    assert agents.make("held_out", variant="heuristic_tight").variant == "heuristic_tight"
    assert set(HELD_OUT) == {"heuristic_loose", "heuristic_tight"}
    with pytest.raises(ValueError, match="heuristic_loose, heuristic_tight"):
        agents.make("held_out", variant="heuristic_lose")
