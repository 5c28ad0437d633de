"""The tournament's small pieces that no end-to-end test read (written from mutmut's
survivors in ``agents.tournament``): the printed table's alignment, the worker count off
Linux, the head-to-head panel's colour bar and the figure's title, a spec's kind, the
networks kept per worker and seat, a chunk's arrays, a failing bot's message, the seeds
of reshuffles, the rotations and the pinned seeds."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from agents.tournament import driver, run_tournament  # noqa: E402


@pytest.fixture()
def two():
    return run_tournament(["heuristic", "greedy"], num_players=2, deals=3, seed=2,
                          workers=1, progress=False)


def _block(lines, first):
    """The lines from the first that starts with ``first`` to the next blank one."""
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_the_tables_numbers_are_right_aligned_under_their_headers(two):
    """Every column but the first (the agent) is right-aligned: its header and its
    numbers end at the same character; the first column is left-aligned."""
    lines = two.table().splitlines()
    summary = _block(lines, "agent ")
    header = summary[0]
    end = header.index("seat-deals") + len("seat-deals")
    for row in summary[1:]:
        assert row[end - 1] != " " and row[end] == " ", row
        assert row.split()[1] == "6"
        assert row.startswith(("heuristic ", "greedy "))
    at = next(i for i, line in enumerate(lines) if line.startswith("Head-to-head"))
    h2h = _block(lines[at + 1:], "")
    head = h2h[0]
    ends = [head.index(name) + len(name) for name in ("heuristic", "greedy")]
    for row in h2h[1:]:
        for e in ends:
            assert row[e - 1] != " ", row
        assert row.startswith(("heuristic ", "greedy "))


def test_off_linux_the_default_workers_are_the_cpu_count(monkeypatch):
    monkeypatch.delattr(driver.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(driver.os, "cpu_count", lambda: 3)
    assert driver._cpu_count() == 3
    monkeypatch.setattr(driver.os, "cpu_count", lambda: None)
    assert driver._cpu_count() == 1


def test_the_colour_bar_is_a_narrow_strip_beside_the_head_to_head(two):
    """``fraction=0.046`` of the head-to-head panel for the colour bar, which reads the
    matrix's colour scale (0-100); the title is 10 points whatever matplotlib's default
    font size."""
    with matplotlib.rc_context({"font.size": 14}):
        fig = two.figure()
    try:
        win, charge, h2h, bar = fig.axes
        assert bar.get_position().x0 > h2h.get_position().x1
        ratio = bar.get_position().width / h2h.get_position().width
        assert 0.03 < ratio < 0.1, ratio
        assert bar.get_ylim() == (0.0, 100.0)
        assert fig._suptitle.get_fontsize() == 10
    finally:
        plt.close(fig)


def test_a_specs_kind_is_its_registered_name():
    from agents.heuristic import HeuristicAgent
    from agents.tournament.specs import spec_kind

    assert spec_kind("ppo:models/ppo_2p.zip") == "ppo"
    assert spec_kind("ppo:C:/nets/a.zip?deterministic=0") == "ppo"
    assert spec_kind("search?rollouts=64") == "search"
    assert spec_kind("mypkg.bots:MyBot") == "mypkg.bots:MyBot"
    assert spec_kind(HeuristicAgent) == "class"
    assert spec_kind(HeuristicAgent(num_players=2)) == "instance"


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


def test_reshuffled_stocks_are_seeded_by_the_tournament():
    """With ``empty_stock="reshuffle"`` the reshuffles come from the env's seed, which the
    tournament derives from its own: the same seed plays the same games."""
    runs = [run_tournament(["random", "random"], num_players=2, deals=6, seed=4, workers=1,
                           progress=False, rules={"empty_stock": "reshuffle"})
            for _ in range(2)]
    a, b = (r.table_results[0] for r in runs)
    np.testing.assert_array_equal(a.charges, b.charges)
    np.testing.assert_array_equal(a.decisions, b.decisions)
    assert a.decisions.max() > 60  # long deals: the stock ran out and was reshuffled


def test_rotations_seat_each_lineup_entry_i_at_seat_i_plus_r():
    from agents.tournament.deals import rotations

    lineup = ["a", "b", "c", "d"]
    for r, seats in enumerate(rotations(lineup)):
        for i, who in enumerate(lineup):
            assert seats[(i + r) % 4] == who


def test_the_seeds_of_a_tournament_are_pinned():
    """Every figure in docs/results.md names a ``--seed``: the env and agent seeds it
    stands for must not change (values recorded 2026-12-03)."""
    from agents.tournament.deals import agent_seed, env_seed, make_tables

    assert (env_seed(0, 0), env_seed(3, 5)) == (1641965915, 3632982994)
    assert (agent_seed(0, 0, 0, 0), agent_seed(3, 5, 1, 2)) == (2968811710, 1817021962)
    with pytest.raises(ValueError, match="^a tournament needs at least one agent$"):
        make_tables([], 2)
