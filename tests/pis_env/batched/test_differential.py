"""The batched engine against the reference engine, step by step.

The differential runs deal thousands of stacked decks (seeded permutations) to both the
batched engine and ``GameState``, drive them with the same random legal actions (the
batched random policy's choices, which the reference must accept as legal), and compare
at every step: current player, mask, the current player's observation and one other
seat's, and at every deal's end the reason, charges, winners and rewards, and the final
observation of every seat.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from agents.greedy import greedy_action
from agents.greedy.batched import GreedyPolicy
from pis_env.aec import mask_array
from pis_env.batched import (
    REASON_NAMES,
    BatchedGame,
    RandomPolicy,
    uint8_scale,
)
from pis_env.batched import kernels as K
from pis_env.cards import CARD_POINTS, JACKS, SUIT_MASKS, points_of
from pis_env.engine import DRAW, NOMINATE_BASE, PASS, GameState, IllegalActionError
from pis_env.observation import ObservationEncoder
from pis_env.rules import Rules
from pis_env.scoring import deal_rewards


class BatchedReshuffles:
    """The reshuffle orders of one batched game, as the engine's scripted-reshuffle
    mechanism reads them (``GameState(reshuffles=...)``, what a replay uses): the engine
    runs its real reshuffle path (``_refill_stock``: the pile under its top card becomes
    the stock, the given order checked against those cards) and only the random order
    comes from the batched engine. The reference steps after the batched engine, so the
    order asked for is the one the batched stock holds now, read in draw order (two
    reshuffles in one step would leave only the second readable: the engine's check then
    fails loudly)."""

    def __init__(self, game: BatchedGame, b: int):
        self.game, self.b = game, b

    def __len__(self) -> int:
        return sys.maxsize  # every reshuffle the deal needs

    def __getitem__(self, done: int) -> list[int]:
        st = self.game.st[self.b]
        return self.game.stock[self.b, :st[K.SLEN]].tolist()


def reference_state(rules: Rules, deck: list, dealer: int, game: BatchedGame,
                    b: int) -> GameState:
    """The engine dealing ``deck`` from ``dealer``, reshuffling as batched game ``b``."""
    state = GameState(rules, deck=deck, dealer=dealer,
                      reshuffles=[[] for _ in range(rules.num_deals)])
    # the constructor copies given orders into lists; these are read when needed
    state._scripted = [BatchedReshuffles(game, b) for _ in range(rules.num_deals)]
    return state


def greedy_reference(state: GameState) -> int:
    """The greedy rule of ``agents.greedy`` written plainly on the reference state."""
    legal = state.legal_actions()
    cards = [a for a in legal if a < 52]
    if cards:
        return max(cards, key=lambda c: (CARD_POINTS[c], -c))
    noms = [a for a in legal if NOMINATE_BASE <= a < DRAW]
    if noms:
        hand = state.hands[state.current] & ~JACKS

        def key(a):
            suited = hand & SUIT_MASKS[a - NOMINATE_BASE]
            return suited.bit_count(), points_of(suited), -a

        return max(noms, key=key)
    return DRAW if DRAW in legal else PASS


def greedy_expected(state: GameState) -> int:
    """The greedy agent's choice, which must be the rule written plainly above."""
    expected = greedy_action(state.legal_actions(), state.hands[state.current])
    assert expected == greedy_reference(state)
    return expected


