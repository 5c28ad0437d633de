"""The epsilon mixing of the panel's batched styles and of the typed rollouts, against
their parameter.

``test_panel.py`` holds the numba ``mix`` equal to the Python ``mixed_action`` on the
same uniforms; what it cannot see is where the uniforms come from and which epsilon
reaches them: ``PanelPolicy`` draws its own, ``typed_actions`` mixes each opponent type
at that type's epsilon from each row's own stream (``row_uniforms``), and the typed
rollout test checks the epsilon types' moves for legality only. A wrong rate there makes
every rollout or opponent play another bot than the one it names, and raises nothing.
The references: the Python styles' ``choose`` and ``mixed_action`` fed the same
uniforms, the rate ``epsilon * (1 - 1/count)`` at which a mixed move differs from the
style's, a uniform choice among the legal moves for the random part, and splitmix64
written on Python ints for the rows' uniforms.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from agents.heuristic.batched import params_vector
from agents.panel import styles
from agents.panel.batched import PanelPolicy
from agents.typed_rollouts import _row_uniforms, typed_actions
from pis_env.batched import BatchedGame, RandomPolicy
from pis_env.batched import kernels as K
from pis_env.rules import Rules
from tests.pis_env.reference_draws import splitmix64


def _positions(num_players: int, seed: int, steps: int = 24, games: int = 256) -> tuple:
    """State rows of random-play positions with at least two legal moves, and the cfg."""
    game = BatchedGame(games, Rules(num_players=num_players), seed=seed)
    game.reset()
    policy = RandomPolicy(games, seed=seed + 1)
    rows = []
    for _ in range(steps):
        legal = game.st[:, K.LEGAL]
        many = (legal != 0) & ((legal & (legal - 1)) != 0)
        rows.append(game.st[many].copy())
        game.step(policy(game), write_obs=False, auto_reset=True)
    return np.concatenate(rows), game.cfg.copy()


def _legal_list(mask: int) -> list[int]:
    return [a for a in range(K.NUM_ACTIONS) if mask >> a & 1]


@pytest.mark.parametrize("epsilon", [0.25, 0.8])
def test_a_panel_policy_plays_a_uniform_random_move_at_its_epsilon(epsilon):
    """Reference: the style's own choice with chance ``1 - epsilon``, else each legal move
    with chance ``1 / count``: the rate of moves other than the style's is
    ``epsilon * (1 - 1/count)`` on average, and each rank among the legal moves is chosen
    as often as that mixture says (a random part that never reaches some moves, or an
    epsilon that is not the one given, fails)."""
    rows, _ = _positions(2, seed=3)
    policy = PanelPolicy(rows.shape[0], "sevens", epsilon=epsilon, seed=5)
    base = policy.base_actions(rows)
    lists = [_legal_list(m) for m in rows[:, K.LEGAL].tolist()]
    counts = np.array([len(moves) for moves in lists])
    base_rank = np.array([moves.index(int(a)) for moves, a in zip(lists, base)])
    top = 3  # ranks compared: the rows with at least this many legal moves
    observed, expected = np.zeros(top), np.zeros(top)
    differs = want = 0.0
    rounds = 6
    games = SimpleNamespace(st=rows)
    for _ in range(rounds):
        acts = policy.state_actions(games, np.arange(rows.shape[0]))
        assert (((rows[:, K.LEGAL] >> acts) & 1) == 1).all()
        differs += (acts != base).sum()
        want += (epsilon * (1 - 1 / counts)).sum()
        for moves, a, c, r in zip(lists, acts.tolist(), counts, base_rank):
            if c >= top:
                rank = moves.index(a)
                if rank < top:
                    observed[rank] += 1
                expected[:top] += epsilon / c
                if r < top:
                    expected[r] += 1 - epsilon
    n = rows.shape[0] * rounds
    assert n > 10000
    assert abs(differs - want) / n < 0.015, (differs / n, want / n)  # sd below 0.005
    assert expected.min() > 300, expected
    np.testing.assert_allclose(observed, expected, rtol=0.06)


def test_typed_rollouts_play_each_types_style_mixed_at_its_own_epsilon():
    """Reference: the Python style (``agents.panel.styles.choose``) of the type in each
    row, through ``styles.mixed_action`` at that type's epsilon with the row's ``u`` and
    ``v``; and, counted, moves other than the style's at ``epsilon * (1 - 1/count)`` per
    type (0 for an epsilon of 0, about all but ``1/count`` for 1)."""
    n = 3
    rows, cfg = _positions(n, seed=8, steps=30)
    style_of = np.array([styles.STYLES["greedy"], styles.STYLES["hoarder"],
                         styles.STYLES["cautious"], styles.STYLES["greedy"]], dtype=np.int64)
    eps_of = np.array([0.0, 0.3, 0.6, 1.0])
    rng = np.random.default_rng(2)
    size = rows.shape[0]
    kinds = rng.integers(0, style_of.size, size=(size, n)).astype(np.int64)
    u, v = rng.random(size), rng.random(size)
    out = np.empty(size, dtype=np.int64)
    typed_actions(rows, cfg, params_vector(), kinds, style_of, eps_of, u, v, out)
    differs, want, per_type = np.zeros(4), np.zeros(4), np.zeros(4)
    for b in range(size):
        row = rows[b]
        cur = int(row[K.CUR])
        k = int(kinds[b, cur])
        legal = int(row[K.LEGAL])
        base = styles.choose(int(style_of[k]), int(row[K.HAND + cur]), legal,
                             int(row[K.PEND]), int(row[K.PHASE]), bool(row[K.DRAWN]),
                             int(row[K.SLEN] - row[K.SPOS]))
        assert out[b] == styles.mixed_action(base, legal, float(eps_of[k]), float(u[b]),
                                             float(v[b])), b
        per_type[k] += 1
        differs[k] += out[b] != base
        want[k] += eps_of[k] * (1 - 1 / legal.bit_count())
    assert per_type.min() > 800
    assert differs[0] == 0
    assert (np.abs(differs - want) / per_type < 0.04).all(), (differs / per_type,
                                                               want / per_type)


def test_the_rows_uniforms_are_two_draws_of_each_rows_own_stream():
    """Reference: two splitmix64 outputs per row, ``(z >> 11) / 2**53``, from the row's
    stream state, which advances by two."""
    rng = np.random.default_rng(6).integers(0, 2**63, size=50, dtype=np.uint64)
    states = [int(s) for s in rng]
    u, v = np.empty(50), np.empty(50)
    _row_uniforms(rng, u, v)
    for b in range(50):
        states[b], z1 = splitmix64(states[b])
        states[b], z2 = splitmix64(states[b])
        assert (u[b], v[b]) == ((z1 >> 11) / 2.0**53, (z2 >> 11) / 2.0**53)
        assert int(rng[b]) == states[b]


@pytest.mark.parametrize("name", ["greedy_eps", "random"])
def test_a_style_bots_model_gives_the_probabilities_its_batched_bot_plays_with(name):
    """Reference: the batched bot itself (``agents.panel.batched_policy``), its moves
    counted over many draws in the same positions: the opponent model with a tiny own
    epsilon (``panel_model``) must give the style's move and the other legal moves the
    shares the bot plays them at (a model that forgets the bot's own epsilon, or
    spreads it over the wrong moves, weighs the particle filter's worlds wrongly)."""
    from agents.belief.opponent_models import panel_model
    from agents.panel import batched_policy

    rows, cfg = _positions(3, seed=12, steps=16, games=128)
    policy = batched_policy(name, rows.shape[0], Rules(num_players=3), seed=4)
    model = panel_model(name, 3, epsilon=1e-6)
    lists = [_legal_list(m) for m in rows[:, K.LEGAL].tolist()]
    base = PanelPolicy(rows.shape[0], policy.style).base_actions(rows)
    last = np.array([moves[-1] if moves[-1] != a else moves[0]
                     for moves, a in zip(lists, base.tolist())])
    rounds = 12
    played_base = played_last = 0
    games = SimpleNamespace(st=rows)
    for _ in range(rounds):
        acts = policy.state_actions(games, np.arange(rows.shape[0]))
        played_base += (acts == base).sum()
        played_last += (acts == last).sum()
    n = rows.shape[0] * rounds
    want_base = model.probs(rows, base, cfg).sum() * rounds
    want_last = model.probs(rows, last, cfg).sum() * rounds
    assert n > 8000
    assert abs(played_base - want_base) / n < 0.02, (played_base / n, want_base / n)
    assert abs(played_last - want_last) / n < 0.02, (played_last / n, want_last / n)
