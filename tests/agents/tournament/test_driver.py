"""``run_tournament``'s own work (``agents.tournament.driver``, ``specs``, ``matches``),
on one-deal tournaments that take a moment: its refusals word for word, the forms of an
agent entry and a spec's kind, the agents a ``tables`` list names (a ``--table`` entry
that names none or several refused), the spec check before any game, the fields of the
result, the worker count (on Linux and off it), the progress bar's total, the in-process
worker's state put back, each finished table handed over, and how a seat is built for a
table of one deal or of a match."""

from __future__ import annotations

import os

import numpy as np
import pytest

import agents
from agents.random_agent import RandomAgent
from agents.tournament import driver, run_tournament
from agents.tournament.deals import make_tables, resolve_rules
from agents.tournament.matches import build_seat
from agents.tournament.specs import build_agent, spec_text
from agents.tournament.worker import WORKER_STATE


def play(entries, **kwargs):
    options = {"num_players": 2, "deals": 1, "seed": 3, "workers": 1, "progress": False}
    return run_tournament(entries, **{**options, **kwargs})


@pytest.mark.parametrize(("name", "value", "words"), [
    ("seed", -1, "seed must be a non-negative int, got -1"),
    ("seed", True, "seed must be a non-negative int, got True"),
    ("seed", 1.0, "seed must be a non-negative int, got 1.0"),
    ("deals", 0, "deals must be an int >= 1, got 0"),
    ("deals", 2.0, "deals must be an int >= 1, got 2.0"),
    ("workers", 0, "workers must be an int >= 1 (or None for every core), got 0"),
    ("workers", True, "workers must be an int >= 1 (or None for every core), got True"),
    ("workers", 2.0, "workers must be an int >= 1 (or None for every core), got 2.0"),
])
def test_each_argument_is_refused_in_its_own_words(name, value, words):
    with pytest.raises(ValueError) as err:
        play(["random", "greedy"], **{name: value})
    assert str(err.value) == words


def test_the_smallest_arguments_are_taken():
    result = play(["random", "greedy"], seed=0, deals=1, workers=1)
    assert (result.seed, result.deals, result.workers) == (0, 1, 1)


def test_one_entry_is_one_agent_whatever_its_form():
    label = "agents.random_agent:RandomAgent"
    for entry, expected in ((" random ", "random"), (RandomAgent, label),
                            (RandomAgent(num_players=2), label)):
        result = play(entry)
        assert result.agents == [expected] and result.tables == [[expected, expected]]
        assert result.specs == {expected: expected}


def test_without_agents_the_tables_name_them_in_order_of_first_seat():
    result = play([], tables=[["greedy", "random"], ["random", "greedy"], ["greedy", "greedy"]])
    assert result.agents == ["greedy", "random"]
    assert result.tables == [["greedy", "random"], ["random", "greedy"], ["greedy", "greedy"]]


def test_a_bad_spec_is_refused_before_any_game_even_after_a_repeated_entry(monkeypatch):
    def no_games(task):
        raise AssertionError("a game was played")

    monkeypatch.setattr(driver, "play_chunk", no_games)
    with pytest.raises(ValueError) as err:
        play([RandomAgent, RandomAgent, "nobot"])
    assert str(err.value).startswith("agent spec 'nobot': ")
    with pytest.raises(ValueError) as err:  # checked for the table's match length
        play(["random?num_deals=2", "greedy"], rules={"num_deals": 4})
    assert str(err.value).startswith("agent spec 'random?num_deals=2': agent spec "
                                     "'random?num_deals=2' asks for num_deals=2, but the "
                                     "table plays 4-deal matches")


