"""The tournament runner and its statistics (agents/tournament/, agents/tournament/stats.py),
and the pool workers' signal handlers and config."""

from __future__ import annotations

import csv
import json
import math
import signal

import numpy as np
import pytest

from agents.base import Agent, legal_actions
from agents.tournament import (
    agent_labels,
    agent_seed,
    deal_setup,
    main,
    make_tables,
    parse_spec,
    rotations,
    run_tournament,
)
from agents.tournament.stats import (
    mean_ci,
    openskill_ratings,
    ranks_from_scores,
    wilson_interval,
    z_value,
)
from agents.tournament.worker import WORKER_STATE, init_pool_worker, reset_worker_signals
from pis_env import GameState, Rules

MOD = __name__  # how this module is imported, for "module:Class" agent specs


class FirstLegal(Agent):
    """Deterministic: always the lowest legal action id."""

    def __init__(self, num_players=2, num_deals=1, seed=None, tag=""):
        super().__init__(num_players=num_players, num_deals=num_deals, seed=seed)
        self.tag = tag

    def act(self, observation):
        return int(legal_actions(observation)[0])


RECORDS: list[tuple[str, str, int, tuple[int, ...] | None]] = []


class Recorder(FirstLegal):
    """Records its construction seed and the hand it holds at its first decision."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.first = True
        RECORDS.append(("built", self.tag, self.seed, None))

    def act(self, observation):
        if self.first:
            self.first = False
            RECORDS.append(("hand", self.tag, self.seed, tuple(self.decode(observation)["hand"])))
        return super().act(observation)


class Cheater(Agent):
    def act(self, observation):
        return 57 if not observation["action_mask"][57] else 56  # pass before drawing


# ---------------------------------------------------------------------------- stats
def test_wilson_known_values():
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)
    cases = {
        (5, 10): (0.2366, 0.7634),
        (0, 10): (0.0, 0.2775),
        (10, 10): (0.7225, 1.0),
        (10, 100): (0.0552, 0.1744),
        (50, 100): (0.4038, 0.5962),
        (1, 2): (0.0945, 0.9055),
    }
    for (x, n), (lo, hi) in cases.items():
        got = wilson_interval(x, n)
        assert got == pytest.approx((lo, hi), abs=1e-4), (x, n, got)
    # 99% is wider; no trials means nothing is known; a fractional count works.
    lo99, hi99 = wilson_interval(5, 10, 0.99)
    assert lo99 < 0.2366 and hi99 > 0.7634
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(2.5, 5)
    assert lo < 0.5 < hi and hi - 0.5 == pytest.approx(0.5 - lo)
    with pytest.raises(ValueError, match=r"need 0 <= successes <= trials, got 6/5"):
        wilson_interval(6, 5)
    with pytest.raises(ValueError, match=r"confidence must be in \(0, 1\), got 1.5"):
        z_value(1.5)


def test_mean_ci():
    mean, lo, hi = mean_ci([1, 2, 3, 4])
    half = 1.959964 * math.sqrt(5 / 3) / 2  # s = sqrt(5/3), n = 4
    assert mean == 2.5
    assert (lo, hi) == pytest.approx((2.5 - half, 2.5 + half), abs=1e-5)
    assert mean_ci(np.full(10, 7.0)) == (7.0, 7.0, 7.0)
    m, lo, hi = mean_ci([3.0])
    assert m == 3.0 and math.isnan(lo) and math.isnan(hi)
    assert all(math.isnan(v) for v in mean_ci([]))


def test_ranks_and_openskill():
    assert ranks_from_scores([0, 30, 0, 12]) == [0, 3, 0, 2]
    games = [(["a", "b", "c"], [0, 1, 2])] * 20 + [(["b", "c"], [0, 0])]
    r1 = openskill_ratings(games, players=["a", "b", "c", "d"])
    r2 = openskill_ratings(games)
    assert r1["a"].mu > r1["b"].mu > r1["c"].mu
    assert r1["a"].ordinal == pytest.approx(r1["a"].mu - 3 * r1["a"].sigma)
    assert r1["d"].mu == pytest.approx(25.0)  # listed but never played
    assert r2["a"] == r1["a"]  # deterministic
    with pytest.raises(ValueError, match="a player appears twice in one game"):
        openskill_ratings([(["a", "a"], [0, 1])])


def test_openskill_every_game_counts():
    """A bot that wins 54% of 4,000 games in a random order is rated above its opponent
    (skills are static: no drift towards the last games). Seed 4's order put the winner
    below the loser with OpenSkill's default dynamics (mu difference -0.44 vs +0.68)."""
    for seed in (0, 4, 6):
        wins = np.random.default_rng(seed).permutation(np.arange(4000) < 2160)
        r = openskill_ratings([(["a", "b"], [0, 1] if w else [1, 0]) for w in wins])
        assert r["a"].mu - r["b"].mu > 0.3
        assert r["a"].sigma < 1.0