def run_differential(rules: Rules, num_games: int, seed: int, *, illegal_rate: float = 0.0,
                     greedy_share: float = 0.0, max_steps: int = 5000) -> dict:
    """Play ``num_games`` stacked-deck matches in both engines; assert agreement."""
    n = rules.num_players
    rng = np.random.default_rng(seed)
    decks = np.stack([
        np.stack([rng.permutation(52) for _ in range(rules.num_deals)])
        for _ in range(num_games)
    ])
    dealers = rng.integers(n, size=num_games)
    game = BatchedGame(num_games, rules, seed=seed)
    game.reset(decks=decks, dealers=dealers)
    refs = []
    for b in range(num_games):
        refs.append(reference_state(rules, decks[b].tolist(), int(dealers[b]), game, b))
    enc = ObservationEncoder(n, rules.num_deals)
    policy = RandomPolicy(num_games, seed=seed + 1)
    greedy = GreedyPolicy(num_games)
    use_greedy = rng.random(num_games) < greedy_share
    active = np.ones(num_games, dtype=bool)
    stats = {"decisions": 0, "deals": 0, "reasons": {}, "reshuffles": 0}

    def compare_positions(games: np.ndarray, step: int) -> None:
        """Current player, mask, the current player's and one other seat's observation
        of ``games``, compared in one go (a mismatch is then located and named)."""
        if not len(games):
            return
        cur = np.array([refs[b].current for b in games])
        other = (cur + 1 + (games + step) % (n - 1)) % n
        ref_masks = np.stack([
            mask_array(refs[b].legal_mask()) if not refs[b].match_over
            else np.zeros(58, np.int8) for b in games
        ])
        ref_obs = np.stack([enc.encode(refs[b], refs[b].current) for b in games])
        ref_other = np.stack([enc.encode(refs[b], int(o)) for b, o in zip(games, other)])
        got_other = game.observe(seats=other, games=games)
        checks = [
            ("current player", game.st[games, K.CUR], cur),
            ("mask", game.masks[games], ref_masks),
            ("observation of the current player", game.obs[games], ref_obs),
            ("observation of another seat", got_other, ref_other),
        ]
        for what, got, want in checks:
            if not np.array_equal(got, want):
                bad = np.flatnonzero((got != want).reshape(len(games), -1).any(axis=1))[0]
                b = games[bad]
                raise AssertionError(
                    f"game {b} step {step} ({rules}): {what} differs: "
                    f"batched {got[bad].tolist()} != reference {want[bad].tolist()}; "
                    f"actions so far {refs[b].history}"
                )

    compare_positions(np.arange(num_games), 0)
    for step in range(1, max_steps + 1):
        if not active.any():
            break
        actions = policy(game).copy()
        greedy_actions = greedy(game)
        actions[use_greedy] = greedy_actions[use_greedy]
        actions[~active] = -1
        if illegal_rate:
            for b in np.flatnonzero(active & (rng.random(num_games) < illegal_rate)):
                legal = refs[b].legal_mask()
                bad = [a for a in range(58) if not (legal >> a) & 1]
                actions[b] = bad[rng.integers(len(bad))]
        for b in np.flatnonzero(use_greedy & active):
            assert greedy_actions[b] == greedy_expected(refs[b]), f"game {b}: greedy"
        result = game.step(actions)
        for b in np.flatnonzero(active):
            ref = refs[b]
            a = int(actions[b])
            player = ref.current
            try:
                ref.apply(a)
            except IllegalActionError:
                assert rules.illegal_action == "terminate", f"game {b}: {a} illegal"
                ref.forfeit(player)
            stats["decisions"] += 1
            if ref.deal_over:
                stats["deals"] += 1
                stats["reshuffles"] += len(ref.deal_reshuffles[-1])
                stats["reasons"][ref.end_reason] = stats["reasons"].get(ref.end_reason, 0) + 1
                assert REASON_NAMES[result.reason[b]] == ref.end_reason, f"game {b}: reason"
                assert result.charges[b].tolist() == ref.charges, f"game {b}: charges"
                assert result.winners[b].tolist() == ref.winners, f"game {b}: winners"
                if ref.end_reason == "truncated":
                    expected = [0.0] * n
                else:
                    expected = deal_rewards(ref.charges, ref.winners, rules.reward)
                assert result.rewards[b].tolist() == expected, f"game {b}: rewards"
                assert bool(result.done[b]) == ref.match_over, f"game {b}: done"
                if ref.match_over:
                    active[b] = False
                    np.testing.assert_array_equal(
                        game.observe(seats=np.arange(n), games=np.full(n, b)),
                        np.stack([enc.encode(ref, seat) for seat in range(n)]),
                        err_msg=f"game {b}: final observations")
                    assert not game.masks[b].any(), f"game {b}: mask after the end"
                else:
                    ref.next_deal()
            else:
                assert result.reason[b] == 0 and not result.done[b], f"game {b}: not over"
            assert game.totals[b].tolist() == ref.totals, f"game {b}: totals"
        compare_positions(np.flatnonzero(active), step)
    assert not active.any(), "some matches did not finish"
    return stats


