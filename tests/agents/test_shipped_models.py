"""The shipped policies keep playing the same moves through every refactor.

``tests/fixtures/shipped_positions.npz`` holds observations and masks from seeded
heuristic games (2 and 4 players) and the actions every shipped policy chose there
(``.zip`` and ``.pt`` alike): ``actions_2p`` / ``actions_4p`` are the first bots' moves,
recorded before the architecture work of issue 12 and kept for ``models/ppo_*_v2`` (the
same files under their versioned names); ``actions_<model>`` are the later models'.
Record a deliberately retrained model (without touching the older records) with
``python -m tests.agents.test_shipped_models``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import agents
from pis_env import raw_env

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "shipped_positions.npz"
#: model stem -> (players, the fixture's key of its recorded moves)
MODELS = {
    "models/ppo_2p_v2": (2, "actions_2p"),
    "models/ppo_4p_v2": (4, "actions_4p"),
    "models/ppo_2p": (2, "actions_ppo_2p"),
    "models/ppo_4p": (4, "actions_ppo_4p"),
}
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


@pytest.mark.parametrize("stem", sorted(MODELS))
@pytest.mark.parametrize("suffix", ["zip", "pt"])
def test_shipped_models_play_the_recorded_moves(stem, suffix):
    num_players, key = MODELS[stem]
    data = np.load(FIXTURE)
    obs, masks = data[f"obs_{num_players}p"], data[f"mask_{num_players}p"]
    actions = chosen_actions(f"{stem}.{suffix}", num_players, obs, masks)
    np.testing.assert_array_equal(actions, data[key])


def main() -> None:
    """Adds the moves of every model without a record; keeps the existing records."""
    arrays = dict(np.load(FIXTURE)) if FIXTURE.exists() else {}
    for stem, (n, key) in MODELS.items():
        if f"obs_{n}p" not in arrays:
            arrays[f"obs_{n}p"], arrays[f"mask_{n}p"] = record_positions(n, POSITIONS)
        if key in arrays:
            continue
        obs, masks = arrays[f"obs_{n}p"], arrays[f"mask_{n}p"]
        zip_actions = chosen_actions(f"{stem}.zip", n, obs, masks)
        assert np.array_equal(zip_actions, chosen_actions(f"{stem}.pt", n, obs, masks))
        arrays[key] = zip_actions
        print(f"recorded {stem}")
    FIXTURE.parent.mkdir(exist_ok=True)
    np.savez_compressed(FIXTURE, **arrays)
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size / 1e3:.0f} kB)")


if __name__ == "__main__":
    main()