def test_a_misspelt_bot_keyword_names_the_bots_keywords_and_the_rules_options_apart():
    """``mc?sampels=8`` must not be answered with the rules options alone: the bot's own
    keywords are what was meant."""

    from pis_env import Rules

    rules = ", ".join(Rules.keys())
    # mc's named parameters, then its shorthand (agents.mc.Tracking's keywords)
    own = ("seed, samples, rollouts, rules, params, horizon, confidence, win_bonus, "
           "tracking, match_aware, track, particles, track_attempts, void_weight").split(", ")
    with pytest.raises(ValueError) as err:
        play(["mc?sampels=8", "heuristic"])
    assert str(err.value) == (
        "agent spec 'mc?sampels=8': unknown option 'sampels' for mc (did you mean "
        f"samples?): mc's options: {', '.join(own)}; rules options: {rules}")
    with pytest.raises(TypeError) as err:  # no near keyword: no guess
        agents.make("heuristic", zzz=1)
    assert str(err.value) == ("unknown option 'zzz' for heuristic: heuristic's options: "
                              f"seed, rules, params, big_table; rules options: {rules}")
    with pytest.raises(TypeError) as err:  # a bot that takes no rules options lists none
        agents.make("greedy", sed=1)
    assert str(err.value) == ("unknown option 'sed' for greedy (did you mean seed?): "
                              "greedy's options: num_players, num_deals, seed")
    with pytest.raises(TypeError, match="^no style 'b'$"):  # the bot's own TypeError
        agents.make(f"{__name__}:Fussy", style="b")


def test_a_table_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError) as err:
        play(["random", "greedy"], tables=[["random"]])
    assert str(err.value) == "table ['random'] has 1 seats, expected 2"


def test_the_result_keeps_the_played_agents_and_the_tables_arrays():
    result = play(["heuristic", "greedy", "random"], deals=3,
                  tables=[["heuristic", "random"], ["random", "heuristic"]])
    assert result.agents == ["heuristic", "random"]  # greedy sat at no table
    assert list(result.specs) == list(result.stats) == list(result.ratings) == result.agents
    assert (result.num_players, result.rules["num_players"], result.deals) == (2, 2, 3)
    assert len(result.table_results) == 2 and result.elapsed_s > 0
    for table, lineup in zip(result.table_results, result.tables):
        assert table.lineup == lineup and table.seating == [lineup, lineup[::-1]]
        assert table.charges.shape == table.winners.shape == (3, 2, 2)
        assert (table.charges.dtype, table.winners.dtype) == (np.int32, bool)
        assert (table.reasons.dtype, table.decisions.dtype) == (np.uint8, np.int32)
        assert table.decisions.shape == (3, 2) and (table.decisions > 0).all()
        assert table.winners.sum(axis=2).min() >= 1  # every game stored, none left zero
    every = np.concatenate([t.decisions.ravel() for t in result.table_results])
    assert result.mean_decisions == pytest.approx(every.mean())


def test_the_default_workers_are_the_cores_and_never_more_than_the_work():
    cores = len(os.sched_getaffinity(0))
    # 40 deals of one table: at least 8 chunks, and one deal a chunk from 5 cores on
    assert play(["random", "greedy"], deals=40, workers=None).workers == min(cores, 40)
    assert play(["random", "greedy"], deals=3, workers=8).workers == 3  # a deal a chunk


def test_the_progress_bar_counts_every_game_and_is_closed(monkeypatch):
    bars = []

    class Bar:
        def __init__(self, total, enabled, unit):
            self.total, self.enabled, self.done, self.closed = total, enabled, 0, False
            self.unit = unit
            bars.append(self)

        def update(self, n):
            self.done += n

        def close(self):
            self.closed = True

    monkeypatch.setattr(driver, "progress_bar", Bar)
    play(["heuristic", "greedy", "random"], deals=4, progress=True)
    play(["heuristic", "greedy"], deals=2, progress=False, rules={"num_deals": 2})
    deals, matches = bars
    assert (deals.total, deals.enabled, deals.done, deals.closed) == (12, True, 12, True)
    assert (matches.total, matches.enabled, matches.done, matches.closed) == (2, False, 2, True)
    assert (deals.unit, matches.unit) == ("deal", "match")  # a match of 2 deals is one step


def test_the_in_process_worker_puts_back_the_callers_state():
    before = dict(WORKER_STATE)  # what other tests' workers left in this process
    WORKER_STATE.clear()
    WORKER_STATE["mine"] = 1
    try:
        play(["random", "greedy"])
        assert WORKER_STATE == {"mine": 1}
    finally:
        WORKER_STATE.clear()
        WORKER_STATE.update(before)


