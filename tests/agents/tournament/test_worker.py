"""The tournament's worker (``agents.tournament.worker``): the observation each seat is
shown, networks kept between deals (one per worker and seat), the evidence carried between
rotations, the arrays a chunk returns and their types, and a failing bot named with its
game."""

from __future__ import annotations

import numpy as np
import pytest

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


class _Built:
    def __init__(self):
        self.seeds = []

    def reset(self, seed=None):
        self.seeds.append(seed)


def test_a_network_seat_is_built_once_per_worker_and_seat(monkeypatch):
    """``ppo`` seats are kept between games, one per (spec, seat), built with the table's
    size, seed and deals and reseeded every game; other bots are built every game."""
    from agents.tournament import worker

    built = []

    def build_seat(spec, n, seed, num_deals):
        built.append((spec, n, seed, num_deals))
        return _Built()

    monkeypatch.setattr(worker, "build_seat", build_seat)
    worker.init_worker({"rules": {"num_players": 2, "num_deals": 4}})
    net = "ppo:models/ppo_2p.zip"
    first = worker._get_agent(net, 2, 5, 0)
    assert worker._get_agent(net, 2, 6, 0) is first
    other = worker._get_agent(net, 2, 7, 1)
    assert other is not first and first.seeds == [5, 6] and other.seeds == [7]
    worker._get_agent("heuristic", 2, 8, 0)
    worker._get_agent("heuristic", 2, 9, 0)
    assert built == [(net, 2, 5, 4), (net, 2, 7, 4), ("heuristic", 2, 8, 4),
                     ("heuristic", 2, 9, 4)]
    worker.init_worker({"rules": {"num_players": 2}})
    worker._get_agent("heuristic", 2, 1, 0)
    assert built[-1] == ("heuristic", 2, 1, 1)  # no num_deals: one deal


def _config(specs, n=2, **rules):
    from agents.tournament.deals import make_tables, rotations

    lineup = make_tables(list(specs), n)[0]
    return {"rules": {"num_players": n, **rules}, "seed": 3,
            "seatings": [rotations(lineup)], "specs": {s: s for s in specs}}


@pytest.mark.parametrize("rules", [{}, {"num_deals": 2}])
def test_a_chunk_played_in_the_worker_has_fixed_types(rules):
    from agents.tournament import worker

    worker.init_worker(_config(["greedy", "random"], **rules))
    t, start, charges, winners, reasons, decisions = worker.play_chunk((0, 1, 3))
    assert (t, start) == (0, 1)
    assert (charges.dtype, winners.dtype, reasons.dtype, decisions.dtype) == \
        (np.int32, np.bool_, np.uint8, np.int32)
    assert charges.shape == (2, 2, 2) and decisions.shape == (2, 2)


class _Tired:
    """A bot that fails on its third move."""

    def __init__(self, num_players=2, seed=None, **_):
        self.moves = 0

    def reset(self, seed=None):
        self.moves = 0

    def act(self, observation):
        self.moves += 1
        if self.moves == 3:
            raise KeyError("tired")
        return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.mark.parametrize("rules, where", [({}, r"table 0, deal 0, rotation 0: KeyError"),
                                          ({"num_deals": 2},
                                           r"table 0, match 0, deal \d+, rotation 0: KeyError")])
def test_a_failing_bot_is_named_with_its_game(rules, where):
    from agents.tournament import worker

    spec = f"{__name__}:_Tired"
    worker.init_worker(_config([spec, "random"], **rules))
    with pytest.raises(RuntimeError, match=where):
        worker.play_chunk((0, 0, 1))