# ---------------------------------------------------------------------------- seating
def test_tables():
    assert make_tables(["a", "b"], 2) == [["a", "b"]]
    assert make_tables(["a", "b", "c"], 2) == [["a", "b"], ["a", "c"], ["b", "c"]]
    assert len(make_tables(list("abcde"), 3)) == 10
    assert make_tables(["a", "b"], 4) == [["a", "b", "b", "b"]]
    assert make_tables(["a", "b", "c"], 5) == [["a", "b", "c", "b", "c"]]
    assert make_tables(["a"], 3) == [["a", "a", "a"]]
    with pytest.raises(ValueError, match="needs at least one agent"):
        make_tables([], 2)


def test_rotations_put_everyone_in_every_seat():
    lineup = ["a", "b", "c", "d"]
    rots = rotations(lineup)
    assert rots[0] == lineup
    for agent in lineup:
        assert sorted(r.index(agent) for r in rots) == [0, 1, 2, 3]


def test_specs_and_labels():
    assert parse_spec("heuristic") == ("heuristic", {})
    assert parse_spec("mc?samples=8&greedy=true&name=x") == (
        "mc", {"samples": 8, "greedy": True, "name": "x"})
    assert parse_spec("ppo:models/a.zip") == ("ppo:models/a.zip", {})
    with pytest.raises(ValueError, match=r"'mc\?samples': expected key=value after '\?'"):
        parse_spec("mc?samples")
    assert agent_labels(["random", "greedy", "random"]) == ["random#1", "greedy", "random#2"]


def test_deals_are_seeded():
    deck, dealer = deal_setup(0, 5, 3)
    assert sorted(deck) == list(range(52)) and 0 <= dealer < 3
    assert deal_setup(0, 5, 3) == (deck, dealer)
    assert deal_setup(0, 6, 3)[0] != deck and deal_setup(1, 5, 3)[0] != deck


def test_every_agent_holds_every_hand():
    """Duplicate seating: under the rotations each agent sits in every seat of every deal,
    and a seat's hand is the same whoever holds it."""
    RECORDS.clear()
    n, deals, seed = 3, 4, 11
    specs = [f"{MOD}:Recorder?tag={t}" for t in "abc"]
    run_tournament(specs, num_players=n, deals=deals, seed=seed, workers=1, progress=False)
    where = {agent_seed(seed, d, r, s): (d, r, s)
             for d in range(deals) for r in range(n) for s in range(n)}
    seats = {}  # (tag, deal) -> seats held over the rotations
    for kind, tag, aseed, hand in RECORDS:
        if aseed is None:  # the spec check before the run
            continue
        d, r, s = where[aseed]
        if kind == "built":
            seats.setdefault((tag, d), []).append(s)
            continue
        deck, dealer = deal_setup(seed, d, n)
        dealt = GameState(Rules(num_players=n), deck=deck, dealer=dealer).hands[s]
        assert hand == tuple(c for c in range(52) if dealt >> c & 1), (tag, d, r, s)
    assert len(seats) == 3 * deals
    assert all(sorted(v) == [0, 1, 2] for v in seats.values())


