"""The two-player v0 windows the particle filter rebuilds (agents.belief.v0_events):
wherever a window is rebuilt it equals the v1 observation's event log of the same
position (the env's own record, an independent reference), and most windows are."""

from __future__ import annotations

import numpy as np
import pytest

from agents.belief import v0_events
from pis_env import decode_observation
from pis_env.engine import GameState
from pis_env.observation import observation_encoder
from pis_env.rules import Rules

VARIANTS = [{}, {"seven_penalty": "double"}, {"after_penalty": "continue"},
            {"draw_rule": "one"}, {"nominate": "other"}]


@pytest.mark.parametrize("options", VARIANTS)
def test_rebuilt_windows_equal_the_v1_log(options):
    rules = Rules(num_players=2, **options)
    v0, v1 = observation_encoder(2, 1, 0), observation_encoder(2, 1, 1)
    rebuilt = total = 0
    for seed in range(25):
        rng = np.random.default_rng(seed)
        state = GameState(rules, seed=seed)
        prev = action = None
        while not state.deal_over:
            if state.current == 0:
                old = decode_observation(v0.encode(state, 0), 2)
                truth = decode_observation(v1.encode(state, 0), 2, 1, 1)["events"]
                if prev is None:
                    got = v0_events.deal_start(old)
                    marker = max(i for i, e in enumerate(truth) if e[1] == "deal")
                    truth = truth[marker:]
                else:
                    got = v0_events.window(prev, action, old, rules)
                total += 1
                if got is not None:
                    rebuilt += 1
                    assert [tuple(e) for e in got] == [tuple(e) for e in truth], (seed, got,
                                                                                    truth)
                prev = old
                action = int(rng.choice(state.legal_actions()))
            else:
                action_other = int(rng.choice(state.legal_actions()))
                state.apply(action_other)
                continue
            state.apply(action)
    assert total > 500
    assert rebuilt > 0.95 * total, (rebuilt, total)  # measured: 98%


# ------------------------------------------------------------------ windows written by hand
# Two snapshots written out for each case, the events RULES.md says happened between
# them: stacked sevens cost 3 per seven (``add``) or 3, 6, 12 (``double``).
C7, D7, H7, S7 = 5, 18, 31, 44      # the four 7s
C2, C3, D9, HA, H4 = 0, 1, 20, 38, 28   # 2C, 3C, 9D, AH, 4H


def snap(discard, sizes, pending=0, top="last", suit=0):
    """The fields ``window`` reads of a snapshot; the top card the pile's last unless
    given."""
    return {"discard": list(discard), "hand_sizes": list(sizes), "pending_sevens": pending,
            "top_card": (discard[-1] if discard else None) if top == "last" else top,
            "active_suit": suit}


@pytest.mark.parametrize("rule, cost", [("add", 9), ("double", 12)])
def test_a_third_seven_costs_the_opponent_what_the_rule_says(rule, cost):
    rules = Rules(num_players=2, seven_penalty=rule)
    prev = snap([C2, C7, D7], [5, 6], pending=2)
    new = snap([C2, C7, D7, H7], [4, 6 + cost], suit=2)
    assert v0_events.window(prev, H7, new, rules) == [(0, "play", H7), (1, "penalty", cost)]
    # the seat that takes three sevens itself draws the same
    assert v0_events.window(snap([C7, D7, H7], [5, 6], pending=3), 56,
                            snap([C7, D7, H7, C3], [5 + cost, 5]), rules)[0] == \
        (0, "penalty", cost)


def test_an_answered_seven_and_a_penalty_then_a_play():
    rules = Rules(num_players=2, after_penalty="continue")
    prev = snap([C2, C7], [5, 6], pending=1)
    answered = snap([C2, C7, D7, H7], [4, 5], suit=2)
    assert v0_events.window(prev, D7, answered, rules) == [(0, "play", D7), (1, "play", H7)]
    went_on = snap([C2, C7, D7, D9], [4, 6 + 6 - 1], suit=1)
    assert v0_events.window(prev, D7, went_on, rules) == [
        (0, "play", D7), (1, "penalty", 6), (1, "play", D9)]
    assert v0_events.window(prev, D7, snap([C2, C7, D7], [4, 12]), rules) is None
    drew_and_passed = snap([C2, C7, D7], [4, 6 + 6 + 1])  # the penalty, then one more card
    assert v0_events.window(prev, D7, drew_and_passed, rules) == [
        (0, "play", D7), (1, "penalty", 6), (1, "draw", 1), (1, "pass", None)]
    end_turn = Rules(num_players=2)
    assert v0_events.window(prev, D7, snap([C2, C7, D7], [4, 12]), end_turn) == [
        (0, "play", D7), (1, "penalty", 6)]
    assert v0_events.window(prev, D7, went_on, end_turn) is None
    assert v0_events.window(prev, D7, snap([C2, C7, D7], [4, 10]), end_turn) is None


def test_a_deal_start_is_rebuilt_from_the_first_snapshot():
    assert v0_events.deal_start(snap([], [7, 7])) == [(1, "deal", None)]
    assert v0_events.deal_start(snap([C2], [7, 6])) == [(0, "deal", None), (1, "play", C2)]
    assert v0_events.deal_start(snap([C2], [7, 8])) == [
        (0, "deal", None), (1, "draw", 2), (1, "play", C2)]
    assert v0_events.deal_start(snap([C2], [7, 5])) is None   # fewer cards than dealt
    assert v0_events.deal_start(snap([C2], [6, 6])) is None   # the seat has played
    assert v0_events.deal_start(snap([C2, C3], [7, 5])) is None


def test_an_ace_and_its_extra_play_and_two_plays_that_are_not():
    rules = Rules(num_players=2)
    prev = snap([C2, H4], [5, 6], suit=2)
    ace_extra = snap([C2, H4, D9, HA, H7], [4, 4], top=H7, suit=2)
    assert v0_events.window(prev, D9, ace_extra, rules) == [
        (0, "play", D9), (1, "play", HA), (1, "play", H7)]
    two = snap([C2, H4, D9, C3, H7], [4, 4], top=H7, suit=2)
    assert v0_events.window(prev, D9, two, rules) is None
    assert v0_events.window(prev, D9, snap([C2, H4, D9, C3], [4, 5], top=None), rules) is None
    # a snapshot whose top card is not one the opponent played cannot be rebuilt
    assert v0_events.window(prev, D9, snap([C2, H4, HA, D9], [4, 5], top=D9), rules) is None
