"""The shipped belief models (``models/belief_2p.pt``, ``belief_4p.pt``) keep giving the
same probabilities through every refactor of the features they read.

The models were trained on ``agents.belief.tracker.pair_features``; a change to one
feature (an index, a scale, a rule) would hand them inputs they never saw, and the
``search?determinize=belief`` bot would quietly play worse. So the features, the network
and the scaling are pinned together: ``tests/fixtures/shipped_beliefs.npz`` holds the
probabilities the shipped models gave at every decision of seat 0 in seeded heuristic
games, recorded with ``python scripts/record_shipped_beliefs.py`` (only when a belief
model is deliberately retrained)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import agents
from agents.belief import tracker as tracker_module
from agents.belief.tracker import DealTracker, load_model
from pis_env import decode_observation, pis_yedili_v0

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "shipped_beliefs.npz"
DECISIONS = 60


def beliefs_in_play(num_players: int, decisions: int = DECISIONS, seed: int = 0):
    """The shipped model's probabilities [decisions, n-1, 52] at seat 0's decisions of
    seeded heuristic games, the tracker fed as the search bot feeds it."""
    model = load_model(num_players)
    bots = [agents.make("heuristic", num_players=num_players, seed=i)
            for i in range(num_players)]
    env = pis_yedili_v0.raw_env(num_players=num_players)
    tracker = DealTracker(num_players)
    out, deal = [], 0
    while len(out) < decisions:
        env.reset(seed=seed + deal)
        deal += 1
        tracker.reset()
        while not env.game.deal_over and len(out) < decisions:
            seat = env.possible_agents.index(env.agent_selection)
            obs = env.observe(env.agent_selection)
            action = bots[seat].act(obs)
            if seat == 0:
                decoded = decode_observation(obs["observation"], num_players)
                tracker.observe(decoded)
                out.append(model(decoded, tracker))
                tracker.record(action)
            env.step(action)
    return np.stack(out)


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_shipped_belief_gives_the_recorded_probabilities(num_players, monkeypatch):
    monkeypatch.setattr(tracker_module, "_MODELS", {})  # read from the file, not the cache
    want = np.load(FIXTURE)[f"belief_{num_players}p"]
    got = beliefs_in_play(num_players)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # the pin is worth something only if the probabilities move with the play
    assert np.abs(np.diff(got, axis=0)).max() > 0.1


def test_a_belief_file_is_read_whole_and_another_kind_is_refused(tmp_path):
    from agents.belief.tracker import FEATURE_NAMES, BeliefModel, model_path
    from agents.common.weights_file import load_weights_file, save_weights_file

    shipped = model_path(2)
    model = BeliefModel.load(shipped)
    data = load_weights_file(shipped)
    assert model.meta["kind"] == "belief"
    assert model.meta["features"] == ",".join(FEATURE_NAMES)
    assert len(model.weights) == int(data["layers"]) >= 2
    assert all(w.dtype == np.float32 and b.dtype == np.float32 for w, b in model.weights)
    assert model.mean.dtype == np.float32 and model.std.dtype == np.float32
    for i, (w, b) in enumerate(model.weights):
        np.testing.assert_array_equal(w, data[f"w{i}"])
        np.testing.assert_array_equal(b, data[f"b{i}"])
    np.testing.assert_array_equal(model.mean, data["mean"])
    np.testing.assert_array_equal(model.std, data["std"])
    assert BeliefModel(model.weights, model.mean, model.std).meta == {}
    wide = BeliefModel([(w.astype(np.float64), b.astype(np.float64)) for w, b in model.weights],
                       model.mean.astype(np.float64), model.std.astype(np.float64))
    assert all(w.dtype == np.float32 and b.dtype == np.float32 for w, b in wide.weights)
    assert wide.mean.dtype == np.float32 and wide.std.dtype == np.float32
    payload = {k: v for k, v in data.items() if k != "sha256"}
    for change in ({"kind": "policy"}, {"features": "hand,top"}):
        path = save_weights_file(dict(payload, **change), tmp_path / "other.pt")
        with pytest.raises(ValueError) as e:
            BeliefModel.load(path)
        assert str(e.value) == f"{path}: not a belief model with this module's features"


def test_the_belief_gives_no_mass_to_a_card_the_opponent_cannot_hold():
    """A hard void (``DealTracker.void``) is a card the opponent cannot hold: the model's
    belief there is 0, the hand size is still met, and without the void it is not 0."""
    env = pis_yedili_v0.raw_env(num_players=2)
    env.reset(seed=4)
    obs = env.observe(env.agent_selection)
    decoded = decode_observation(obs["observation"], 2)
    tracker = DealTracker(2)
    tracker.observe(decoded)
    model = load_model(2)
    free = model(decoded, tracker)
    unseen = np.flatnonzero(free[0] > 0)
    voided = unseen[:3]
    tracker.void[1, voided] = True
    held = model(decoded, tracker)
    assert (free[0, voided] > 0).all() and (held[0, voided] == 0).all()
    np.testing.assert_allclose(held[0].sum(), decoded["hand_sizes"][1], rtol=1e-6)