def test_identical_deterministic_agents_score_identically():
    """Two copies of one deterministic policy play mirrored duplicate deals: the same
    charges, exactly half the wins each."""
    a, b = f"{MOD}:FirstLegal?tag=a", f"{MOD}:FirstLegal?tag=b"
    res = run_tournament([a, b], deals=30, seed=3, workers=1, progress=False)
    sa, sb = res.stats[a], res.stats[b]
    assert sa.win_rate == sb.win_rate == 0.5
    assert sa.mean_charge == sb.mean_charge
    tr = res.table_results[0]
    assert np.array_equal(tr.charges[:, 0, :], tr.charges[:, 1, :])
    assert res.head_to_head[a][b].rate == 0.5


# ---------------------------------------------------------------------------- runs
def test_same_results_whatever_the_workers():
    agents = ["random", f"{MOD}:FirstLegal", "random"]
    one = run_tournament(agents, deals=40, seed=5, workers=1, progress=False)
    two = run_tournament(agents, deals=40, seed=5, workers=2, progress=False)
    assert two.workers == 2
    assert len(one.table_results) == 3
    for t1, t2 in zip(one.table_results, two.table_results):
        assert t1.seating == t2.seating
        for key in ("charges", "winners", "reasons", "decisions"):
            assert np.array_equal(getattr(t1, key), getattr(t2, key))
    d1, d2 = one.to_dict(), two.to_dict()
    for d in (d1, d2):
        d.pop("elapsed_s"), d.pop("workers")
    assert d1 == d2
    # a different seed gives different deals
    other = run_tournament(agents, deals=40, seed=6, workers=1, progress=False)
    assert not np.array_equal(other.table_results[0].charges, one.table_results[0].charges)


def test_random_against_random_is_even():
    res = run_tournament(["random", "random"], deals=300, seed=0, workers=1, progress=False)
    for s in res.stats.values():
        assert s.games == 600
        assert s.win_low < 0.5 < s.win_high
        assert s.charge_low < s.mean_charge < s.charge_high
    rates = [s.win_rate for s in res.stats.values()]
    assert sum(rates) == pytest.approx(1.0)  # the seats' win shares add up to 1
    m = res.h2h_matrix()
    assert math.isnan(m[0, 0]) and m[0, 1] + m[1, 0] == pytest.approx(1.0)