# ------------------------------------------------------------------ seats and specs
class OneDeal(agents.Agent):
    """A bot of one deal: its constructor takes no ``num_deals``."""

    def __init__(self, num_players=2, seed=None):
        super().__init__(num_players=num_players, seed=seed)

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


class Fussy(agents.Agent):
    """A bot that refuses a keyword other than ``num_deals``."""

    def __init__(self, num_players=2, num_deals=1, seed=None, style="a"):
        if style != "a":
            raise TypeError(f"no style {style!r}")
        super().__init__(num_players=num_players, num_deals=num_deals, seed=seed)

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_a_seat_of_a_match_is_built_with_the_matchs_deals():
    bot = build_seat("mc?samples=2", 3, 5, 4)
    assert (bot.num_players, bot.num_deals, bot.samples) == (3, 4, 2)
    assert build_seat("greedy?num_deals=4", 2, 0, 4).num_deals == 4
    built = build_seat(agents.make("greedy", num_players=2, num_deals=4), 2, 6, 4)
    assert built.num_deals == 4
    from_class = build_seat(Fussy, 3, 7, 4)
    assert (from_class.num_players, from_class.num_deals) == (3, 4)
    assert build_seat("greedy", 2, 0, 1).num_deals == 1


def test_a_seat_that_cannot_play_the_match_is_refused_in_words():
    where = "4-deal matches (--option num_deals=4)"
    with pytest.raises(ValueError) as err:
        build_seat(OneDeal, 2, 0, 4)
    assert str(err.value).startswith(f"OneDeal cannot play {where}: ")
    assert str(err.value).endswith("; a bot for match tables takes num_deals=")
    greedy = agents.make("greedy", num_players=2)
    with pytest.raises(ValueError) as err:
        build_seat(greedy, 2, 0, 4)
    assert str(err.value) == (f"{greedy!r} was built for num_deals=1, but the table plays "
                              f"{where}: build it with num_deals=4")
    with pytest.raises(ValueError) as err:
        build_seat("greedy?num_deals=2", 2, 0, 4)
    assert str(err.value) == ("agent spec 'greedy?num_deals=2' asks for num_deals=2, but "
                              f"the table plays {where}: drop it from the spec (the rules "
                              "set it)")
    spec = f"{__name__}:OneDeal"
    with pytest.raises(ValueError) as err:
        build_seat(spec, 2, 0, 4)
    assert str(err.value) == (f"agent spec {spec!r} cannot play {where}: it takes no "
                              "num_deals (a bot for match tables takes num_deals=; without "
                              "it, play single deals: num_deals=1)")
    with pytest.raises(TypeError, match="^no style 'b'$"):  # not about matches: as it is
        build_seat(f"{__name__}:Fussy?style=b", 2, 0, 4)


def test_an_instance_is_copied_for_each_seat_and_reseeded():
    original = RandomAgent(num_players=2, seed=1)
    first, second = build_agent(original, 2, 9), build_agent(original, 2, 9)
    assert first is not original and first is not second
    mask = np.ones(58, np.int8)
    observation = {"observation": np.zeros(original.observation_size), "action_mask": mask}
    plays = [[bot.act(observation) for _ in range(20)] for bot in (first, second)]
    assert plays[0] == plays[1]  # both reseeded with 9
    assert plays[0] != [RandomAgent(num_players=2, seed=1).act(observation)
                        for _ in range(20)]
    with pytest.raises(ValueError) as err:
        build_agent(original, 3, 0)
    assert str(err.value) == f"{original!r} was built for 2 players; this table has 3"

    class Seatless:  # no num_players: taken to fit any table
        def act(self, observation):
            return 0

    assert isinstance(build_agent(Seatless(), 4, 0), Seatless)


