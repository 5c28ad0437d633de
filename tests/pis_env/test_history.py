"""Hand histories (``pis_env.history``): exact replays for every variant, reshuffles
included, and a clear error for every history that cannot be trusted or replayed."""

from __future__ import annotations

import copy
import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import pis_env
from pis_env import history
from pis_env.history import HistoryError
from pis_env.rules import CHOICES
from tests.conftest import finished_history

RULE_KEYS = ("draw_rule", "seven_penalty", "after_penalty", "nominate", "opening",
             "empty_stock", "reward", "illegal_action")


def positions(env) -> list[np.ndarray]:
    """What every agent sees, in seat order, and the env's per-agent outcome."""
    views = [env.observe(a) for a in env.possible_agents]
    outcome = (env.agent_selection, dict(env.rewards), dict(env.terminations),
               dict(env.truncations), copy.deepcopy(env.infos))
    return [np.concatenate([v["observation"], v["action_mask"]]) for v in views], outcome


def play(env, rng: random.Random, draw_bias: float, illegal_at: int | None = None):
    """Random play on a reset ``raw_env`` to the end of the match, keeping the position
    after the reset and after every step; draws get extra weight so that stocks run out.
    At step ``illegal_at`` (with ``illegal_action="terminate"``) an illegal action."""
    trace = [positions(env)]
    steps = 0
    while not env.game.match_over:
        game = env.game
        legal = game.legal_actions()
        if illegal_at is not None and steps == illegal_at:
            action = next(a for a in range(60) if a not in legal)
        elif 56 in legal and rng.random() < draw_bias:
            action = 56
        else:
            action = rng.choice(legal)
        env.step(action)
        steps += 1
        trace.append(positions(env))
    return trace


def assert_same_positions(trace, replayed) -> None:
    assert len(trace) == len(replayed)
    for k, ((obs_a, out_a), (obs_b, out_b)) in enumerate(zip(trace, replayed)):
        for seat, (a, b) in enumerate(zip(obs_a, obs_b)):
            np.testing.assert_array_equal(a, b, err_msg=f"step {k}, seat {seat}")
        assert out_a == out_b, f"step {k}"


def replay_trace(text: str) -> list:
    return [positions(env) for env in history.replay(text, pis_env.raw_env)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    num_players=st.integers(2, 7),
    choices=st.fixed_dictionaries({k: st.sampled_from(CHOICES[k]) for k in RULE_KEYS}),
    num_deals=st.integers(1, 3),
    max_turns=st.one_of(st.none(), st.integers(5, 200)),
    seed=st.integers(0, 2**32 - 1),
    draw_bias=st.floats(0.0, 0.9),
    illegal_at=st.one_of(st.none(), st.integers(0, 150)),
)
def test_every_exported_history_replays_every_position(
    num_players, choices, num_deals, max_turns, seed, draw_bias, illegal_at
):
    """The replay reaches, step by step, what every agent saw in the original match (the
    mask included) and the same rewards, infos and charges, in every variant."""
    if choices["empty_stock"] == "reshuffle" and max_turns is None:
        max_turns = 200  # the default 1000 is slow to reach for a property test
    env = pis_env.raw_env(num_players=num_players, num_deals=num_deals, max_turns=max_turns,
                          **choices)
    env.reset(seed=seed)
    if choices["illegal_action"] != "terminate":
        illegal_at = None
    trace = play(env, random.Random(seed), draw_bias, illegal_at)
    reshuffles = sum(map(len, env.game.deal_reshuffles))
    event(f"reshuffles: {reshuffles if reshuffles < 3 else '3 or more'}")
    event(f"end: {env.game.end_reason}")
    text = env.export_history()
    assert_same_positions(trace, replay_trace(text))
    final = pis_env.raw_env.from_history(text)
    assert final.game.charges == env.game.charges
    assert final.game.totals == env.game.totals
    assert final.game.deal_reshuffles == env.game.deal_reshuffles


def test_a_reshuffling_match_replays_exactly():
    """The issue's case: 6 players reshuffle the stock many times; the replay reaches the
    same positions (before, it stopped with an illegal action or drifted)."""
    env = pis_env.raw_env(num_players=6, empty_stock="reshuffle", num_deals=2)
    env.reset(seed=1)
    trace = play(env, random.Random(1), draw_bias=0.0)
    assert sum(map(len, env.game.deal_reshuffles)) >= 2
    text = env.export_history()
    assert_same_positions(trace, replay_trace(text))
    assert pis_env.raw_env.from_history(text).game.charges == env.game.charges


