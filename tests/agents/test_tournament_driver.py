"""``run_tournament``'s own work, on one-deal tournaments that take a moment (written from
mutmut's survivors in ``agents.tournament.driver``, ``specs``, ``matches`` and ``deals``):
its refusals word for word, the forms of an agent entry, the agents a ``tables`` list
names, the spec check before any game, the fields of the result, the worker count, the
progress bar's total, the in-process worker's state put back, and how a seat is built
for a table of one deal or of a match."""

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
        def __init__(self, total, enabled):
            self.total, self.enabled, self.done, self.closed = total, enabled, 0, False
            bars.append(self)

        def update(self, n):
            self.done += n

        def close(self):
            self.closed = True

    monkeypatch.setattr(driver, "progress_bar", Bar)
    play(["heuristic", "greedy", "random"], deals=4, progress=True)
    (bar,) = bars
    assert (bar.total, bar.enabled, bar.done, bar.closed) == (12, True, 12, True)


def test_the_in_process_worker_puts_back_the_callers_state():
    WORKER_STATE["mine"] = 1
    try:
        play(["random", "greedy"])
        assert WORKER_STATE == {"mine": 1}
    finally:
        WORKER_STATE.pop("mine", None)


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