def test_a_class_is_built_for_the_table_and_a_non_agent_is_refused():
    bot = build_agent(RandomAgent, 4, 11)
    assert bot.num_players == 4 and bot.act is not None
    assert build_agent("mc?samples=3", 3, 0).samples == 3
    assert spec_text(OneDeal) == f"{__name__}:OneDeal"
    assert spec_text(OneDeal()) == f"{__name__}:OneDeal"

    class NoAct:
        act = None

    for bad in (object(), NoAct()):
        with pytest.raises(TypeError) as err:
            spec_text(bad)
        assert str(err.value) == ("an agent must be a spec string, an agent class or an "
                                  f"object with act(observation), got {bad!r}")


def test_the_rules_of_the_tables_and_their_refusals(tmp_path):
    from pis_env import Rules

    assert resolve_rules(Rules(num_players=3), None)["num_players"] == 3
    assert resolve_rules({"num_players": 4}, 4)["num_players"] == 4
    assert resolve_rules(None, 3)["num_players"] == 3
    path = tmp_path / "r.yaml"
    path.write_text("num_players: 3\n")
    assert resolve_rules(str(path), None)["num_players"] == 3
    for given in (Rules(num_players=3), {"num_players": 3}, path):
        with pytest.raises(ValueError) as err:
            resolve_rules(given, 2)
        assert str(err.value) == "num_players=2 conflicts with the rules' num_players=3"
    with pytest.raises(TypeError) as err:
        resolve_rules(5, None)
    assert str(err.value) == "rules must be a dict, a Rules, a YAML path or None, got 5"


def test_the_default_tables():
    assert make_tables(["a", "b"], 2) == [["a", "b"]]
    assert make_tables(["a"], 3) == [["a", "a", "a"]]
    assert make_tables(["a", "b", "c"], 4) == [["a", "b", "c", "b"]]
    assert make_tables(["a", "b", "c"], 2) == [["a", "b"], ["a", "c"], ["b", "c"]]


# ------------------------------------------------------------ the plan and the backends
class FakeSession:
    """A Ray session that plays its units in this process, as RaySession's contract says:
    ``init(*initargs)`` once, then ``on_result(fn(unit))`` for every unit."""

    sessions: list = []

    def __init__(self, address):
        self.address, self.cpus, self.closed, self.calls = address, 3, False, []
        FakeSession.sessions.append(self)

    def run_unordered(self, units, fn, on_result, workers, init, initargs):
        self.calls.append((list(units), workers))
        saved = dict(WORKER_STATE)
        init(*initargs)
        try:
            for unit in units:
                on_result(fn(unit))
        finally:
            WORKER_STATE.clear()
            WORKER_STATE.update(saved)

    def close(self):
        self.closed = True


def test_the_ray_backend_gets_the_plan_and_the_same_results(monkeypatch):
    import agents.tournament.ray_backend as ray_backend

    checked = []
    monkeypatch.setattr(ray_backend, "check_backend", lambda b, a: checked.append((b, a)))
    monkeypatch.setattr(ray_backend, "RaySession", FakeSession)
    FakeSession.sessions = []
    local = play(["heuristic", "greedy"], deals=100, workers=1)
    remote = play(["heuristic", "greedy"], deals=100, workers=None, backend="ray",
                  address="ray://head:10001")
    assert checked == [("local", None), ("ray", "ray://head:10001")]
    (session,) = FakeSession.sessions
    assert session.address == "ray://head:10001" and session.closed
    ((units, workers),) = session.calls
    # the session's 3 CPUs: chunks of ceil(100 / (8 * 3)) = 5 deals
    assert workers == remote.workers == 3
    assert units == [(0, start, start + 5) for start in range(0, 100, 5)]
    for a, b in zip(local.table_results, remote.table_results):
        assert (a.charges == b.charges).all() and (a.winners == b.winners).all()


def test_a_local_pool_has_the_workers_asked_for(monkeypatch):
    import multiprocessing

    sizes = []
    real = multiprocessing.get_context

    class Context:
        def Pool(self, processes, *args):
            sizes.append(processes)
            return real().Pool(processes, *args)

    monkeypatch.setattr(multiprocessing, "get_context", lambda: Context())
    assert play(["random", "greedy"], deals=8, workers=2).workers == 2
    assert sizes == [2]


