"""``decode_observation`` on layout 1 vectors that no table shows: each corruption of a
real observation's public record is refused with its own message, word for word, and
``layout_mismatch`` names the layout a vector's size belongs to.

A decoder that quietly accepted such a vector would hand a bot a history that never
happened; the messages are what a user reads when a stored vector is the wrong one."""

from __future__ import annotations

import numpy as np
import pytest

from pis_env import decode_observation, pis_yedili_v1
from pis_env.events import NUM_EVENT_CODES
from pis_env.observation import Layout, layout_mismatch

N = 2
WHERE = "not an observation of 2 players and 1 deal(s) (layout version 1)"
SEAT, CODE, SIZE = 8.0, 64.0, 52.0  # the scales the layout stores seats, codes, counts at


def observation_with_events() -> np.ndarray:
    """A real v1 observation some moves into a deal: a play and other events in the log,
    empty slots after them."""
    env = pis_yedili_v1.raw_env(num_players=N)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    while True:
        vec = env.observe(env.agent_selection)["observation"].astype(np.float64)
        events = decode_observation(vec, N, 1, 1)["events"]
        if len(events) >= 3 and any(kind == "play" for _, kind, _ in events):
            assert len(events) < slots(vec)
            return vec
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))


def seg(name: str) -> slice:
    return Layout.of(N, 1, 1).offsets[name]


def slots(vec) -> int:
    return len(vec[seg("event_seat")])


def used(vec) -> int:
    return int(np.count_nonzero(vec[seg("event_seat")]))


def refused(vec) -> str:
    with pytest.raises(ValueError) as e:
        decode_observation(vec, N, 1, 1)
    return str(e.value)


def test_a_real_observation_decodes():
    vec = observation_with_events()
    assert decode_observation(vec, N, 1, 1)["events_dropped"] == 0


@pytest.mark.parametrize("name, scale", [("event_seat", 8), ("event_action", 64)])
def test_a_slot_between_two_ids_is_refused(name, scale):
    vec = observation_with_events()
    vec[seg(name).start] += 0.5 / scale
    assert refused(vec) == f"{WHERE}: {name} holds values that are not multiples of 1/{scale}"


def test_a_count_that_is_not_a_count_is_refused():
    for name in ("event_count", "opp_drawn", "opp_drawn_since_play"):
        vec = observation_with_events()
        vec[seg(name).start] = 0.5 / SIZE
        values = vec[seg(name)].tolist()
        assert refused(vec) == f"{WHERE}: {name} holds {values}, not card counts / 52"


@pytest.mark.parametrize("field", ["event_seat", "event_action", "event_count"])
def test_anything_in_a_slot_after_the_first_empty_one_is_a_gap(field):
    vec = observation_with_events()
    first_empty = seg(field).start + used(vec)
    vec[first_empty] = {"event_seat": 1 / SEAT, "event_action": 60 / CODE,
                        "event_count": 1 / SIZE}[field]
    if field == "event_seat":  # a seat there makes the slot used: empty the one before
        vec[seg("event_seat").start + used(vec) - 2] = 0.0
    assert refused(vec) == f"{WHERE}: the event log has a gap (empty slots come last)"


def test_an_event_of_no_seat_or_no_code_is_refused_naming_both():
    vec = observation_with_events()
    first = seg("event_seat").start, seg("event_action").start
    code = round(vec[first[1]] * CODE)
    vec[first[0]] = (N + 1) / SEAT  # seat 2 at a 2-player table, a valid code
    assert refused(vec) == (f"{WHERE}: event (seat {N}, code {code - 1}) is out of range "
                            f"for {N} players")
    vec = observation_with_events()
    seat = round(vec[first[0]] * SEAT)
    vec[first[1]] = (NUM_EVENT_CODES + 1) / CODE
    assert refused(vec) == (f"{WHERE}: event (seat {seat - 1}, code {NUM_EVENT_CODES}) is "
                            f"out of range for {N} players")