DIFFERENTIAL_CASES = [
    # (options, games)
    ({"num_players": 2}, 1000),
    ({"num_players": 3}, 800),
    ({"num_players": 4}, 600),
    ({"num_players": 7}, 400),
    ({"num_players": 2, "draw_rule": "one"}, 400),
    ({"num_players": 3, "draw_rule": "until_playable"}, 400),
    ({"num_players": 3, "seven_penalty": "double", "after_penalty": "continue"}, 400),
    ({"num_players": 2, "after_penalty": "continue", "reward": "win"}, 400),
    ({"num_players": 4, "nominate": "other", "reward": "win"}, 300),
    ({"num_players": 4, "opening": "first_round"}, 300),
    ({"num_players": 5, "opening": "first_round", "draw_rule": "one",
      "seven_penalty": "double", "nominate": "other"}, 300),
    ({"num_players": 3, "num_deals": 3}, 200),
    ({"num_players": 2, "num_deals": 4, "reward": "win", "draw_rule": "until_playable"}, 200),
    ({"num_players": 2, "max_turns": 25}, 300),
    ({"num_players": 6, "empty_stock": "reshuffle", "max_turns": 300}, 200),
    ({"num_players": 2, "empty_stock": "reshuffle", "seven_penalty": "double",
      "draw_rule": "one"}, 100),
]


@pytest.mark.parametrize(
    "options,games", DIFFERENTIAL_CASES,
    ids=["-".join(f"{k}={v}" for k, v in o.items()) for o, _ in DIFFERENTIAL_CASES],
)
def test_differential(options, games):
    stats = run_differential(Rules(**options), games, seed=len(str(options)) + games)
    assert stats["deals"] >= games
    if options.get("max_turns") == 25:
        assert stats["reasons"].get("truncated", 0) > 0
    if options.get("empty_stock") == "reshuffle":  # the engine's own reshuffles, compared
        assert stats["reshuffles"] > 20


def test_differential_illegal_actions_terminate():
    rules = Rules(num_players=3, illegal_action="terminate")
    stats = run_differential(rules, 300, seed=11, illegal_rate=0.02)
    assert stats["reasons"].get("illegal", 0) > 20


def test_differential_greedy_matches_the_rule():
    run_differential(Rules(num_players=4), 300, seed=5, greedy_share=0.6)
    run_differential(Rules(num_players=3, nominate="other", draw_rule="one"), 200, seed=6,
                     greedy_share=1.0)


def test_reshuffles_happen_in_the_reshuffle_differential():
    rules = Rules(num_players=6, empty_stock="reshuffle", max_turns=300)
    game = BatchedGame(200, rules, seed=3)
    policy = RandomPolicy(200, seed=4)
    shrunk = False
    for _ in range(300):
        game.step(policy(game), auto_reset=True)
        shrunk |= bool((game.st[:, K.SLEN] < 52).any())
    assert shrunk


def test_game_state_rebuilds_the_reference_position():
    rules = Rules(num_players=4, num_deals=2, empty_stock="reshuffle", max_turns=200)
    game = BatchedGame(64, rules, seed=8)
    policy = RandomPolicy(64, seed=8)
    enc = ObservationEncoder(4, 2)
    for step in range(250):
        game.step(policy(game), auto_reset=True)
        if step % 10:
            continue
        for b in range(0, 64, 7):
            state = game.game_state(b)
            assert state.card_count() == 52
            assert state.legal_mask() == game.st[b, K.LEGAL]
            for seat in range(4):
                np.testing.assert_array_equal(enc.encode(state, seat),
                                              game.observe(seats=[seat], games=[b])[0])
            if not state.deal_over:  # it plays on like the batched game would
                state.apply(int(policy(game)[b]))