def test_the_clock_times_the_games(monkeypatch):
    ticks = iter([100.0, 107.5])
    monkeypatch.setattr(driver.time, "perf_counter", lambda: next(ticks))
    assert play(["random", "greedy"]).elapsed_s == 7.5


def test_the_documented_defaults(monkeypatch):
    """1,000 deals, seed 0, a progress display: read where the run starts, before play."""
    seen = {}

    class Stop(Exception):
        pass

    def first_chunk(task):
        seen["seed"] = WORKER_STATE["seed"]
        raise Stop

    monkeypatch.setattr(driver, "play_chunk", first_chunk)
    monkeypatch.setattr(driver, "progress_bar", lambda total, enabled, unit: seen.update(
        total=total, enabled=enabled) or type("Bar", (), {"close": lambda self: None})())
    with pytest.raises(Stop):
        run_tournament(["random", "greedy"], num_players=2, workers=1)
    assert seen == {"seed": 0, "total": 1000, "enabled": True}


class Counted(agents.Agent):
    """Counts the bots built before any game (the spec check builds with seed None)."""

    checks = 0

    def __init__(self, num_players=2, seed=None):
        super().__init__(num_players=num_players, seed=seed)
        if seed is None:
            Counted.checks += 1

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_an_entry_given_twice_is_checked_once():
    Counted.checks = 0
    play([Counted, Counted])
    assert Counted.checks == 1


def test_a_class_seat_of_a_match_gets_its_seed_and_an_instance_needs_its_deals():
    assert build_seat(Fussy, 3, 7, 4).seed == 7
    assert build_seat("greedy", 2, 0).num_deals == 1  # one deal unless told

    class Plain:
        def act(self, observation):
            return 0

    plain = Plain()
    with pytest.raises(ValueError) as err:
        build_seat(plain, 2, 0, 4)
    assert str(err.value).startswith(f"{plain!r} was built for num_deals=None, but ")


def test_a_spec_is_parsed_or_refused_in_words():
    import yaml

    from agents.common.cli import yaml_error_text
    from agents.tournament.specs import parse_spec

    assert parse_spec("mc?x=a=b&y=") == ("mc", {"x": "a=b", "y": ""})
    for bad in (5, None, "  "):
        with pytest.raises(ValueError) as err:
            parse_spec(bad)
        assert str(err.value) == f"an agent spec must be a non-empty string, got {bad!r}"
    with pytest.raises(ValueError) as err:
        parse_spec("mc?x=[")
    try:
        yaml.safe_load("[")
    except yaml.YAMLError as e:
        expected = yaml_error_text(e, "x=[")
    assert str(err.value) == expected and expected.startswith("x=[, line 1, column 2: ")


def test_an_agent_without_a_counted_game_has_no_interval():
    """Every game truncated: no rate and no interval (nan), not Wilson's (0, 1)."""
    import math

    from agents.tournament.results import TRUNCATED, summarize
    from agents.tournament.worker import TableResult

    table = TableResult(lineup=["a", "b"], seating=[["a", "b"], ["b", "a"]],
                        charges=np.zeros((1, 2, 2), np.int32),
                        winners=np.zeros((1, 2, 2), bool),
                        reasons=np.full((1, 2), TRUNCATED, np.uint8),
                        decisions=np.ones((1, 2), np.int32))
    stats, h2h, _, truncated = summarize(["a", "b"], {"a": "a", "b": "b"}, [table], 1)
    assert truncated == 2 and stats["a"].games == 0
    assert all(math.isnan(x) for x in (stats["a"].win_rate, stats["a"].win_low,
                                        stats["a"].win_high))
    assert h2h["a"]["b"].games == 0
    assert math.isnan(h2h["a"]["b"].low) and math.isnan(h2h["a"]["b"].high)