def test_a_play_with_a_card_count_is_refused():
    vec = observation_with_events()
    codes = np.rint(vec[seg("event_action")] * CODE).astype(int)
    i = int(np.flatnonzero((codes >= 1) & (codes <= 52))[0])  # a play: no count
    vec[seg("event_count").start + i] = 3 / SIZE
    assert refused(vec) == f"{WHERE}: event code {codes[i] - 1} with card count 3"


def test_the_dropped_events_must_be_fewer_than_infinitely_many_and_need_a_full_log():
    vec = observation_with_events()
    vec[seg("events_dropped").start] = 1.0
    assert refused(vec) == f"{WHERE}: events_dropped d / (d + 16) must be below 1"
    vec[seg("events_dropped").start] = 2 / (2 + 16)
    assert refused(vec) == f"{WHERE}: events were dropped from a log that is not full"


def test_two_suits_nominated_by_one_opponent_is_refused():
    vec = observation_with_events()
    vec[seg("opp_nominated").start:seg("opp_nominated").start + 2] = 1.0
    assert refused(vec) == f"{WHERE}: segment 'opp_nominated' has two suits for one opponent"


def test_a_size_names_the_layout_it_belongs_to():
    v0, v1 = Layout.of(2, 1, 0).size, Layout.of(2, 1, 1).size
    assert layout_mismatch(0, None, size=v1) == layout_mismatch(0, 1)
    assert layout_mismatch(1, None, size=v0) == layout_mismatch(1, 0)
    assert layout_mismatch(0, None, size=v0) == ""  # its own size: no other layout's
    assert layout_mismatch(0, None, size=v1 + 1) == ""
    v1_3p = Layout.of(3, 1, 1).size
    assert layout_mismatch(0, None, size=v1_3p) == ""  # a 3-player size at a 2-player table
    assert layout_mismatch(0, None, 3, size=v1_3p) == layout_mismatch(0, 1, 3)
    assert layout_mismatch(0, 1) == (
        "built for observation layout version 0 (pis_yedili_v0), but the table shows layout "
        "version 1 (pis_yedili_v1): seat it at a pis_yedili_v0 table, or use a bot built for "
        "pis_yedili_v1")


def test_a_v1_bit_segment_holding_a_fraction_is_refused():
    """The bit checks read layout 1's own bit segments, not only layout 0's."""
    for name in ("opp_refused_suits", "opp_refused_ranks", "opp_nominated"):
        vec = observation_with_events()
        vec[seg(name).start] = 0.5
        assert refused(vec) == f"{WHERE}: segment {name!r} must hold only 0/1, found 0.5"


def test_the_v1_encoder_defaults_to_one_deal():
    from pis_env.observation import ObservationEncoderV1

    assert ObservationEncoderV1(N).tensor.shape == (Layout.of(N, 1, 1).size,)


# ------------------------------------------------------------------ layout 0's position
WHERE_V0 = "not an observation of 2 players and 1 deal(s)"


def position_vector():
    """A real layout-0 observation in the play phase with a plain card on top (not a
    Jack, not a 7) and hands of two sizes, so each fact below can be broken on its own."""
    from pis_env import raw_env

    env = raw_env(num_players=N)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    while True:
        vec = env.observe(env.agent_selection)["observation"].astype(np.float64)
        d = decode_observation(vec, N)
        if d["top_card"] is not None and d["top_card"] % 13 not in (5, 9) and \
                d["phase"] == "play" and len(d["discard"]) >= 3 and \
                d["hand_sizes"][0] != d["hand_sizes"][1]:
            return vec, d
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))


def v0_seg(name: str) -> slice:
    return Layout.of(N, 1, 0).offsets[name]


def refused_v0(vec) -> str:
    with pytest.raises(ValueError) as e:
        decode_observation(vec, N)
    return str(e.value)


