"""``pair_features`` column by column, from the observation and the tracker's counts.

The shipped belief models read these rows; a column that quietly moves or changes its
scale feeds every (opponent, card) pair a number the model was not trained on, and the
belief only degrades. Each column is recomputed here from its name's meaning
(``FEATURE_NAMES``), card by card, at the positions of seeded three- and four-player games.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.belief.tracker import FEATURE_NAMES, NUM_FEATURES, DealTracker, pair_features
from pis_env import decode_observation, raw_env

#: RULES.md's table: Jack 25, 7 20, Ace 15, King and Queen 10, the others their face value.
FACE = {"J": 25, "7": 20, "A": 15, "K": 10, "Q": 10}
RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]


def points(card: int) -> int:
    rank = RANKS[card % 13]
    return FACE.get(rank) or int(rank)


def tracked_positions(num_players: int, deals: int, seed: int):
    """(decoded, tracker) at each of player_0's decisions, the tracker fed every one."""
    env = raw_env(num_players=num_players)
    rng = np.random.default_rng(seed)
    for d in range(deals):
        env.reset(seed=seed * 100 + d)
        tracker = DealTracker(num_players)
        while not env.game.deal_over:
            obs = env.observe(env.agent_selection)
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            if env.agent_selection == "player_0":
                decoded = decode_observation(obs["observation"], num_players)
                tracker.observe(decoded)
                yield decoded, tracker
                tracker.record(action)
            env.step(action)


def expected_row(decoded, t: DealTracker, k: int, card: int) -> dict[str, float]:
    n = len(decoded["hand_sizes"])
    sizes = decoded["hand_sizes"]
    unseen = 52 - len(decoded["hand"]) - len(decoded["discard"])
    suit, rank = card // 13, card % 13
    top = decoded["top_card"]
    hints = decoded["drew_on_suit"][k - 1]
    row = {f"suit_{s}": float(s == suit) for s in range(4)}
    row.update({f"rank_{r}": float(r == rank) for r in range(13)})
    row.update(
        points=points(card) / 25, is_active_suit=float(suit == decoded["active_suit"]),
        is_top_rank=float(top is not None and top % 13 == rank),
        is_top_suit=float(top is not None and top // 13 == suit),
        stock=decoded["stock_size"] / 52, unseen=unseen / 52, my_hand=sizes[0] / 52,
        pending=float(decoded["pending_sevens"] > 0), players=(n - 2) / 5,
        opp_size=sizes[k] / 52, base_rate=sizes[k] / unseen,
        is_next=float(k == decoded["direction"] % n),
        is_prev=float(k == -decoded["direction"] % n),
        opp_drawn=t.drawn[k] / 20, opp_played=t.played[k] / 20,
        hint=float(suit in hints),
        hint_age=(t.drawn[k] - t.hint_since[k, suit]) / 10 if suit in hints else 0.0,
        hint_count=len(hints) / 4, played_suit=t.played_suit[k, suit] / 5,
        played_rank=t.played_rank[k, rank] / 2, nominated=t.nominated[k, suit],
        nominated_age=t.nominated[k, suit] * (t.drawn[k] - t.nominated_at[k]) / 10,
        refused=float(t.refused[k, card]),
        refused_age=t.refused[k, card] * (t.drawn[k] - t.refused_at[k, card]) / 10,
        hard_void=float(t.void[k, card]),
        unseen_of_suit=sum(1 for c in range(13 * suit, 13 * suit + 13)
                           if c not in decoded["hand"] and c not in decoded["discard"]) / 13,
        last_play_suit=t.last_suit[k, suit],
    )
    return row


@pytest.mark.parametrize("num_players, seed", [(2, 9), (3, 1), (4, 2)])
def test_every_column_means_what_its_name_says(num_players, seed):
    hinted = voided = refused = 0
    for decoded, tracker in tracked_positions(num_players, deals=5, seed=seed):
        f, unseen = pair_features(decoded, tracker)
        assert f.dtype == np.float32 and f.shape == (num_players - 1, 52, NUM_FEATURES)
        seen = set(decoded["hand"]) | set(decoded["discard"])
        assert unseen.tolist() == [c not in seen for c in range(52)]
        assert not f[:, sorted(seen)].any()
        cards = np.flatnonzero(unseen).tolist()
        for k in range(1, num_players):
            rows = [expected_row(decoded, tracker, k, card) for card in cards]
            want = np.array([[row[name] for name in FEATURE_NAMES] for row in rows])
            got = f[k - 1, cards]
            wrong = ~np.isclose(got, want, rtol=1e-5, atol=1e-6)
            assert not wrong.any(), [(k, cards[i], FEATURE_NAMES[j], got[i, j], want[i, j])
                                     for i, j in zip(*np.nonzero(wrong), strict=True)][:5]
            hinted += want[:, FEATURE_NAMES.index("hint")].any()
            voided += want[:, FEATURE_NAMES.index("hard_void")].any()
            refused += want[:, FEATURE_NAMES.index("refused")].any()
    # the positions reach every tracked signal (hard voids are only inferred at 2 players)
    assert hinted and refused and (voided > 0) == (num_players == 2), (hinted, voided, refused)
