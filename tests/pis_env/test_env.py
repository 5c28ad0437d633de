"""The PettingZoo AEC environment: API conformance, observations, masks, rewards, matches,
histories and bad input, and the env as a user meets it before and just after ``reset()``
and after the episode."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import pis_env
from pis_env import IllegalActionError, decode_observation
from pis_env.aec import deal_rewards
from pis_env.cards import cards_of, points_of
from pis_env.engine import DRAW, PASS
from pis_env.rules import CHOICES
from tests.conftest import stacked_deck
from tests.pis_env import reference_rules as ref

VARIANTS = [
    {k: v} for k, values in CHOICES.items() for v in values[1:]
] + [
    {"num_deals": 4},
    {"max_turns": 30},
    {"empty_stock": "reshuffle", "num_players": 6},
]


def random_play(env, rng: random.Random, check=None, max_steps=100_000):
    """Play legal random actions through the AEC loop; ``check(env, agent, obs)`` per step."""
    for agent in env.agent_iter(max_steps):
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if check:
            check(env, agent, obs)
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))


@pytest.mark.parametrize("num_players", range(2, 8))
def test_api_seed_render_for_every_player_count(num_players):
    api_test(pis_env.env(num_players=num_players), num_cycles=300)
    seed_test(lambda: pis_env.env(num_players=num_players), num_cycles=300)
    render_test(lambda render_mode=None: pis_env.env(render_mode=render_mode,
                                                     num_players=num_players))


def _variant_id(options: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in options.items())


@pytest.mark.parametrize("options", VARIANTS, ids=_variant_id)
def test_api_seed_render_for_every_variant(options):
    api_test(pis_env.env(**options), num_cycles=300)
    seed_test(lambda: pis_env.env(**options), num_cycles=300)
    render_test(lambda render_mode=None: pis_env.env(render_mode=render_mode, **options))


def test_metadata_spaces_and_entry_points():
    e = pis_env.pis_yedili_v0.env(num_players=3)
    assert e.metadata["name"] == "pis_yedili_v0"
    assert e.unwrapped.possible_agents == ["player_0", "player_1", "player_2"]
    assert e.action_space("player_1").n == 58
    space = e.observation_space("player_0")
    assert space is e.observation_space("player_0")
    assert space["observation"].dtype == np.float32
    assert space["action_mask"].dtype == np.int8
    # env() is raw_env inside OrderEnforcingWrapper only
    assert type(e).__name__ == "OrderEnforcingWrapper"
    assert isinstance(e.env, pis_env.raw_env)


def _check_decoded(env, agent, obs, seen: set):
    """decode_observation agrees with the engine state, from every seat; the mask is the
    legal set of the independent reference (``reference_rules``, written from RULES.md)
    for the agent to move and zeros for the others. ``seen`` collects the situations
    checked (phases, directions, chains of sevens, a drawn card, the deal index)."""
    raw = env.unwrapped
    game = raw.game
    n = game.num_players
    seen.update([("phase", game.phase_name), ("direction", game.direction),
                 ("deal", game.deal_index)])
    if game.pending_sevens:
        seen.add(("pending_sevens", min(game.pending_sevens, 2)))
    if game.has_drawn:
        seen.add("has_drawn")
    for seat, other in enumerate(raw.possible_agents):
        o = obs if other == agent else raw.observe(other)
        assert raw.observation_space(other).contains(o)
        d = decode_observation(o["observation"], n, raw.rules.num_deals)
        assert d["hand"] == ref.hand_cards(game.hands[seat])
        assert d["top_card"] == (None if game.top < 0 else game.top)
        assert d["active_suit"] == game.active_suit
        assert d["pending_sevens"] == game.pending_sevens
        assert d["phase"] == game.phase_name
        assert d["has_drawn"] == (game.has_drawn and seat == game.current)
        assert d["direction"] == game.direction
        assert d["hand_sizes"] == [len(ref.hand_cards(game.hands[(seat + k) % n]))
                                   for k in range(n)]
        assert d["stock_size"] == len(game.stock)
        assert d["discard"] == sorted(game.pile)
        if raw.rules.num_deals > 1:
            assert d["deal"] == game.deal_index
            assert d["scores"] == [game.totals[(seat + k) % n] for k in range(n)]
        mask = o["action_mask"]
        if seat == game.current:
            assert set(np.flatnonzero(mask).tolist()) == ref.legal_actions(game)
        else:
            assert not mask.any()


#: Steps checked per variant (each from every seat), and the most deals played to reach
#: them and every situation of ``_expected_situations``. WHY a budget rather than a
#: deal count: a 7-player deal lasts ~10 steps, a reshuffling one hundreds; the step
#: budget gives each variant the same amount of checking, and the situations checked
#: are asserted, so fewer deals cannot quietly check less.
STEP_BUDGET = 2500
MAX_DEALS = 400


def _expected_situations(options: dict, ends: set[str]) -> set:
    rules = pis_env.Rules.from_options(**options)
    return ({("phase", name) for name in ("opening", "play", "nominate", "ace")}
            | {("direction", 1), ("direction", -1), "has_drawn"}
            | {("pending_sevens", 1), ("pending_sevens", 2)}
            | {("deal", k) for k in range(rules.num_deals)}
            | {("end", reason) for reason in ends}
            | ({"reshuffled"} if rules.empty_stock == "reshuffle" else set()))


@pytest.mark.parametrize("options, ends", [
    pytest.param(options, ends, id=_variant_id(options)) for options, ends in [
        ({"num_players": 2}, {"going_out", "empty_stock"}),
        ({"num_players": 3}, {"going_out", "empty_stock"}),
        ({"num_players": 4}, {"going_out", "empty_stock"}),
        ({"num_players": 7}, {"empty_stock"}),  # 3 cards of stock: nobody goes out
        ({"num_deals": 3, "num_players": 3}, {"going_out", "empty_stock"}),
        ({"draw_rule": "until_playable"}, {"going_out", "empty_stock"}),
        ({"opening": "first_round", "num_players": 4}, {"going_out", "empty_stock"}),
        ({"empty_stock": "reshuffle", "max_turns": 300}, {"going_out", "truncated"}),
    ]
])
def test_decoded_observation_and_mask_match_engine_over_many_deals(options, ends):
    rng = random.Random(7)
    env = pis_env.env(**options)
    expected = _expected_situations(options, ends)
    seen: set = set()
    steps = 0

    def check(env, agent, obs):
        nonlocal steps
        steps += 1
        _check_decoded(env, agent, obs, seen)

    for deal in range(MAX_DEALS):
        env.reset(seed=deal)
        random_play(env, rng, check=check)
        game = env.unwrapped.game
        seen.add(("end", game.end_reason))
        if any(game.deal_reshuffles[-1]):
            seen.add("reshuffled")
        if steps >= STEP_BUDGET and expected <= seen:
            break
    assert expected <= seen, f"not reached in {MAX_DEALS} deals: {expected - seen}"


def test_final_position_observable_with_zero_mask():
    env = pis_env.env()
    env.reset(seed=3)
    random_play(env, random.Random(0))
    game = env.unwrapped.game
    assert game.deal_over
    for seat, agent in enumerate(env.possible_agents):
        o = env.unwrapped.observe(agent)
        assert not o["action_mask"].any()
        assert decode_observation(o["observation"], 2)["hand"] == cards_of(game.hands[seat])


def _play_deal(env, rng):
    """Random legal play to the end of the episode; returns rewards summed per agent and
    the final infos."""
    totals = {a: 0.0 for a in env.possible_agents}
    final = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            final[agent] = info
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    return totals, final


@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_points_rewards_zero_sum_and_follow_charges(num_players):
    rng = random.Random(1)
    env = pis_env.env(num_players=num_players)
    for seed in range(40):
        env.reset(seed=seed)
        totals, infos = _play_deal(env, rng)
        charges = [infos[a]["penalty"] for a in env.possible_agents]
        assert sum(totals.values()) == pytest.approx(0.0, abs=1e-9)
        for i, a in enumerate(env.possible_agents):
            others = (sum(charges) - charges[i]) / (num_players - 1)
            assert totals[a] == pytest.approx((others - charges[i]) / 100)
            assert isinstance(totals[a], float)
        assert any(infos[a]["winner"] for a in env.possible_agents)


def test_win_rewards_share_plus_and_minus_one():
    assert deal_rewards([0, 10, 20], [True, False, False], "win") == [1.0, -0.5, -0.5]
    assert deal_rewards([0, 0, 20], [True, True, False], "win") == [0.5, 0.5, -1.0]
    assert deal_rewards([4, 4], [True, True], "win") == [0.0, 0.0]
    env = pis_env.env(num_players=3, reward="win")
    env.reset(seed=5)
    totals, infos = _play_deal(env, random.Random(2))
    assert sum(totals.values()) == pytest.approx(0.0)
    winners = [a for a in env.possible_agents if infos[a]["winner"]]
    for a in env.possible_agents:
        expected = 1 / len(winners) if a in winners else -1 / (3 - len(winners))
        assert totals[a] == pytest.approx(expected if len(winners) < 3 else 0.0)


def test_going_out_on_a_seven_triples_charges_in_rewards():
    deck, _ = stacked_deck(
        [["2C", "3C", "4C", "5C", "6C", "9C", "7C"], ["2D", "3D", "4D", "5D", "6D", "9D", "10D"]],
        stock=["8H", "10H", "QH", "KH", "AH", "8S"], dealer=1,
    )
    env = pis_env.env()
    env.reset(options={"deck": deck, "dealer": 1})
    for card in ["2C", "3C", "4C", "5C", "6C", "9C"]:
        env.step(pis_env.parse_card(card))
        env.step(DRAW)
        env.step(PASS)
    env.step(pis_env.parse_card("7C"))
    raw = env.unwrapped
    assert points_of(raw.game.hands[1]) == 100
    assert raw.infos["player_1"] == {"penalty": 300, "winner": False}
    assert raw.infos["player_0"] == {"penalty": 0, "winner": True}
    assert raw.rewards == {"player_0": 3.0, "player_1": -3.0}
    assert all(raw.terminations.values())


def test_match_episode_rewards_every_deal_and_rotates_dealer():
    env = pis_env.env(num_players=3, num_deals=4)
    env.reset(seed=11)
    raw = env.unwrapped
    rng = random.Random(3)
    deals_seen = []
    final = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            final[agent] = info
            env.step(None)
            continue
        if not deals_seen or deals_seen[-1] != raw.game.deal_index:
            deals_seen.append(raw.game.deal_index)
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    assert deals_seen == [0, 1, 2, 3]
    d0 = raw.game.deal_dealers[0]
    assert raw.game.deal_dealers == [(d0 + k) % 3 for k in range(4)]
    assert [final[a]["match_score"] for a in raw.possible_agents] == raw.game.totals


def test_max_turns_truncates_everyone_with_zero_reward():
    env = pis_env.env(max_turns=5)
    env.reset(seed=0)
    totals = {a: 0.0 for a in env.possible_agents}
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            assert trunc and not term
            env.step(None)
            continue
        steps += 1
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert steps == 5 and totals == {a: 0.0 for a in env.possible_agents}


def test_history_replays_to_the_same_state():
    for options in ({"num_players": 4}, {"num_players": 3, "num_deals": 2}):
        env = pis_env.env(**options)
        env.reset(seed=21)
        rng = random.Random(4)
        for _ in range(60):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
        history = env.unwrapped.export_history()
        json.loads(history)
        replayed = pis_env.raw_env.from_history(history)
        a, b = env.unwrapped.game, replayed.game
        for field in ("hands", "stock", "pile", "top", "active_suit", "pending_sevens", "phase",
                      "current", "direction", "totals", "deal_index", "history"):
            assert getattr(a, field) == getattr(b, field), field
        assert replayed.agent_selection == env.unwrapped.agent_selection


def test_history_of_a_finished_deal_and_bad_history():
    env = pis_env.env(num_players=2, illegal_action="terminate")
    env.reset(seed=2)
    env.step(999)  # an illegal action ends the deal
    replayed = pis_env.raw_env.from_history(env.unwrapped.export_history())
    assert replayed.game.charges == env.unwrapped.game.charges
    with pytest.raises(ValueError, match="not 'pis_yedili_v0'"):
        pis_env.raw_env.from_history({"env": "other_v9", "rules": {}, "deals": []})


# ---------------------------------------------------------------------- bad input
def test_illegal_action_raise_leaves_state_unchanged_and_play_goes_on():
    env = pis_env.env()
    env.reset(seed=0)
    raw = env.unwrapped
    before = raw.export_history()
    legal = np.flatnonzero(env.last()[0]["action_mask"]).tolist()
    illegal = next(a for a in range(58) if a not in legal)
    for bad in (illegal, 58, -1, 10**6):
        with pytest.raises(IllegalActionError, match="legal actions") as err:
            env.step(bad)
        assert isinstance(err.value, ValueError)
        assert raw.export_history() == before
    env.step(legal[0])
    assert raw.game.turns == 1


def test_illegal_action_terminate_charges_the_offender():
    env = pis_env.env(num_players=3, illegal_action="terminate")
    env.reset(seed=4)
    raw = env.unwrapped
    offender = env.agent_selection
    seat = raw.possible_agents.index(offender)
    points = points_of(raw.game.hands[seat])
    env.step(PASS)  # never legal before a draw
    assert all(raw.terminations.values())
    info = raw.infos[offender]
    assert info["illegal_action"] == PASS
    assert info["penalty"] == 3 * points + 100 and not info["winner"]
    assert sum(raw.rewards.values()) == pytest.approx(0.0)
    assert raw.rewards[offender] == pytest.approx(-(3 * points + 100) / 100)
    others = [a for a in raw.possible_agents if a != offender]
    assert all(raw.infos[a]["winner"] and raw.infos[a]["penalty"] == 0 for a in others)


def test_step_or_observe_before_reset_is_a_clear_error():
    raw = pis_env.raw_env()
    with pytest.raises(RuntimeError, match="before reset"):
        raw.step(DRAW)
    with pytest.raises(RuntimeError, match="before reset"):
        raw.observe("player_0")
    wrapped = pis_env.env()
    # PettingZoo's order-enforcing wrapper answers with an AssertionError of its own
    with pytest.raises(AssertionError, match=r"reset\(\) needs to be called before step"):
        wrapped.step(DRAW)


def test_malformed_deck_and_dealer_and_unknown_option():
    env = pis_env.env()
    with pytest.raises(ValueError, match="52 cards"):
        env.reset(options={"deck": list(range(51))})
    with pytest.raises(ValueError, match="duplicated"):
        env.reset(options={"deck": [0] + list(range(1, 51)) + [0]})
    with pytest.raises(ValueError, match="not a card name"):
        env.reset(options={"deck": ["ZZ"] + list(range(1, 52))})
    with pytest.raises(ValueError, match="dealer"):
        env.reset(options={"dealer": 2})
    with pytest.raises(ValueError, match="allowed options"):
        pis_env.env(numplayers=3)
    with pytest.raises(ValueError, match="allowed values"):
        pis_env.env(draw_rule="sometimes")
    with pytest.raises(ValueError, match="render_mode"):
        pis_env.env(render_mode="rgb")
    env.reset(options={"deck": list(range(52)), "dealer": 1, "unknown": 1})  # ignored key


def test_stacked_deck_deals_in_order_and_render_shows_the_table():
    deck, _ = stacked_deck(
        [["2C", "3D", "4D", "5D", "6D", "8D", "9D"], ["JS", "7H", "2H", "3H", "4H", "5H", "6H"]],
        stock=["AS"], dealer=1,
    )
    env = pis_env.env(render_mode="ansi")
    env.reset(options={"deck": deck, "dealer": 1})
    game = env.unwrapped.game
    assert env.agent_selection == "player_0"
    assert cards_of(game.hands[0]) == sorted(deck[0:14:2])
    assert game.stock[-1] == pis_env.parse_card("AS")
    text = env.render()
    assert "player_0 to move (opening)" in text and "2♣" in text and "stock: 38" in text


def test_non_integer_actions_are_illegal():
    env = pis_env.env()
    env.reset(seed=0)
    legal = int(np.flatnonzero(env.last()[0]["action_mask"])[0])
    for bad in (float(legal), True, str(legal), None):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    env.step(np.int32(legal))  # numpy integers are fine (api_test steps np.int32)


def test_unknown_agent_is_a_clear_error():
    raw = pis_env.raw_env(num_players=3)
    raw.reset(seed=0)
    for call in (raw.observe, raw.observation_space, raw.action_space):
        with pytest.raises(ValueError,
                           match="unknown agent 'player_9'.*player_0, player_1, player_2"):
            call("player_9")


def test_step_after_the_episode_is_over_says_so():
    raw = pis_env.raw_env(illegal_action="terminate")
    raw.reset(seed=0)
    raw.step(PASS)  # never legal before a draw: the offender forfeits, the episode is over
    with pytest.raises(ValueError, match="episode is over for player_.*step\\(None\\)"):
        raw.step(DRAW)
    for _ in raw.possible_agents:
        raw.step(None)
    assert raw.agents == []
    with pytest.raises(RuntimeError, match="episode is over.*reset"):
        raw.step(DRAW)


def test_deck_of_floats_or_none_names_the_bad_card():
    raw = pis_env.raw_env()
    with pytest.raises(ValueError, match=r"deck\[0\]: not a card: 0\.0 \(a float") as err:
        raw.reset(options={"deck": [float(c) for c in range(52)]})
    assert "decks for a match" not in str(err.value)
    deck = list(range(52))
    deck[3] = None
    with pytest.raises(ValueError, match=r"deck\[3\]: not a card: None"):
        raw.reset(options={"deck": deck})
    match = pis_env.raw_env(num_deals=2)
    with pytest.raises(ValueError, match=r"deck\[1\]\[3\]: not a card: None"):
        match.reset(options={"deck": [list(range(52)), deck]})
    match.reset(options={"deck": np.array([np.arange(52)] * 2)})  # arrays are decks too
    assert match.game.deal_decks[0] == list(range(52))


def test_numpy_integers_are_accepted_as_options_and_actions():
    raw = pis_env.raw_env(num_players=np.int64(3), num_deals=np.int64(2), max_turns=np.int32(9))
    assert raw.rules.num_players == 3 and type(raw.rules.num_players) is int
    assert type(raw.rules.num_deals) is int and type(raw.rules.max_turns) is int
    json.dumps(raw.rules.to_dict())
    raw.reset(seed=0, options={"dealer": np.int64(1)})
    raw.step(np.array(raw.game.legal_actions()[0]))  # a 0-d array, as predict() returns
    assert raw.game.turns == 1
    with pytest.raises(ValueError, match="num_players"):
        pis_env.raw_env(num_players=np.float64(3))


@pytest.mark.parametrize("bad, expected", [(np.array(99), 99), (np.int64(70), 70), (70, 70),
                                           (2.5, -1), (True, -1), ("3", -1)])
def test_info_illegal_action_is_the_action_as_a_python_int(bad, expected):
    raw = pis_env.raw_env(illegal_action="terminate")
    raw.reset(seed=0)
    offender = raw.agent_selection
    raw.step(bad)
    value = raw.infos[offender]["illegal_action"]
    assert type(value) is int and value == expected


def observation_after(steps: int, **options) -> np.ndarray:
    env = pis_env.env(**options)
    env.reset(seed=7)
    rng = random.Random(7)
    for _ in range(steps):
        legal = np.flatnonzero(env.last()[0]["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    return env.observe(env.agent_selection)["observation"].copy()


def test_decode_rejects_a_vector_of_another_table():
    """A 3-player 2-deal vector and a 4-player 1-deal one are both 188 long."""
    env = pis_env.raw_env(num_players=3, num_deals=2)
    env.reset(seed=0)
    rng = random.Random(0)
    while env.game.deal_index == 0:
        env.step(rng.choice(env.game.legal_actions()))
    vector = env.observe("player_0")["observation"]
    assert vector.shape == (188,) == pis_env.raw_env(num_players=4).observation_space(
        "player_0")["observation"].shape
    assert decode_observation(vector, 3, 2)["deal"] == 1
    with pytest.raises(ValueError, match="not an observation of 4 players and 1 deal"):
        decode_observation(vector, 4, 1)


def test_decode_checks_bits_one_hots_and_the_position():
    vector = observation_after(6)
    good = decode_observation(vector, 2)
    o = pis_env.observation.Layout.of(2).offsets
    top = good["top_card"]
    other_suit = (good["active_suit"] + 1) % 4

    def changed(name, index, value):
        v = vector.copy()
        v[o[name].start + index] = value
        return v

    no_suit = vector.copy()
    no_suit[o["active_suit"]] = 0
    wrong_suit = changed("active_suit", other_suit, 1)
    wrong_suit[o["active_suit"].start + good["active_suit"]] = 0
    spare = next(c for c in range(52) if c not in good["discard"] and c not in good["hand"])
    cases = [
        (changed("hand", 0, 0.5), "'hand' must hold only 0/1, found 0.5"),
        (changed("phase", (["opening", "play", "nominate", "ace"].index(good["phase"]) + 1) % 4,
                 1), "'phase' must be one-hot, found 2 ones"),
        (no_suit, "'active_suit' must be one-hot, found 0 ones"),
        (changed("top_card", spare, 1), "more than one card"),
        (changed("hand_sizes", 1, 0.3), "hand_sizes holds"),
        (changed("stock_size", 0, 1.5), r"\[0, 1\]"),
        (changed("stock_size", 0, np.nan), r"\[0, 1\]"),
        (changed("discard", spare, 1), "do not add up to 52"),
        (changed("discard", top, 0), "top card is not on the discard pile"),
        (wrong_suit, "active suit is not the top card's suit"),
    ]
    assert top is not None and top % 13 != 9  # seed 7: a plain card on top after 6 moves
    for bad, message in cases:
        with pytest.raises(ValueError, match=message):
            decode_observation(bad, 2)


@pytest.mark.parametrize("call, words", [
    ("state", "state() called before reset()"),
    ("export_history", "export_history() called before reset()"),
    ("render", "render() called before reset()"),
    ("observe", "observe() called before reset()"),
    ("step", "step() called before reset()"),
])
def test_calls_before_reset_say_so(call, words):
    env = pis_env.raw_env(render_mode="ansi")
    args = {"observe": ("player_0",), "step": (0,)}.get(call, ())
    with pytest.raises(RuntimeError) as e:
        getattr(env, call)(*args)
    assert str(e.value) == words


def test_a_step_after_the_episode_is_over_says_what_to_do_word_for_word():
    raw = pis_env.raw_env(illegal_action="terminate")
    raw.reset(seed=0)
    raw.step(PASS)  # never legal before a draw: the offender forfeits
    for _ in raw.possible_agents:
        raw.step(None)
    with pytest.raises(RuntimeError) as e:
        raw.step(DRAW)
    assert str(e.value) == ("step() after the episode is over (every agent is done): "
                            "call reset() to start a new one")


def test_a_finished_deal_without_charges_is_refused_in_words():
    raw = pis_env.raw_env()
    raw.reset(seed=0)
    raw.game.charges = None  # what the engine never does: a deal over with no charges
    with pytest.raises(RuntimeError) as e:
        raw._finish_deal()
    assert str(e.value) == "a finished deal without charges"


def test_a_two_deal_match_reports_the_match_score_after_each_deal():
    raw = pis_env.raw_env(num_deals=2)
    raw.reset(seed=3)
    while raw.game.deal_index == 0:
        agent = raw.agent_selection
        raw.step(int(np.flatnonzero(raw.observe(agent)["action_mask"])[0]))
    first = [raw.infos[a] for a in raw.possible_agents]
    assert [i["match_score"] for i in first] == raw.game.totals
    assert all(set(i) >= {"penalty", "winner", "match_score"} for i in first)


def test_last_before_reset_is_pettingzoos_own_error():
    from pettingzoo.utils.env import AECEnv

    with pytest.raises(AttributeError) as ours:
        pis_env.env().last()
    with pytest.raises(AttributeError) as theirs:
        AECEnv.last(pis_env.raw_env())
    assert "reset" in str(ours.value) and "agent_selection" in str(theirs.value)
    env = pis_env.env()
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.last(observe=False)
    assert obs is None and reward == 0 and not term and not trunc


def test_the_wrapper_prints_as_the_env():
    assert str(pis_env.env(num_players=3)) == str(pis_env.raw_env(num_players=3))


def test_the_env_before_and_just_after_reset_as_pettingzoo_describes_it():
    """No agents before ``reset()``; every reward 0 after it; the spaces' bounds and
    dtypes; a seeded env's later unseeded resets continue its stream."""
    env = pis_env.raw_env(num_players=3)
    assert env.agents == []
    for space, high, dtype in ((env.observation_space("player_0")["observation"], 1.0,
                                np.float32),
                               (env.observation_space("player_0")["action_mask"], 1, np.int8),
                               (env.state_space, 1.0, np.float32)):
        assert space.dtype == dtype and (space.low == 0).all() and (space.high == high).all()
    env.reset(seed=5)
    assert env.rewards == {a: 0.0 for a in env.possible_agents}
    decks = []
    for _ in range(2):
        twin = pis_env.raw_env(num_players=3)
        twin.reset(seed=5)
        twin.reset()
        decks.append(twin.game.deal_decks[0])
    assert decks[0] == decks[1]
