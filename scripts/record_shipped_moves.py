"""Record the moves of a newly shipped policy at the fixed positions of
``tests/fixtures/shipped_positions.npz``, which ``tests/agents/test_shipped_models.py``
then holds every later version of the code to.

    python scripts/record_shipped_moves.py

Only a model of ``MODELS`` (in the test file) without a record is recorded: existing
records are never rewritten, so the moves of the shipped v2 and v3 bots stay what they
were when those bots were made. A deliberately retrained model gets a new entry there
(a new name and key), not a new recording under an old key. The positions themselves are
recorded once per table size, from seeded heuristic games.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for ``tests``

import numpy as np  # noqa: E402

import agents  # noqa: E402
from pis_env import pis_yedili_v0, pis_yedili_v1  # noqa: E402
from tests.agents.test_shipped_models import (  # noqa: E402
    FIXTURE,
    MODELS,
    POSITIONS,
    chosen_actions,
    positions_keys,
    suffixes,
)


def record_positions(num_players: int, count: int, seed: int = 0, layout: int = 0,
                     num_deals: int = 1):
    """Observations (of ``pis_yedili_v<layout>``) and masks of every decision in seeded
    heuristic games (matches of ``num_deals`` deals)."""
    env = (pis_yedili_v1 if layout else pis_yedili_v0).raw_env(num_players=num_players,
                                                               num_deals=num_deals)
    bots = [agents.make("heuristic", num_players=num_players, num_deals=num_deals, seed=i)
            for i in range(num_players)]
    obs, masks = [], []
    deal = 0
    while len(obs) < count:
        env.reset(seed=seed + deal)
        deal += 1
        while not env.game.match_over and len(obs) < count:
            o = env.observe(env.agent_selection)
            obs.append(o["observation"].copy())
            masks.append(o["action_mask"].copy())
            env.step(bots[env.possible_agents.index(env.agent_selection)].act(o))
    return np.stack(obs), np.stack(masks)


def record(fixture: Path, models: dict) -> list[str]:
    """Adds to ``fixture`` the moves of every model of ``models`` (stem -> (players,
    key[, observation layout[, match length]])) that has no record there, its ``.zip``
    and ``.pt`` agreeing (the ``.pt`` alone for ``WEIGHTS_ONLY`` models); returns the
    stems recorded. Existing arrays are kept as they are; the file is rewritten only when
    something was added."""
    fixture = Path(fixture)
    arrays = dict(np.load(fixture)) if fixture.exists() else {}
    recorded = []
    for stem, (n, key, *table) in models.items():
        if key in arrays:
            continue
        obs_key, mask_key = positions_keys(n, *table)
        layout, num_deals = (list(table) + [0, 1][len(table):])[:2]
        if obs_key not in arrays:
            arrays[obs_key], arrays[mask_key] = record_positions(n, POSITIONS, layout=layout,
                                                                 num_deals=num_deals)
        obs, masks = arrays[obs_key], arrays[mask_key]
        first, *others = [chosen_actions(str(ROOT / f"{stem}.{suffix}"), n, obs, masks,
                                         num_deals) for suffix in suffixes(stem)]
        if any(not np.array_equal(first, other) for other in others):
            raise SystemExit(f"{stem}: the .zip and the .pt choose different moves")
        arrays[key] = first
        recorded.append(stem)
    if recorded:
        fixture.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(fixture, **arrays)
    return recorded


def main() -> int:
    recorded = record(FIXTURE, MODELS)
    for stem in recorded:
        print(f"recorded {stem}")
    print(f"{FIXTURE}: {len(recorded)} model(s) recorded; existing records kept")
    return 0


if __name__ == "__main__":
    sys.exit(main())
