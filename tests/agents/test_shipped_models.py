"""The shipped policies keep playing the same moves through every refactor.

``tests/fixtures/shipped_positions.npz`` holds observations and masks from seeded
heuristic games (2 and 4 players) and the actions ``models/ppo_2p`` and ``models/ppo_4p``
chose there (``.zip`` and ``.pt`` alike), recorded before the architecture work of
issue 12. Regenerate it only when a model is deliberately retrained:
``python -m tests.agents.test_shipped_models``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

import agents  # noqa: E402
from pis_env import raw_env  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "shipped_positions.npz"
MODELS = {2: "models/ppo_2p", 4: "models/ppo_4p"}
POSITIONS = 300


def record_positions(num_players: int, count: int, seed: int = 0):
    """Observations and masks of every decision in seeded heuristic games."""
    env = raw_env(num_players=num_players)
    bots = [agents.make("heuristic", num_players=num_players, seed=i)
            for i in range(num_players)]
    obs, masks = [], []
    deal = 0
    while len(obs) < count:
        env.reset(seed=seed + deal)
        deal += 1
        while not env.game.deal_over and len(obs) < count:
            o = env.observe(env.agent_selection)
            obs.append(o["observation"].copy())
            masks.append(o["action_mask"].copy())
            env.step(bots[env.possible_agents.index(env.agent_selection)].act(o))
    return np.stack(obs), np.stack(masks)


def chosen_actions(path: str, num_players: int, obs, masks) -> np.ndarray:
    bot = agents.make("ppo", path=path, num_players=num_players)
    return np.array([bot.act({"observation": o, "action_mask": m})
                     for o, m in zip(obs, masks)], dtype=np.int16)


@pytest.mark.parametrize("num_players", sorted(MODELS))
@pytest.mark.parametrize("suffix", ["zip", "pt"])
def test_shipped_models_play_the_recorded_moves(num_players, suffix):
    data = np.load(FIXTURE)
    obs, masks = data[f"obs_{num_players}p"], data[f"mask_{num_players}p"]
    actions = chosen_actions(f"{MODELS[num_players]}.{suffix}", num_players, obs, masks)
    np.testing.assert_array_equal(actions, data[f"actions_{num_players}p"])


def main() -> None:
    arrays = {}
    for n, stem in MODELS.items():
        obs, masks = record_positions(n, POSITIONS)
        zip_actions = chosen_actions(f"{stem}.zip", n, obs, masks)
        assert np.array_equal(zip_actions, chosen_actions(f"{stem}.pt", n, obs, masks))
        arrays.update({f"obs_{n}p": obs, f"mask_{n}p": masks, f"actions_{n}p": zip_actions})
    FIXTURE.parent.mkdir(exist_ok=True)
    np.savez_compressed(FIXTURE, **arrays)
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