def test_illegal_action_raises_and_changes_nothing():
    game = BatchedGame(8, num_players=3, seed=1)
    before = game.st.copy(), game.stock.copy(), game.rng.copy(), game.obs.copy()
    actions = RandomPolicy(8, seed=2)(game).copy()
    legal = int(game.st[5, K.LEGAL])
    actions[5] = next(a for a in range(58) if not (legal >> a) & 1)
    with pytest.raises(IllegalActionError, match="game 5"):
        game.step(actions)
    for x, y in zip(before, (game.st, game.stock, game.rng, game.obs)):
        np.testing.assert_array_equal(x, y)
    game.step(np.where(np.arange(8) == 5, -1, actions))
    assert game.st[5, K.TURNS] == 0 and (game.st[np.arange(8) != 5, K.TURNS] == 1).all()


def test_stepping_a_finished_match_needs_a_reset():
    game = BatchedGame(4, num_players=2, seed=1, max_turns=1)
    game.step(RandomPolicy(4)(game))
    assert game.done.all() and (game.reason == 4).all()
    with pytest.raises(ValueError, match="over"):
        game.step(np.zeros(4, dtype=np.int64))
    assert (RandomPolicy(4)(game) == -1).all()
    game.reset(games=[1, 2])
    assert game.match_over.tolist() == [True, False, False, True]


def test_seeded_reset_is_reproducible_and_per_game():
    a = BatchedGame(64, num_players=4, seed=7)
    b = BatchedGame(64, num_players=4, seed=7)
    np.testing.assert_array_equal(a.st, b.st)
    np.testing.assert_array_equal(a.stock, b.stock)
    assert len({tuple(r) for r in a.stock.tolist()}) == 64
    policy_a, policy_b = RandomPolicy(64, seed=1), RandomPolicy(64, seed=1)
    for _ in range(200):
        a.step(policy_a(a), auto_reset=True)
        b.step(policy_b(b), auto_reset=True)
    np.testing.assert_array_equal(a.st, b.st)
    np.testing.assert_array_equal(a.obs, b.obs)
    # resetting a subset leaves the others alone; a per-game seed array is honoured
    keep = a.st[10:].copy()
    a.reset(seed=[1, 2, 3], games=[0, 5, 9])
    np.testing.assert_array_equal(a.st[10:], keep)
    c = BatchedGame(3, num_players=4, seed=99)
    c.reset(seed=[1, 2, 3])
    np.testing.assert_array_equal(a.stock[[0, 5, 9]], c.stock)


def test_reset_validates_decks_and_dealers():
    game = BatchedGame(2, num_players=2)
    deck = np.arange(52)
    with pytest.raises(ValueError, match="exactly once"):
        game.reset(decks=np.stack([deck, np.r_[deck[:-1], 0]]))
    with pytest.raises(ValueError, match="shape"):
        game.reset(decks=deck)
    with pytest.raises(ValueError, match="dealer"):
        game.reset(decks=np.stack([deck, deck]), dealers=[0, 2])
    game.reset(decks=np.stack([deck, deck[::-1]]), dealers=[1, 0])
    assert game.field("dealer").tolist() == [1, 0]
    assert game.current.tolist() == [0, 1]
    assert game.stock_cards(0) == list(range(14, 52))


def test_auto_reset_writes_terminal_observations():
    rules = Rules(num_players=3)
    game = BatchedGame(256, rules, seed=0)
    policy = RandomPolicy(256, seed=0)
    term = np.zeros_like(game.obs)
    seen = 0
    for _ in range(400):
        game.step(policy(game), auto_reset=True, terminal_obs=term, terminal_seats=1)
        for b in np.flatnonzero(game.done):
            seen += 1
            assert game.st[b, K.TURNS] == 0 and not game.match_over[b]
            assert term[b, K.O_PHASE:K.O_PHASE + 4].sum() == 1
        assert (game.masks.sum(axis=1) > 0).all()
    assert seen > 100