def test_an_impossible_position_is_refused_naming_what_is_wrong():
    from pis_env.cards import NUM_RANKS

    vec, d = position_vector()
    top, suit, hand, pile = d["top_card"], d["active_suit"], set(d["hand"]), set(d["discard"])
    free = [c for c in range(52) if c not in hand and c not in pile]

    v = vec.copy()
    v[v0_seg("hand").start + free[0]] = 1.0
    assert refused_v0(v) == (f"{WHERE_V0}: the observer holds {len(hand) + 1} cards but its "
                             f"hand size says {len(hand)}")
    v = vec.copy()
    on_pile = next(c for c in pile if c != top)
    v[v0_seg("hand").start + on_pile] = 1.0
    assert refused_v0(v) == (f"{WHERE_V0}: the observer holds {len(hand) + 1} cards but its "
                             f"hand size says {len(hand)}; a card is both in the hand and on "
                             "the discard pile")
    v = vec.copy()
    v[v0_seg("top_card").start + top] = 0.0
    assert refused_v0(v) == f"{WHERE_V0}: the top card and the discard pile disagree"
    v = vec.copy()
    other = next(c for c in free if c // NUM_RANKS == suit and c % NUM_RANKS not in (5, 9))
    v[v0_seg("top_card")] = 0.0
    v[v0_seg("top_card").start + other] = 1.0
    assert refused_v0(v) == f"{WHERE_V0}: the top card is not on the discard pile"
    v = vec.copy()
    v[v0_seg("active_suit")] = 0.0
    v[v0_seg("active_suit").start + (suit + 1) % 4] = 1.0
    assert refused_v0(v) == f"{WHERE_V0}: the active suit is not the top card's suit"
    from pis_env.engine import PHASE_NAMES

    v = vec.copy()
    v[v0_seg("phase")] = 0.0
    v[v0_seg("phase").start + PHASE_NAMES.index("nominate")] = 1.0
    assert refused_v0(v) == f"{WHERE_V0}: phase nominate without a Jack on top"
    v = vec.copy()
    v[v0_seg("pending_sevens")] = 0.0
    v[v0_seg("pending_sevens").start + 1] = 1.0
    assert refused_v0(v) == f"{WHERE_V0}: sevens pending without a 7 on top"


def test_a_vector_of_the_wrong_size_names_the_layout_it_fits_if_any():
    v0, v1 = Layout.of(N, 1, 0).size, Layout.of(N, 1, 1).size
    with pytest.raises(ValueError) as e:
        decode_observation(np.zeros(v1), N)
    assert str(e.value) == (f"observation has shape ({v1},); layout version 0 for 2 players "
                            f"and 1 deals needs ({v0},) (that is layout version 1's size)")
    with pytest.raises(ValueError) as e:
        decode_observation(np.zeros(v0 + 1), N)
    assert str(e.value) == (f"observation has shape ({v0 + 1},); layout version 0 for 2 "
                            f"players and 1 deals needs ({v0},)")


def test_a_stock_size_that_is_not_a_count_is_refused():
    vec, _ = position_vector()
    vec[v0_seg("stock_size").start] += 0.4 / SIZE
    values = vec[v0_seg("stock_size")].tolist()
    assert refused_v0(vec) == f"{WHERE_V0}: stock_size holds {values}, not card counts / 52"


def test_a_match_score_of_one_is_refused():
    from pis_env import raw_env

    env = raw_env(num_players=N, num_deals=2)
    env.reset(seed=1)
    vec = env.observe(env.agent_selection)["observation"].astype(np.float64)
    scores = Layout.of(N, 2, 0).offsets["scores"]
    vec[scores.start] = 1.0
    with pytest.raises(ValueError) as e:
        decode_observation(vec, N, 2)
    assert str(e.value) == ("not an observation of 2 players and 2 deal(s): scores "
                            "t / (t + 100) must be below 1")


def test_each_opponents_drawn_on_suits_are_its_own_at_four_players():
    """Against the engine's own record (``drew_on``, per seat), at every decision of
    random four-player play in the variant that draws most."""
    from pis_env import raw_env

    n = 4
    env = raw_env(num_players=n, draw_rule="until_playable")
    seen = set()
    for seed in range(6):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not env.game.deal_over:
            agent = env.agent_selection
            seat = env.possible_agents.index(agent)
            obs = env.observe(agent)
            got = decode_observation(obs["observation"], n)["drew_on_suit"]
            for k in range(1, n):
                mask = env.game.drew_on[(seat + k) % n]
                want = [s for s in range(4) if mask >> s & 1]
                assert got[k - 1] == want
                if want:
                    seen.add(k)
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert seen == {1, 2, 3}
