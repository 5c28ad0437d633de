"""The tournament's worker (``agents.tournament.worker``): the observation each seat is
shown, networks kept between deals, the evidence carried between rotations, and the
arrays a chunk returns."""

from __future__ import annotations

import numpy as np

from agents.tournament import record_games, run_tournament
from agents.tournament.worker import carry_opponents, seat_observation

V3 = "ppo:models/ppo_2p.zip?deterministic=0"


def test_a_seat_is_shown_the_layout_its_bot_was_built_for():
    from pis_env import raw_env
    from pis_env.aec_v1 import raw_env as raw_env_v1

    v0, v1 = raw_env(num_players=2), raw_env_v1(num_players=2)
    v0.reset(seed=5)
    v1.reset(seed=5)
    encoders: dict = {}
    for seat in (0, 1):
        own = seat_observation(v0, seat, 0, encoders)
        other = seat_observation(v0, seat, 1, encoders)
        want = v1.observe(v1.possible_agents[seat])
        np.testing.assert_array_equal(own["observation"],
                                      v0.observe(v0.possible_agents[seat])["observation"])
        np.testing.assert_array_equal(other["observation"], want["observation"])
        np.testing.assert_array_equal(other["action_mask"], want["action_mask"])
        assert set(other) == {"observation", "action_mask"}
    assert list(encoders) == [1]  # one encoder per other version, kept


def test_a_network_kept_between_deals_plays_as_a_fresh_one(tmp_path):
    """Networks are built once per worker and seat and reseeded each game; the record,
    which builds every bot afresh from its seed, must replay the same games."""
    result = run_tournament([V3, V3, "random"], num_players=2, deals=3, seed=8, workers=1,
                            progress=False)
    paths = record_games(result, 100, tmp_path)  # raises if a game played differently
    assert len(paths) == 3 * 3 * 2
    again = run_tournament([V3, V3, "random"], num_players=2, deals=3, seed=8, workers=2,
                           progress=False)
    for a, b in zip(result.table_results, again.table_results, strict=True):
        np.testing.assert_array_equal(a.charges, b.charges)


def test_a_chunk_returns_arrays_of_fixed_types():
    result = run_tournament(["greedy", "random"], num_players=3, deals=2, seed=1, workers=1,
                            progress=False)
    tr = result.table_results[0]
    assert (tr.charges.dtype, tr.winners.dtype, tr.reasons.dtype, tr.decisions.dtype) == \
        (np.int32, np.bool_, np.uint8, np.int32)
    assert tr.charges.shape == (2, 3, 3) and tr.decisions.shape == (2, 3)


class Carrier:
    """A bot that carries what it learnt of each opponent (by relative seat)."""

    carry_posterior = True

    def __init__(self, prior):
        self.prior = list(prior)
        self.given = None

    def opponent_prior(self):
        return list(self.prior)

    def set_opponent_prior(self, prior):
        self.given = prior


class Plain:
    pass


def test_evidence_about_each_opponent_is_kept_by_label_and_given_back():
    a, c = Carrier(["a-self", "a-of-b", "a-of-c"]), Carrier(["c-self", "c-of-a", "c-of-b"])
    carried: dict = {}
    carry_opponents([a, Plain(), c], ["a", "b", "c"], carried, into=False)
    assert carried == {("a", "b"): "a-of-b", ("a", "c"): "a-of-c",
                       ("c", "a"): "c-of-a", ("c", "b"): "c-of-b"}
    # the next rotation: other seats, and only some evidence about them
    x, y = Carrier(["x0", "x1", "x2"]), Carrier(["y0", "y1", "y2"])
    carry_opponents([Plain(), x, y], ["b", "a", "c"], {("a", "c"): "kept"}, into=True)
    assert x.given == ["x0", "kept", "x2"]   # seat 1 ("a"): its left is "c", then "b"
    assert y.given == ["y0", "y1", "y2"]     # nothing carried about its opponents