def test_uint8_observations_scale_to_the_float_ones():
    rules = Rules(num_players=3, num_deals=2)
    f = BatchedGame(64, rules, seed=3)
    u = BatchedGame(64, rules, seed=3, obs_dtype=np.uint8)
    policy = RandomPolicy(64, seed=3)
    scale = uint8_scale(3, 2)
    for _ in range(150):
        actions = policy(f)
        f.step(actions, auto_reset=True)
        # (the fused uint8 step is the same generic code; observe() compiles less)
        u.step(actions, auto_reset=True, write_obs=False)
        np.testing.assert_array_equal(u.st, f.st)
        np.testing.assert_allclose(u.observe() * scale, f.obs, atol=2.5e-3)
        assert u.observe().dtype == np.uint8


def test_random_policy_is_uniform_over_legal_actions():
    game = BatchedGame(20000, num_players=2, seed=0)
    deck = np.arange(52)  # the opener (seat 1) holds the clubs 0, 2, ..., 12
    game.reset(decks=np.tile(deck, (20000, 1)), dealers=0)
    clubs = [0, 2, 4, 6, 8, 10, 12]
    assert game.masks[0, clubs].sum() == 7 and game.masks[0].sum() == 7
    counts = np.bincount(RandomPolicy(20000, seed=1)(game), minlength=58)
    assert counts[clubs].sum() == 20000
    assert np.all(np.abs(counts[clubs] - 20000 / 7) < 200)


def test_importing_pis_env_does_not_import_numba():
    code = "import sys, pis_env, pis_env.aec; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------- BatchedEnv
