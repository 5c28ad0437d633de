"""Building positions from what a seat sees (``agents.belief.state_from_obs``) and the
small sampling and scoring helpers of ``agents.belief.tracker``: every argument reaches
the code it names, checked against a second way of asking for the same thing."""

from __future__ import annotations

import numpy as np
import pytest

from agents.belief.state_from_obs import ObservedPosition, state_from_observation
from agents.belief.tracker import expected_correct, sample_hidden, sample_hidden_batch
from pis_env import decode_observation, raw_env
from pis_env.rules import Rules


def observation_with_hints(num_players: int = 3, num_deals: int = 1, seed: int = 2):
    """An ``observe()`` dict of seat 0 to move, some moves in, with a drew-on-suit hint
    recorded for an opponent (so the void weight matters)."""
    env = raw_env(num_players=num_players, num_deals=num_deals, draw_rule="until_playable")
    rng = np.random.default_rng(seed)
    for attempt in range(50):
        env.reset(seed=seed + attempt)
        for _ in range(60):
            agent = env.agent_selection
            obs = env.observe(agent)
            if env.game.deal_over:
                break
            if agent == "player_0":
                decoded = decode_observation(obs["observation"], num_players, num_deals)
                if any(decoded["drew_on_suit"]):
                    return obs
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    raise AssertionError("no position with a hint")


def same_state(a, b) -> bool:
    return (a.hands, a.stock, a.current, a.rules) == (b.hands, b.stock, b.current, b.rules)


def test_from_observation_reads_the_dict_or_the_vector_and_passes_its_options():
    obs = observation_with_hints()
    rules = Rules(num_players=3, draw_rule="until_playable")
    decoded = decode_observation(obs["observation"], 3)
    direct = ObservedPosition(decoded, rules, void_weight=0.3)
    for source in (obs, obs["observation"]):
        position = ObservedPosition.from_observation(source, 3, rules=rules, void_weight=0.3)
        assert position.rules == direct.rules and position.void_weight == 0.3
        assert position.hand == direct.hand and position.sizes == direct.sizes
        assert same_state(position.sample(np.random.default_rng(1)),
                          direct.sample(np.random.default_rng(1)))
    assert ObservedPosition.from_observation(obs, 3).rules.draw_rule == "free"


def test_from_observation_of_a_match_reads_its_deals():
    obs = observation_with_hints(num_players=2, num_deals=2)
    position = ObservedPosition.from_observation(obs, 2, num_deals=2)
    assert position.hand == ObservedPosition(
        decode_observation(obs["observation"], 2, 2)).hand
    with pytest.raises(ValueError):
        ObservedPosition.from_observation(obs, 2)  # a one-deal reading of a match vector


def test_state_from_observation_is_the_positions_sample_with_every_option():
    obs = observation_with_hints()
    rules = Rules(num_players=3, draw_rule="until_playable")
    decoded = decode_observation(obs["observation"], 3)
    for weight in (None, 0.05):
        want = ObservedPosition(decoded, rules, void_weight=weight).sample(
            np.random.default_rng(9))
        for source in (obs, decoded):
            got = state_from_observation(source, 3, rules=rules, rng=9, void_weight=weight)
            assert same_state(got, want)
    # the two weights deal differently (the hint matters), and the seed matters
    states = [state_from_observation(obs, 3, rules=rules, rng=s, void_weight=w).hands
              for s in range(12) for w in (None, 0.05)]
    assert states[0::2] != states[1::2]
    assert len({tuple(h) for h in states[0::2]}) > 1
    match = observation_with_hints(num_players=2, num_deals=2)
    assert state_from_observation(match, 2, num_deals=2, rng=1).card_count() == 52
    with pytest.raises(ValueError):
        state_from_observation(match, 2, rng=1)  # a one-deal reading of a match vector


def test_sample_hidden_keeps_a_forbidden_card_away_from_its_opponent():
    unseen = np.zeros(52, dtype=bool)
    unseen[:20] = True
    belief = np.full((2, 52), 0.3)
    forbidden = np.zeros((2, 52), dtype=bool)
    forbidden[0, :10] = True  # opponent 1 holds none of cards 0..9
    for seed in range(20):
        hands, stock = sample_hidden(belief, [5, 6, 6], unseen, np.random.default_rng(seed),
                                     forbidden)
        assert hands[0] & ((1 << 10) - 1) == 0
        assert [h.bit_count() for h in hands] == [6, 6] and len(stock) == 8
        assert sorted(stock + [c for h in hands for c in range(52) if h >> c & 1]) == \
            list(range(20))
        batch = sample_hidden_batch(belief, [5, 6, 6], unseen, np.random.default_rng(seed),
                                    1, forbidden)  # one deal is the batch of one
        assert (hands, stock) == (batch[0][0].tolist(), batch[1][0].tolist())


def test_expected_correct_sums_each_held_cards_chance_for_its_holder():
    belief = np.zeros((2, 52))
    belief[0, 3], belief[1, 3] = 0.25, 0.5   # card 3: held by opponent 2
    belief[0, 7] = 0.75                      # card 7: held by opponent 1
    belief[1, 9] = 0.9                       # card 9: in the stock (holder 0)
    holders = np.zeros(52, dtype=np.int64)
    holders[3], holders[7] = 2, 1
    assert expected_correct(belief, holders) == pytest.approx(0.5 + 0.75)