def finished_record(**options) -> dict:
    """A finished match's history record (random legal moves, draws favoured)."""
    return json.loads(finished_history(seed=3, draw=0.5, **options))


def resigned(data: dict) -> dict:
    """``data`` with its digest recomputed (a well-formed history that lies)."""
    body = {k: v for k, v in data.items() if k != "sha256"}
    return {**body, "sha256": history.digest(body)}


def test_the_record_carries_its_format_and_digest():
    data = finished_record(num_players=3)
    assert data["history_format"] == history.HISTORY_FORMAT
    body = {k: v for k, v in data.items() if k != "sha256"}
    assert data["sha256"] == history.digest(body)
    assert len(data["sha256"]) == 64
    assert history.canonical_json(body) == json.dumps(body, sort_keys=True,
                                                      separators=(",", ":"))


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("sha256"), "no sha256"),
    (lambda d: d.update(sha256="0" * 64), "digest mismatch"),
    (lambda d: d["deals"][0]["actions"].pop(), "digest mismatch"),
    (lambda d: d.update(history_format=2), "history_format=2"),
    (lambda d: d.update(env="other_v9"), "not a pis_yedili env"),
])
def test_a_missing_or_wrong_digest_or_format_is_an_error(change, message):
    data = finished_record(num_players=2)
    change(data)
    with pytest.raises(HistoryError, match=message):
        pis_env.raw_env.from_history(json.dumps(data))


def test_an_action_not_legal_at_its_point_is_an_error():
    data = finished_record(num_players=2)
    env = pis_env.raw_env.from_history({**data})
    game = env.game
    first_player = data["deals"][0]["actions"][0][0]
    start = pis_env.raw_env(num_players=2)
    start.reset(options={"deck": data["deals"][0]["deck"], "dealer": data["deals"][0]["dealer"]})
    illegal = next(a for a in range(58) if not start.game.is_legal(a))
    data["deals"][0]["actions"][0] = [first_player, illegal]
    with pytest.raises(HistoryError, match=r"deal 0 action 0: .* is not legal"):
        pis_env.raw_env.from_history(resigned(data))
    data["deals"][0]["actions"][0] = [(first_player + 1) % 2, illegal]
    with pytest.raises(HistoryError, match="turn"):
        pis_env.raw_env.from_history(resigned(data))
    assert game.deal_over  # the untouched history replayed to its end


def reshuffled_history() -> dict:
    """The first seed's deal that reshuffles the stock at least twice."""
    for seed in range(100):
        env = pis_env.raw_env(num_players=6, empty_stock="reshuffle", max_turns=300)
        env.reset(seed=seed)
        play(env, random.Random(seed), draw_bias=0.3)
        data = json.loads(env.export_history())
        if len(data["deals"][0]["reshuffles"]) >= 2:
            return data
    raise AssertionError("no seed reshuffles twice")


def test_reshuffle_orders_are_checked():
    data = reshuffled_history()
    order = data["deals"][0]["reshuffles"][0]
    bad = copy.deepcopy(data)
    bad["deals"][0]["reshuffles"][0] = order[:-1]
    with pytest.raises(HistoryError, match="reshuffle 1 must order"):
        pis_env.raw_env.from_history(resigned(bad))
    missing = copy.deepcopy(data)
    missing["deals"][0]["reshuffles"] = []
    with pytest.raises(HistoryError, match="must be reshuffled"):
        pis_env.raw_env.from_history(resigned(missing))
    extra = copy.deepcopy(data)
    extra["deals"][0]["reshuffles"].append(order)
    with pytest.raises(HistoryError, match="records"):
        pis_env.raw_env.from_history(resigned(extra))


def legacy(data: dict) -> dict:
    """``data`` as written before format 1: no format, no digest, no reshuffles."""
    deals = [{k: v for k, v in d.items() if k != "reshuffles"} for d in data["deals"]]
    return {"env": "pis_yedili_v0", "rules": data["rules"], "deals": deals}