def lowest_legal(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A deterministic external opponent: the lowest legal action id."""
    return masks.argmax(axis=1)


def run_env_differential(rules: Rules, num_envs: int, seed: int, opponent) -> int:
    """``BatchedEnv`` with deterministic opponents against the reference engine with the
    same opponents, first episode of every game (later ones are shuffled by the env)."""
    from pis_env.batched import BatchedEnv

    n = rules.num_players
    rng = np.random.default_rng(seed)
    decks = np.stack([
        np.stack([rng.permutation(52) for _ in range(rules.num_deals)])
        for _ in range(num_envs)
    ])
    dealers = rng.integers(n, size=num_envs)
    learner_seat = 1 % n
    greedy = GreedyPolicy()  # the bots live in agents: handed to the env as policies
    batched = ([greedy if o == "greedy" else o for o in opponent]
               if isinstance(opponent, list) else greedy if opponent == "greedy" else opponent)
    env = BatchedEnv(num_envs, rules, opponent=batched, learner_seat=learner_seat,
                     seed=seed)
    obs, masks = env.reset(decks=decks, dealers=dealers)
    enc = ObservationEncoder(n, rules.num_deals)
    per_seat = opponent if isinstance(opponent, list) else [opponent] * n

    def opponent_action(state: GameState) -> int:
        opp = per_seat[state.current]
        if opp == "greedy":
            return greedy_reference(state)
        return min(state.legal_actions())

    def play_opponents(state: GameState) -> tuple[float, bool]:
        """Opponents move until the learner's turn; (learner's rewards, match over)."""
        reward = 0.0
        while True:
            if state.deal_over:
                reward += deal_rewards(state.charges, state.winners, rules.reward)[
                    learner_seat] if state.end_reason != "truncated" else 0.0
                if state.match_over:
                    return reward, True
                state.next_deal()
            if state.current == learner_seat:
                return reward, False
            state.apply(opponent_action(state))

    refs, active = [], np.ones(num_envs, dtype=bool)
    for b in range(num_envs):
        state = GameState(rules, deck=decks[b].tolist(), dealer=int(dealers[b]))
        carry, over = play_opponents(state)
        refs.append([state, carry])
        if over:  # the env discarded this match: nothing to compare
            active[b] = False
    for b in np.flatnonzero(active):
        np.testing.assert_array_equal(obs[b], enc.encode(refs[b][0], learner_seat))
        np.testing.assert_array_equal(masks[b], mask_array(refs[b][0].legal_mask()))
    policy = RandomPolicy(num_envs, seed=seed)
    episodes = 0
    while active.any():
        actions = policy(env.game).copy()
        obs, rewards, dones, infos = env.step(actions)
        for b in np.flatnonzero(active):
            state, carry = refs[b]
            state.apply(int(actions[b]))
            reward, over = play_opponents(state)
            refs[b][1] = 0.0
            assert rewards[b] == np.float32(carry + reward), f"game {b}: reward"
            assert dones[b] == over, f"game {b}: done"
            if over:
                episodes += 1
                active[b] = False
                np.testing.assert_array_equal(infos["terminal_obs"][b],
                                              enc.encode(state, learner_seat))
                assert infos["totals"][b].tolist() == state.totals
                assert infos["truncated"][b] == (state.end_reason == "truncated")
                assert infos["learner_seat"][b] == learner_seat
            else:
                np.testing.assert_array_equal(obs[b], enc.encode(state, learner_seat),
                                              err_msg=f"game {b}: learner observation")
                np.testing.assert_array_equal(masks[b], mask_array(state.legal_mask()))
    return episodes


@pytest.mark.parametrize("options,opponent", [
    ({"num_players": 2}, "greedy"),
    ({"num_players": 3, "num_deals": 2, "reward": "win"}, "greedy"),
    ({"num_players": 4, "max_turns": 40}, ["greedy", "greedy", lowest_legal, "greedy"]),
    ({"num_players": 3}, lowest_legal),
])
def test_env_differential(options, opponent):
    assert run_env_differential(Rules(**options), 300, seed=21, opponent=opponent) > 250


def test_env_random_opponents_and_seats():
    from pis_env.batched import BatchedEnv

    env = BatchedEnv(512, num_players=4, opponent="random", learner_seat="random", seed=3)
    obs, masks = env.reset()
    seats = set()
    total, episodes = 0.0, 0
    for _ in range(300):
        assert (env.game.current == env.learner[:, 0]).all()
        assert (masks.sum(axis=1) > 0).all()
        obs, rewards, dones, infos = env.step(RandomPolicy(512, seed=_)(env.game))
        seats.update(infos["learner_seat"][dones].tolist())
        total += float(rewards.sum())
        episodes += int(dones.sum())
    assert seats == {0, 1, 2, 3} and episodes > 1000
    assert abs(total / episodes) < 0.1  # random against random: about zero on average
    assert env.decisions.sum() > 300 * 512


def test_env_discards_a_match_that_ends_before_the_learner_moves():
    from pis_env.batched import BatchedEnv

    # 7 players, dealer 6: seat 0 opens without a club and draws the 3-card stock dry.
    non_clubs = list(range(13, 52))
    hands = [non_clubs[:7]]
    rest = list(range(13)) + non_clubs[7:]
    for _seat in range(1, 7):
        hands.append(rest[:7])
        rest = rest[7:]
    deck = [hands[seat][i] for i in range(7) for seat in range(7)] + rest
    assert all(c >= 13 for c in deck[49:])
    ref = GameState(Rules(num_players=7), deck=deck, dealer=6)
    while not ref.deal_over:
        ref.apply(greedy_reference(ref))
    assert ref.end_reason == "empty_stock" and ref.history == [(0, DRAW)] * 3
    env = BatchedEnv(2, num_players=7, learner_seat=3, opponent=GreedyPolicy(), seed=0)
    obs, masks = env.reset(decks=np.array([deck, deck]), dealers=[6, 6])
    # the stacked match was discarded; a shuffled one is at the learner's first turn
    assert (env._carry == 0).all() and (env.game.current == 3).all()
    assert env.decisions.min() >= 3 and (env.game.field("deal_index") == 0).all()
    assert not (env.game.stock[0] == np.array(deck)).all()
    obs, rewards, dones, infos = env.step(RandomPolicy(2)(env.game))
    assert np.isfinite(rewards).all()