def test_off_linux_the_default_workers_are_the_cpu_count(monkeypatch):
    monkeypatch.delattr(driver.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(driver.os, "cpu_count", lambda: 3)
    assert driver._cpu_count() == 3
    monkeypatch.setattr(driver.os, "cpu_count", lambda: None)
    assert driver._cpu_count() == 1


def test_a_specs_kind_is_its_registered_name():
    from agents.heuristic import HeuristicAgent
    from agents.tournament.specs import spec_kind

    assert spec_kind("ppo:models/ppo_2p.zip") == "ppo"
    assert spec_kind("ppo:C:/nets/a.zip?deterministic=0") == "ppo"
    assert spec_kind("search?rollouts=64") == "search"
    assert spec_kind("mypkg.bots:MyBot") == "mypkg.bots:MyBot"
    assert spec_kind(HeuristicAgent) == "class"
    assert spec_kind(HeuristicAgent(num_players=2)) == "instance"


def test_a_table_entry_names_one_agent_or_is_refused():
    with pytest.raises(ValueError) as err:
        run_tournament(["heuristic", "heuristic", "random"], num_players=2, deals=1,
                       workers=1, progress=False, tables=[["heuristic", "random"]])
    assert str(err.value) == ("table entry 'heuristic' is ambiguous: use one of "
                              "['heuristic#1', 'heuristic#2']")
    with pytest.raises(ValueError) as err:
        run_tournament(["heuristic", "random"], num_players=2, deals=1, workers=1,
                       progress=False, tables=[["heuristic", "greedy"]])
    assert str(err.value) == ("table entry 'greedy' is not one of the agents "
                              "['heuristic', 'random']")
    result = run_tournament(["heuristic", "heuristic", "random"], num_players=2, deals=1,
                            workers=1, progress=False, tables=[["heuristic#2", "random"]])
    assert result.tables == [["heuristic#2", "random"]]


def test_a_spec_asking_for_more_deals_at_a_one_deal_table_is_refused_word_for_word():
    with pytest.raises(ValueError) as err:
        build_seat("greedy?num_deals=2", 2, 0, 1)
    assert str(err.value) == ("agent spec 'greedy?num_deals=2' asks for num_deals=2, but the "
                              "table plays single deals (num_deals=1): drop it from the spec "
                              "(the rules set it)")


class FourDealsByDefault(agents.Agent):
    """A bot built for four-deal matches unless told otherwise, with an option of its own."""

    def __init__(self, num_players=2, num_deals=4, seed=None, style="plain"):
        super().__init__(num_players=num_players, num_deals=num_deals, seed=seed)
        self.style, self.seed_given = style, seed

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.mark.parametrize("spec", [f"{__name__}:FourDealsByDefault",
                                  f"{__name__}:FourDealsByDefault?style=bold",
                                  FourDealsByDefault])
def test_a_match_bot_at_a_one_deal_table_is_built_again_for_single_deals(spec):
    bot = build_seat(spec, 3, 17, 1)
    assert (bot.num_players, bot.num_deals, bot.seed_given) == (3, 1, 17)
    assert bot.style == ("bold" if "style" in str(spec) else "plain")


def test_each_finished_table_is_handed_over_once_whole_as_soon_as_it_is_played(
        monkeypatch):
    handed, chunks = [], []
    real_chunk = driver.play_chunk
    monkeypatch.setattr(driver, "play_chunk", lambda task: chunks.append(task) or real_chunk(task))

    def on_table(t, table):
        # a copy: a table handed over before its last chunk would be filled in later
        handed.append((t, table.lineup, table.charges.copy(), table.winners.copy(),
                       table.reasons.copy(), len(chunks)))

    tables = [["heuristic", "random"], ["greedy", "heuristic"], ["random", "greedy"]]
    # 20 deals of 3 tables on one worker: chunks of ceil(60 / 8) = 8 deals, 3 per table
    result = play(["heuristic", "greedy", "random"], deals=20, tables=tables,
                  on_table=on_table)
    assert [(t, lineup) for t, lineup, *_ in handed] == list(enumerate(tables))
    assert [played for *_, played in handed] == [3, 6, 9]  # each on its last chunk
    for (_, _, charges, winners, reasons, _), final in zip(handed, result.table_results):
        assert (charges == final.charges).all() and (winners == final.winners).all()
        assert (reasons == final.reasons).all() and winners.sum(axis=2).min() >= 1