def test_histories_from_before_format_1_load_unless_they_reshuffle():
    plain = finished_record(num_players=3, num_deals=2)
    replayed = pis_env.raw_env.from_history(json.dumps(legacy(plain)))
    assert replayed.game.totals == pis_env.raw_env.from_history(plain).game.totals
    with pytest.raises(HistoryError, match="written before format 1"):
        pis_env.raw_env.from_history(legacy(reshuffled_history()))


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    (json.dumps({"env": "pis_yedili_v0", "rules": {}, "deals": "x"}), "'deals' must be"),
    (json.dumps({"env": "pis_yedili_v0", "rules": {"num_players": 9}, "deals": []}),
     "num_players=9"),
    (json.dumps({"env": "pis_yedili_v0", "rules": {},
                 "deals": [{"dealer": 0, "deck": [1.5] * 52, "actions": []}]}), r"deck\[0\]"),
    (json.dumps({"env": "pis_yedili_v0", "rules": {},
                 "deals": [{"dealer": 5, "deck": list(range(52)), "actions": []}]}), "dealer=5"),
    (json.dumps({"env": "pis_yedili_v0", "rules": {},
                 "deals": [{"dealer": 0, "deck": list(range(52)), "actions": [[0]]}]}),
     "pair"),
])
def test_malformed_histories_are_clear_errors(text, message):
    with pytest.raises(HistoryError, match=message):
        pis_env.raw_env.from_history(text)


def test_a_dealer_that_does_not_rotate_is_an_error():
    data = finished_record(num_players=3, num_deals=2)
    data["deals"][1]["dealer"] = (data["deals"][1]["dealer"] + 1) % 3
    with pytest.raises(HistoryError, match="dealer moves one seat clockwise"):
        pis_env.raw_env.from_history(resigned(data))


DECK = list(range(52))


def _legacy_deal(**fields) -> dict:
    return {"dealer": 0, "deck": DECK, "actions": [], **fields}


def _legacy_history(deals, **rules) -> dict:
    return {"env": "pis_yedili_v0", "rules": rules, "deals": deals}


@pytest.mark.parametrize("data, message", [
    ({"env": "pis_yedili_v9", "rules": {}, "deals": []},
     "history is for 'pis_yedili_v9', not 'pis_yedili_v0'"),
    ({"env": "pis_yedili_v0", "rules": {}, "deals": [], "extra": 1},
     "history: unknown key(s) ['extra']; allowed: ['deals', 'env', 'rules']"),
    ({"env": "pis_yedili_v0", "rules": [], "deals": []},
     "history: 'rules' must be a mapping of rules options"),
    (_legacy_history([]), "history: 'deals' must be a non-empty list"),
    (_legacy_history([_legacy_deal(), _legacy_deal()]), "history has 2 deals for a match of 1"),
    (_legacy_history(["x"]), "history deal 0: must be an object"),
    (_legacy_history([_legacy_deal(reshuffles=[])]),
     "history deal 0: unknown key(s) ['reshuffles']; allowed: "
     "['actions', 'dealer', 'deck', 'illegal']"),
    (_legacy_history([{"dealer": 0, "deck": DECK}]), "history deal 0: 'actions' is missing"),
    (_legacy_history([_legacy_deal(dealer=2)]), "history deal 0: dealer=2 is not a seat 0..1"),
    (_legacy_history([_legacy_deal(), _legacy_deal(actions=[[0, 1], [1]])], num_deals=2),
     "history deal 1 actions[1]: [1] is not a [player, action] pair of ints"),
    (_legacy_history([_legacy_deal(actions={})]),
     "history deal 0 actions: must be a list of [player, action] pairs"),
    (_legacy_history([_legacy_deal(illegal=[0, 99])]),
     "history deal 0: a forfeit needs illegal_action='terminate'"),
    (_legacy_history([_legacy_deal(illegal=[0]), _legacy_deal()], num_deals=2,
                     illegal_action="terminate"),
     "history deal 0 illegal[0]: [0] is not a [player, action] pair of ints"),
    (_legacy_history([_legacy_deal(illegal=[0, 99]), _legacy_deal(), _legacy_deal()],
                     num_deals=3, illegal_action="terminate"),
     "history deal 0: a forfeit ends the match, yet deals follow"),
    (_legacy_history([_legacy_deal(), _legacy_deal(illegal=[0, 99]), _legacy_deal()],
                     num_deals=3, illegal_action="terminate"),
     "history deal 1: a forfeit ends the match, yet deals follow"),
])
def test_a_malformed_history_says_word_for_word_what_is_wrong(data, message):
    with pytest.raises(HistoryError) as info:
        history.load(data)
    assert str(info.value) == message