def test_log_loss_is_the_mean_surprise_of_each_unseen_cards_true_place():
    import math

    from agents.belief.tracker import log_loss

    belief = np.zeros((2, 52))
    belief[0, 0], belief[1, 0] = 0.5, 0.25   # card 0: opponent 1 holds it
    belief[0, 1], belief[1, 1] = 0.6, 0.6    # card 1: in the stock; over-full, so 0 left
    belief[1, 2] = 0.2                       # card 2: in the stock, 0.8 left for it
    holders = np.zeros(52, dtype=np.int64)
    holders[0] = 1
    unseen = np.zeros(52, dtype=bool)
    unseen[:3] = True
    want = -(math.log(0.5) + math.log(1e-6) + math.log(0.8)) / 3
    assert log_loss(belief, holders, unseen) == pytest.approx(want)
    holders[0] = 2
    assert log_loss(belief, holders, unseen) == pytest.approx(
        -(math.log(0.25) + math.log(1e-6) + math.log(0.8)) / 3)


def test_a_belief_model_is_found_by_name_and_read_once():
    from agents.belief.tracker import load_model, model_path

    by_name = load_model(4, "belief_2p.pt")  # a name is looked up among the shipped models
    assert by_name is load_model(2) is load_model(3, str(model_path(2)))
    assert by_name.meta["kind"] == "belief"


def scaled(seed=0, stock=6, forbidden=None, clip=5.0):
    from agents.belief.tracker import scale_belief

    rng = np.random.default_rng(seed)
    unseen = np.zeros(52, dtype=bool)
    unseen[rng.choice(52, 20, replace=False)] = True
    sizes = [9, 5, 9]                      # 5 + 9 + a stock of 6 = the 20 unseen cards
    logits = rng.uniform(-clip, clip, size=(2, 52))
    return logits, sizes, stock, unseen, scale_belief(logits, sizes, stock, unseen, forbidden)


def test_scaled_beliefs_are_the_matrix_scaling_of_the_odds():
    """Each unseen card's places (the opponents and the stock) sum to one, each opponent's
    row to its hand size, and within a row the odds against the stock are the given ones
    times one factor per row: the scaling's defining properties, checked on the output."""
    logits, sizes, stock, unseen, p = scaled()
    p_stock = 1.0 - p.sum(axis=0)
    assert (p[:, ~unseen] == 0).all()
    np.testing.assert_allclose(p.sum(axis=1), sizes[1:], rtol=1e-6)
    np.testing.assert_allclose(p_stock[unseen].sum(), stock, rtol=1e-6)
    assert (p_stock[unseen] > 0).all() and (p[:, unseen] > 0).all()
    for k in range(2):
        ratio = p[k, unseen] / (p_stock[unseen] * np.exp(logits[k, unseen]))
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-4)


def test_scaling_clips_extreme_odds_keeps_forbidden_cards_out_and_an_empty_stock():
    from agents.belief.tracker import scale_belief

    logits, sizes, stock, unseen, _ = scaled()
    huge = np.where(logits > 0, 45.0, -45.0)
    np.testing.assert_array_equal(scale_belief(huge, sizes, stock, unseen),
                                  scale_belief(np.sign(logits) * 30, sizes, stock, unseen))
    np.testing.assert_array_equal(scale_belief(logits, sizes, stock, unseen),
                                  scale_belief(logits, sizes, stock, unseen, iterations=30))
    forbidden = np.zeros((2, 52), dtype=bool)
    forbidden[0, np.flatnonzero(unseen)[:4]] = True
    p = scale_belief(logits, sizes, stock, unseen, forbidden)
    assert (p[forbidden] == 0).all()
    np.testing.assert_allclose(p.sum(axis=1), sizes[1:], rtol=1e-6)
    no_stock = scale_belief(logits, [9, 5, 15], 0, unseen)  # the stock is empty
    assert np.isfinite(no_stock).all()
    np.testing.assert_allclose(no_stock.sum(axis=0)[unseen], 1.0, rtol=1e-9)


def test_hints_weigh_each_opponents_own_suits():
    from agents.belief.tracker import HINT_WEIGHT, hint_belief, uniform_belief

    hand, discard = [0, 1, 2], [13, 14]
    decoded = {"hand": hand, "discard": discard, "hand_sizes": [3, 6, 6, 6],
               "stock_size": 52 - 3 - 2 - 18, "drew_on_suit": [[], [1], []]}
    plain = uniform_belief(dict(decoded, hand_sizes=[3, 4, 6, 8], stock_size=29))
    np.testing.assert_allclose(plain[:, 20], [4 / 47, 6 / 47, 8 / 47], rtol=1e-12)
    hinted = hint_belief(decoded)
    diamonds = [c for c in range(13, 26) if c not in discard]
    others = [c for c in range(52) if c // 13 != 1 and c not in hand]
    assert hinted[1, diamonds].mean() < HINT_WEIGHT * 1.5 * hinted[1, others].mean()
    assert hinted[0, diamonds].mean() > hinted[0, others].mean()  # the others hold them
    np.testing.assert_allclose(hinted.sum(axis=1), [6, 6, 6], rtol=1e-6)


@pytest.mark.parametrize("seat", [1, 2, 3])
def test_a_hint_weighs_on_the_hinted_seat_whichever_it_is(seat):
    from agents.belief.tracker import HINT_WEIGHT, hint_belief

    hand, discard = [0, 1, 2], [13, 14]
    hints = [[] for _ in range(3)]
    hints[seat - 1] = [1]
    decoded = {"hand": hand, "discard": discard, "hand_sizes": [3, 6, 6, 6],
               "stock_size": 52 - 3 - 2 - 18, "drew_on_suit": hints}
    hinted = hint_belief(decoded)
    diamonds = [c for c in range(13, 26) if c not in discard]
    others = [c for c in range(52) if c // 13 != 1 and c not in hand]
    for k in (1, 2, 3):
        ratio = hinted[k - 1, diamonds].mean() / hinted[k - 1, others].mean()
        assert (ratio < 1.5 * HINT_WEIGHT) if k == seat else (ratio > 1.0), (k, ratio)
