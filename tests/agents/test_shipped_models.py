"""The shipped policies keep playing the same moves through every refactor.

``tests/fixtures/shipped_positions.npz`` holds observations and masks from seeded
heuristic games (2 and 4 players) and the actions every shipped policy chose there
(``.zip`` and ``.pt`` alike; ``WEIGHTS_ONLY`` models come as the ``.pt`` alone):
``actions_2p`` / ``actions_4p`` are the first bots' moves,
the first recording, kept for ``models/ppo_*_v2`` (the
same files under their versioned names); ``actions_<model>`` are the later models'.
Record a deliberately retrained model (a new entry of ``MODELS``; the older records are
never touched) with ``python scripts/record_shipped_moves.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import agents

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "shipped_positions.npz"
#: model stem -> (players, the fixture's key of its recorded moves)
MODELS = {
    "models/ppo_2p_v2": (2, "actions_2p"),
    "models/ppo_4p_v2": (4, "actions_4p"),
    "models/ppo_2p": (2, "actions_ppo_2p"),
    "models/ppo_4p": (4, "actions_ppo_4p"),
    "models/ppo_2p_match": (2, "actions_ppo_2p_match", 0, 4),  # layout 0, 4-deal matches
    "models/ppo_3p": (3, "actions_ppo_3p"),
    "models/ppo_5p": (5, "actions_ppo_5p"),
    "models/ppo_6p": (6, "actions_ppo_6p"),
    "models/ppo_7p": (7, "actions_ppo_7p"),
}
#: Models shipped as the weights-only file alone (the student recipe writes no SB3 archive).
WEIGHTS_ONLY = {"models/ppo_3p", "models/ppo_5p", "models/ppo_6p",
                "models/ppo_7p"}
POSITIONS = 300


def suffixes(stem: str) -> tuple[str, ...]:
    """The files a shipped model comes as: its SB3 archive and its export, or the export."""
    return ("pt",) if stem in WEIGHTS_ONLY else ("zip", "pt")


def positions_keys(num_players: int, layout: int = 0, num_deals: int = 1) -> tuple[str, str]:
    """The fixture's keys of the positions' observations and masks at a layout (v1 ones
    come from the same seeded games, shown ``pis_yedili_v1``'s observation) and a match
    length (positions of seeded ``num_deals``-deal matches)."""
    suffix = (f"_v{layout}" if layout else "") + (f"_m{num_deals}" if num_deals > 1 else "")
    return f"obs_{num_players}p{suffix}", f"mask_{num_players}p{suffix}"


def chosen_actions(path: str, num_players: int, obs, masks, num_deals: int = 1) -> np.ndarray:
    """The moves the policy file at ``path`` chooses at the recorded positions."""
    bot = agents.make("ppo", path=path, num_players=num_players, num_deals=num_deals)
    return np.array([bot.act({"observation": o, "action_mask": m})
                     for o, m in zip(obs, masks)], dtype=np.int16)


@pytest.mark.parametrize(("stem", "suffix"),
                         [(stem, suffix) for stem in sorted(MODELS) for suffix in suffixes(stem)])
def test_shipped_models_play_the_recorded_moves(stem, suffix):
    num_players, key, *table = MODELS[stem]
    data = np.load(FIXTURE)
    obs_key, mask_key = positions_keys(num_players, *table)
    obs, masks = data[obs_key], data[mask_key]
    actions = chosen_actions(f"{stem}.{suffix}", num_players, obs, masks, *table[1:])
    np.testing.assert_array_equal(actions, data[key])


def test_recording_adds_a_missing_record_and_keeps_the_others(tmp_path):
    """The recording tool fills in the moves of a model without a record (here the v3
    2-player bot's, removed from a copy), reproducing them exactly, and rewrites no
    other array."""
    import importlib.util
    import sys

    script = FIXTURE.parents[2] / "scripts" / "record_shipped_moves.py"
    spec = importlib.util.spec_from_file_location("record_shipped_moves", script)
    tool = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = tool
    spec.loader.exec_module(tool)
    original = dict(np.load(FIXTURE))
    copy = tmp_path / "positions.npz"
    np.savez_compressed(copy, **{k: v for k, v in original.items() if k != "actions_ppo_2p"})
    assert tool.record(copy, {"models/ppo_2p": MODELS["models/ppo_2p"]}) == ["models/ppo_2p"]
    again = dict(np.load(copy))
    assert sorted(again) == sorted(original)
    for key, value in original.items():
        np.testing.assert_array_equal(again[key], value, err_msg=key)
    assert tool.record(copy, MODELS) == []  # every model has its record: nothing to do