def test_a_format_1_deal_needs_its_reshuffles_as_lists_of_card_ids():
    data = finished_record()
    for bad in ("x", [1], [[0.5]]):
        data["deals"][0]["reshuffles"] = bad
        with pytest.raises(HistoryError) as info:
            history.load(resigned(data))
        assert str(info.value) == ("history deal 0: 'reshuffles' must be a list of lists of "
                                   "card ids")
    del data["deals"][0]["reshuffles"]
    with pytest.raises(HistoryError) as info:
        history.load(resigned(data))
    assert str(info.value) == "history deal 0: 'reshuffles' is missing"


def test_a_history_nested_too_deeply_is_refused():
    with pytest.raises(HistoryError) as info:
        history.load("[" * 100_000 + "]" * 100_000)
    assert str(info.value) == "history is nested too deeply to be a history"
    with pytest.raises(HistoryError) as info:
        history.load("[1]")
    assert str(info.value) == "a history is a JSON object, got list"


def test_canonical_json_and_digest_against_the_standard_library():
    """The digest's text: sorted keys, no spaces, ASCII escapes, no NaN; the digest is
    hashlib's SHA-256 of that text, not a re-derivation of ours."""
    import hashlib

    body = {"b": [1, 2], "a": "é", "c": {"z": None, "y": True}}
    text = '{"a":"\\u00e9","b":[1,2],"c":{"y":true,"z":null}}'
    assert history.canonical_json(body) == text
    assert history.digest(body) == hashlib.sha256(text.encode("ascii")).hexdigest()
    with pytest.raises(ValueError):
        history.canonical_json({"a": float("nan")})


def _format_1(change) -> dict:
    data = finished_record(num_players=2)
    change(data)
    return data


def _nan_deck(data: dict) -> None:
    data["deals"][0]["deck"][0] = float("nan")


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(history_format=2),
     "history_format=2: this version of pis_env reads format 1 (and the unversioned "
     "histories written before it)"),
    (lambda d: d.update(history_format=True),
     "history_format=True: this version of pis_env reads format 1 (and the unversioned "
     "histories written before it)"),
    (lambda d: d.update(extra=1),
     "history: unknown key(s) ['extra']; allowed: ['deals', 'env', 'history_format', "
     "'rules', 'sha256']"),
    (lambda d: d.update(env="pis_yedili_v1x"), "history is for 'pis_yedili_v1x', not a "
     "pis_yedili env"),
    (lambda d: d.update(env=5), "history is for 5, not a pis_yedili env"),
    (lambda d: d.update(sha256=5),
     "history has no sha256 digest (every format-1 history carries one)"),
    (_nan_deck, "history is not plain JSON data: Out of range float values are not JSON "
     "compliant"),
    (lambda d: d["rules"].update(seats={1}),
     "history is not plain JSON data: Object of type set is not JSON serializable"),
])
def test_a_format_1_header_error_says_word_for_word_what_is_wrong(change, message):
    with pytest.raises(HistoryError) as info:
        history.load(_format_1(change))
    assert str(info.value) == message


def test_a_changed_history_names_both_digests():
    data = finished_record(num_players=2)
    data["deals"][0]["actions"].pop()
    body = {k: v for k, v in data.items() if k != "sha256"}
    import hashlib

    content = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"))
                             .encode()).hexdigest()
    with pytest.raises(HistoryError) as info:
        history.load(data)
    assert str(info.value) == (
        "history digest mismatch: it was changed after it was written "
        f"(sha256 {data['sha256'][:16]}..., content {content[:16]}...)")


def test_replay_errors_say_word_for_word_where_the_history_goes_wrong():
    data = finished_record(num_players=2)
    actions = data["deals"][0]["actions"]
    first, last = actions[0], actions[-1]
    # an action after the deal's end
    late = copy.deepcopy(data)
    late["deals"][0]["actions"].append(last)
    with pytest.raises(HistoryError) as info:
        pis_env.raw_env.from_history(resigned(late))
    assert str(info.value) == (f"history deal 0 action {len(actions)}: the deal is "
                               "already over")
    # the other player's move first
    wrong = copy.deepcopy(data)
    wrong["deals"][0]["actions"][0] = [1 - first[0], first[1]]
    with pytest.raises(HistoryError) as info:
        pis_env.raw_env.from_history(resigned(wrong))
    assert str(info.value) == (f"history deal 0 action 0: it is player_{first[0]}'s turn, "
                               f"not player_{1 - first[0]}'s")
    # a deal cut short
    two = finished_record(num_players=2, num_deals=2)
    two["deals"][0]["actions"].pop()
    with pytest.raises(HistoryError) as info:
        pis_env.raw_env.from_history(resigned(two))
    assert str(info.value) == "history deal 1: the previous deal is not over after its actions"