def test_fewer_agents_than_seats_and_table_output(tmp_path):
    first = f"{MOD}:FirstLegal"
    res = run_tournament([first, "random"], num_players=3, deals=12, seed=1, workers=1,
                         progress=False)
    assert res.tables == [[first, "random", "random"]]
    assert res.stats[first].games == 12 * 3 and res.stats["random"].games == 12 * 3 * 2
    total = res.stats[first].wins + res.stats["random"].wins
    assert total == pytest.approx(12 * 3)  # one win per played deal
    text = res.table()
    for needle in ("win rate", "95% CI", "mean charge", "OpenSkill", "Head-to-head",
                   first, "random", "12 duplicate deals", "3 players"):
        assert needle in text
    paths = res.save(tmp_path / "out")
    assert all(p.exists() and p.stat().st_size > 0 for p in paths)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert data["stats"]["random"]["games"] == 72 and data["tables"] == res.tables
    with open(tmp_path / "out" / "summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["label"] for r in rows} == {first, "random"}
    with open(tmp_path / "out" / "deals.csv") as f:
        assert sum(1 for _ in f) == 1 + 12 * 3 * 3
    assert (tmp_path / "out" / "tournament.png").read_bytes()[:4] == b"\x89PNG"


def test_explicit_tables_rules_and_truncation(tmp_path):
    res = run_tournament([], deals=6, seed=2, workers=1, progress=False,
                         rules={"seven_penalty": "double", "num_players": 3},
                         tables=[["random", "random", f"{MOD}:FirstLegal"]])
    assert res.rules["seven_penalty"] == "double" and res.num_players == 3
    assert "seven_penalty=double" in res.table()
    yaml_path = tmp_path / "rules.yaml"
    yaml_path.write_text("draw_rule: one\nmax_turns: 4\n")
    res = run_tournament(["random", "random"], deals=10, seed=0, rules=str(yaml_path),
                         workers=1, progress=False)
    assert res.rules["draw_rule"] == "one"
    assert res.truncated == 20 and all(s.games == 0 for s in res.stats.values())
    with pytest.raises(ValueError, match=r"num_deals=2, but the table plays 4-deal matches"):
        run_tournament(["random?num_deals=2"], deals=2, rules={"num_deals": 4}, progress=False)
    with pytest.raises(ValueError, match="conflicts"):
        run_tournament(["random"], num_players=3, rules={"num_players": 4}, progress=False)
    with pytest.raises(ValueError, match="known agents"):
        run_tournament(["nope", "random"], deals=1, workers=1, progress=False)
    with pytest.raises(ValueError, match="tag"):
        run_tournament(["random?tag=x"], deals=1, workers=1, progress=False)
    with pytest.raises(ValueError, match="seats"):
        run_tournament(["random"], deals=1, tables=[["random"] * 3], progress=False)


def test_illegal_moves_are_reported():
    with pytest.raises(RuntimeError, match="Cheater"):
        run_tournament([f"{MOD}:Cheater", "random"], deals=2, workers=1, progress=False)


def test_cli(tmp_path, capsys):
    out = tmp_path / "t"
    rc = main(["--agents", "random,random", "--deals", "8", "--workers", "1", "--out",
               str(out), "--no-progress", "--option", "seven_penalty=double"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "random#1" in printed and "Head-to-head" in printed
    assert (out / "summary.csv").exists() and (out / "tournament.png").exists()
    assert json.loads((out / "results.json").read_text())["rules"]["seven_penalty"] == "double"
    assert main(["--agents", "random", "--option", "bogus=1", "--no-save"]) == 2
    assert "bogus" in capsys.readouterr().err
    modes = {p.name: p.stat().st_mode & 0o777 for p in out.iterdir()}
    assert set(modes.values()) == {0o666 & ~_umask()}, modes  # 0644 under the usual umask


def _umask() -> int:
    import os

    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("bot", ["greedy", "heuristic"])
def test_baseline_bots_play_in_tournaments(bot):
    res = run_tournament([bot, "random"], num_players=3, deals=4, seed=0, workers=1,
                         progress=False)
    assert res.stats[bot].games == 12


# ---------------------------------------------------------------------------- hardening
def test_workers_must_be_at_least_one(capsys):
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="workers"):
            run_tournament(["random", "random"], deals=1, workers=bad, progress=False)
    for bad in ("0", "-1", "x"):
        with pytest.raises(SystemExit) as e:
            main(["--agents", "random", "--workers", bad, "--no-save"])
        assert e.value.code == 2
        assert "--workers" in capsys.readouterr().err


def test_out_is_checked_before_any_game(tmp_path, capsys, monkeypatch):
    import agents.tournament.cli as tournament_cli

    def no_games(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(tournament_cli, "run_tournament", no_games)
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    for out in (a_file, a_file / "sub"):
        assert main(["--agents", "random", "--out", str(out), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert "--out" in err and "not a folder" in err and len(err.splitlines()) == 1


def _one_line_error(capsys, argv, cli=main) -> str:
    assert cli(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert ": error: " in err
    return err


def test_cli_malformed_yaml_is_a_one_line_error(tmp_path, capsys):
    from agents.ui.play import main as play_main

    bad = tmp_path / "bad.yaml"
    bad.write_text("seven_penalty: add\ndraw_rule: [one\nnominate: any\n")
    for cli, argv in ((main, ["--agents", "random", "--no-save"]),
                      (play_main, ["--opponents", "random"])):
        err = _one_line_error(capsys, [*argv, "--rules", str(bad)], cli)
        assert str(bad) in err and "line" in err or f"{bad}:" in err
    err = _one_line_error(capsys, ["--agents", "random", "--no-save", "--option",
                                   "draw_rule=[x"])
    assert "draw_rule=[x" in err and "line 1" in err
    err = _one_line_error(capsys, ["--agents", "random", "--no-save", "--option",
                                   "draw_rule=bogus"])
    assert "bogus" in err
    err = _one_line_error(capsys, ["--agents", "mc?samples=[2", "--no-save"])
    assert "samples=[2" in err


class FakeClock:
    """``time`` for ``agents.tournament.progress``: ``perf_counter`` reads ``now``, which
    moves only when a test moves it, so what is printed does not depend on how fast the
    machine plays."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


def test_line_progress_prints_every_interval_and_at_the_end(monkeypatch):
    import io

    import agents.tournament.progress as tournament_progress

    clock, out = FakeClock(), io.StringIO()
    monkeypatch.setattr(tournament_progress, "time", clock)
    bar = tournament_progress.LineProgress(5, every=30.0, file=out)
    for now in (10.0, 31.0, 40.0, 62.0, 63.0):  # lines at 31 s and 62 s
        clock.now = now
        bar.update()
    bar.close()
    bar.close()  # once
    assert out.getvalue().splitlines() == [
        "tournament: 2/5 deals (40%), 31.0 s",
        "tournament: 4/5 deals (80%), 62.0 s",
        "tournament: 5/5 deals (100%), 63.0 s",
    ]


def test_progress_in_a_log_is_a_line_now_and_then(capsys, monkeypatch):
    import agents.tournament.progress as tournament_progress

    monkeypatch.setattr(tournament_progress, "time", FakeClock())  # 60 deals in no time
    run_tournament(["random", "random"], deals=60, workers=1, progress=True)
    err = capsys.readouterr().err  # not a terminal
    assert "\r" not in err
    assert err.splitlines() == ["tournament: 60/60 deals (100%), 0.0 s"]
    monkeypatch.setattr(tournament_progress, "PROGRESS_EVERY_S", 0.0)
    run_tournament(["random", "random"], deals=60, workers=1, progress=True)
    lines = capsys.readouterr().err.splitlines()
    # a line at every finished chunk of deals, counting up, the last once at the end
    counts = [int(line.split()[1].removesuffix("/60")) for line in lines]
    assert len(counts) > 2 and counts == sorted(set(counts)) and counts[-1] == 60


class SignalProbe(FirstLegal):
    """Fails when it plays in a pool worker that kept its parent's signal handlers."""

    def act(self, observation):
        import signal

        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL or \
                signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            raise RuntimeError(f"inherited handlers {signal.getsignal(signal.SIGTERM)}")
        return super().act(observation)


def test_pool_workers_reset_their_signal_handlers():
    import signal

    def _raise(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, _raise)
    try:
        result = run_tournament([f"{MOD}:SignalProbe", "random"], deals=4, workers=2,
                                progress=False)
    finally:
        signal.signal(signal.SIGTERM, old)
    assert result.workers == 2 and signal.getsignal(signal.SIGTERM) is old


def test_pool_workers_do_not_inherit_the_callers_signal_handlers():
    """``train/sb3/run.py`` turns SIGTERM into KeyboardInterrupt; the pool's forked workers
    must not inherit that, or terminating the pool prints a traceback per worker."""
    import subprocess
    import sys
    from pathlib import Path

    script = (
        "import signal\n"
        "def _raise(signum, frame):\n"
        "    raise KeyboardInterrupt\n"
        "signal.signal(signal.SIGTERM, _raise)\n"
        "signal.signal(signal.SIGINT, _raise)\n"
        "from agents.tournament import run_tournament\n"
        "r = run_tournament(['random', 'greedy'], deals=8, workers=2, progress=False)\n"
        "print('played', r.workers)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[3], timeout=120)
    assert proc.returncode == 0 and "played 2" in proc.stdout, proc.stderr
    assert "Traceback" not in proc.stderr and "KeyboardInterrupt" not in proc.stderr


@pytest.fixture
def restored_signals():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for s, handler in before.items():
        signal.signal(s, handler)


def test_a_pool_worker_ignores_ctrl_c_and_dies_quietly_on_sigterm(restored_signals):
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: None)  # a caller's handler, inherited
    reset_worker_signals()
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_pool_worker_starts_from_the_tournaments_config(restored_signals):
    WORKER_STATE.update(stale=True, cache={"old": 1})
    config = {"rules": {"num_players": 2}, "seed": 7, "seatings": [], "specs": {}}
    init_pool_worker(config)
    assert WORKER_STATE == {**config, "cache": {}, "env": None}
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