def test_a_reshuffle_error_names_the_action_and_the_count():
    data = reshuffled_history()
    made = len(data["deals"][0]["reshuffles"])
    extra = copy.deepcopy(data)
    extra["deals"][0]["reshuffles"].append(data["deals"][0]["reshuffles"][0])
    with pytest.raises(HistoryError) as info:
        pis_env.raw_env.from_history(resigned(extra))
    assert str(info.value) == (f"history deal 0: records {made + 1} reshuffle(s), the "
                               f"actions made {made}")
    missing = copy.deepcopy(data)
    missing["deals"][0]["reshuffles"] = []
    with pytest.raises(HistoryError) as info:
        pis_env.raw_env.from_history(resigned(missing))
    assert str(info.value).startswith("history deal 0 action ")
    assert "must be reshuffled" in str(info.value)
    with pytest.raises(HistoryError) as info:
        pis_env.raw_env.from_history(legacy(data))
    text = str(info.value)
    assert text.startswith("history deal 0 action ") and text.endswith(
        ": the stock runs out and is reshuffled here, but this history has no "
        "history_format: it was written before format 1, which does not record reshuffle "
        "orders, so it cannot be replayed past this point")


def forfeited_history(deals: int = 2, at: int = 3) -> tuple[dict, object]:
    """A match whose last deal ends in a forfeit (an illegal move under
    ``illegal_action="terminate"``), and the env that wrote it."""
    env = pis_env.raw_env(num_players=2, num_deals=deals, illegal_action="terminate")
    env.reset(seed=4)
    rng = random.Random(4)
    while env.game.deal_index < deals - 1:
        env.step(rng.choice(env.game.legal_actions()))
    for _ in range(at):
        env.step(rng.choice(env.game.legal_actions()))
    env.step(next(a for a in range(58) if not env.game.is_legal(a)))
    assert env.game.match_over
    return json.loads(env.export_history()), env


def test_only_the_forfeited_deal_records_its_forfeit():
    data, env = forfeited_history()
    assert "illegal" not in data["deals"][0] and len(data["deals"][1]["illegal"]) == 2
    assert "illegal" not in history.record(env.game)["deals"][1]  # no forfeits given
    assert pis_env.raw_env.from_history(data).game.charges == env.game.charges


def test_a_forfeit_error_says_word_for_word_what_is_wrong():
    data, _ = forfeited_history(deals=1)
    player, action = data["deals"][0]["illegal"]
    legal = copy.deepcopy(data)
    replayed = pis_env.raw_env(num_players=2, illegal_action="terminate")
    replayed.reset(options={"deck": data["deals"][0]["deck"],
                            "dealer": data["deals"][0]["dealer"]})
    for _, a in data["deals"][0]["actions"]:
        replayed.step(a)
    legal_action = replayed.game.legal_actions()[0]
    legal["deals"][0]["illegal"] = [player, legal_action]
    with pytest.raises(HistoryError) as info:
        pis_env.raw_env.from_history(resigned(legal))
    assert str(info.value) == f"history deal 0: the forfeit's action {legal_action} is legal"
    other = copy.deepcopy(data)
    other["deals"][0]["illegal"] = [1 - player, action]
    with pytest.raises(HistoryError) as info:
        pis_env.raw_env.from_history(resigned(other))
    assert str(info.value) == (f"history deal 0 forfeit: it is player_{player}'s turn, "
                               f"not player_{1 - player}'s")


def test_a_digest_without_a_format_is_not_read_as_an_old_history():
    data = finished_record(num_players=2)
    del data["history_format"]
    with pytest.raises(HistoryError) as info:
        history.load(data)
    assert str(info.value).startswith("history_format=None: this version of pis_env reads")


def test_header_errors_of_dict_input_nested_deeply_or_keyed_by_numbers():
    data = finished_record(num_players=2)
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(HistoryError) as info:
        history.load({**data, "deals": deep})
    assert str(info.value) == "history is nested too deeply to be a history"
    with pytest.raises(HistoryError) as info:
        history.load({**data, 1: "x", "extra": 2})
    assert str(info.value) == ("history: unknown key(s) [1, 'extra']; allowed: ['deals', "
                               "'env', 'history_format', 'rules', 'sha256']")
