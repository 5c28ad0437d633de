"""Rollouts that play, in each world, the opponent type the world was weighed with.

The particle filter (``agents.belief.ParticleBelief``) weighs every world by a posterior
over who each opponent is (its ``types``: with ``opponent_model="panel"``, the model
set's bots, a self-model and uniform). A search that then plays the heuristic at every
seat of its rollouts throws that away: against an opponent that sheds its high cards, or
hoards its 7s, the rollouts should shed or hoard too. ``TypePolicies`` plays each
opponent of each rollout row by the type drawn for it in that row's world
(``ParticleBelief.sample(..., types=True)``), all rows in one numba call per move: the
styles of ``agents.panel.batched`` (each with its own epsilon: ``greedy_eps`` 0.3,
``random`` and the uniform type 1.0), the heuristic where the type is the heuristic (or
has no batched policy), and the network types (``ppo_v2``; ``"self"``, the shipped
network's argmax) by one torch pass over their rows. Why one kernel: a Python loop over
the types at every move of every rollout cost more than the rollouts themselves.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.batched import STACK, row_action
from agents.panel.batched import choose, mix
from agents.panel.styles import STYLES
from pis_env.batched import kernels as K
from pis_env.batched.kernels import lowbit_index

#: Type kinds: a style of ``agents.panel.styles`` (its id), or one of these.
HEURISTIC = -1
NETWORK = -2


@njit(cache=True)
def typed_actions(st, cfg, P, kinds, style_of, eps_of, u, v, out):
    """For every row: the action of the current player's type (``kinds[row, seat]`` an
    index into ``style_of`` / ``eps_of``): a style's move (epsilon-mixed with ``u``,
    ``v``), or where the index is ``-1`` or the type's style ``HEURISTIC``, the heuristic's
    (weights ``P``, exactly ``heuristic_actions_state``'s move); ``NETWORK`` rows are left
    ``-1`` for the caller; ``-1`` where nothing is legal."""
    n = cfg[K.C_N]
    other = cfg[K.C_OTHER] != 0
    sizes = np.zeros(n, dtype=np.int64)
    voids = np.zeros(n, dtype=np.int64)
    stk = np.zeros((STACK, 5), dtype=np.int64)
    nom = np.zeros(4, dtype=np.float64)
    one = np.empty(1, dtype=np.int64)
    base = np.empty(1, dtype=np.int64)
    legal_one = np.empty(1, dtype=np.int64)
    zero = np.zeros(1)
    vb = np.empty(1)
    for b in range(out.shape[0]):
        legal = st[b, K.LEGAL]
        if legal == 0:
            out[b] = -1
            continue
        cur = st[b, K.CUR]
        k = kinds[b, cur]
        style = style_of[k] if k >= 0 else HEURISTIC
        if style == NETWORK:
            out[b] = -1
            continue
        if legal & (legal - 1) == 0:
            out[b] = lowbit_index(legal)
            continue
        if style == HEURISTIC:
            out[b] = row_action(st, b, legal, n, other, P, sizes, voids, stk, nom)
            continue
        hand = st[b, K.HAND + cur]
        a = choose(style, hand, legal, st[b, K.PEND], st[b, K.PHASE], st[b, K.DRAWN] != 0,
                   st[b, K.SLEN] - st[b, K.SPOS])
        e = eps_of[k]
        if e > 0.0 and u[b] < e:
            base[0] = a
            legal_one[0] = legal
            vb[0] = v[b]
            mix(base, legal_one, e, zero, vb, one)
            a = one[0]
        out[b] = a


def type_kind(model) -> tuple[int, float, str | None]:
    """(style id or ``HEURISTIC`` / ``NETWORK``, epsilon, network name) of an opponent
    type: a model-set style bot its style and the bot's own epsilon, uniform the greedy
    style at epsilon 1, the heuristic (and a type with no batched policy) the heuristic,
    ``ppo_v2`` and ``"self"`` a network."""
    from agents.panel import EVALUATION_SET, STYLE_BOTS

    bot = getattr(model, "bot", None)
    if bot in EVALUATION_SET:
        raise ValueError(f"{bot!r} is in the evaluation set: no rollout may play it")
    if bot in ("self", "ppo_v2"):
        return NETWORK, 0.0, bot
    if bot == "random":
        return STYLES["greedy"], 1.0, None
    if bot == "greedy":
        return STYLES["greedy"], 0.0, None
    if bot in STYLE_BOTS:
        style, epsilon = STYLE_BOTS[bot]
        return STYLES[style], float(epsilon), None
    return HEURISTIC, 0.0, None


def row_uniforms(rng: np.ndarray, u: np.ndarray, v: np.ndarray):
    """Two uniforms per row from each row's own stream (``BatchedGame.rng``), into ``u``
    and ``v`` (new buffers when the batch size changed). Why the rows' streams: the rows
    of one world after different actions start from the world's seed, so their epsilon
    moves draw the same numbers at the same move (common random numbers); one shared
    generator gave each row other numbers, and the actions' paired differences that
    noise."""
    if u.shape[0] != rng.shape[0]:
        u, v = np.empty(rng.shape[0]), np.empty(rng.shape[0])
    _row_uniforms(rng, u, v)
    return u, v


@njit(cache=True)
def _row_uniforms(rng, u, v):
    for b in range(u.shape[0]):
        u[b] = K.rand_unit(rng, b)
        v[b] = K.rand_unit(rng, b)


class TypePolicies:
    """The batched players of an opponent model's types in a rollout (see the module
    docstring). ``types``: the filter's ``types`` (each with its ``bot``); ``rules``: the
    rollouts' rules; ``seed``: the network types' (their argmax needs none). The epsilon
    moves draw from each row's own stream (:func:`row_uniforms`)."""

    def __init__(self, types, rules, seed: int | None = None):
        kinds = [type_kind(m) for m in types]
        self.style_of = np.array([k for k, _, _ in kinds], dtype=np.int64)
        self.eps_of = np.array([e for _, e, _ in kinds], dtype=np.float64)
        self.network_of = {i: name for i, (_, _, name) in enumerate(kinds) if name}
        #: Whether a torch network plays some type (the caller pins torch to one thread).
        self.networks = bool(self.network_of)
        self.rules = rules
        self.seed = seed
        self._networks: dict[str, object] = {}
        self.out = np.empty(0, dtype=np.int64)
        self._u = self._v = np.empty(0)

    def _network(self, name: str):
        if name not in self._networks:
            from agents.batched_policy import TorchPolicy

            n = self.rules.num_players
            path = f"models/ppo_{n}p.zip" if name == "self" else f"models/ppo_{n}p_v2.zip"
            self._networks[name] = TorchPolicy.from_file(path, n, 1, deterministic=True,
                                                         seed=self.seed)
        return self._networks[name]

    def moves(self, game, kinds: np.ndarray, params: np.ndarray) -> np.ndarray:
        """Actions [B] for ``game``'s rows (a reused buffer): ``kinds`` [B, n] each row's
        type per seat (``-1``: the heuristic, the searching seat's column), ``params`` the
        heuristic's weights (``agents.heuristic.batched.params_vector``)."""
        st = game.st
        size = st.shape[0]
        if self.out.shape[0] != size:
            self.out = np.empty(size, dtype=np.int64)
        u, v = self._u, self._v = row_uniforms(game.rng, self._u, self._v)
        typed_actions(st, game.cfg, params, kinds, self.style_of, self.eps_of, u, v,
                      self.out)
        if self.networks:
            kind = kinds[np.arange(size), st[:, K.CUR]]
            live = st[:, K.LEGAL] != 0
            for k, name in self.network_of.items():
                idx = np.flatnonzero(live & (kind == k))
                if idx.size:
                    net = self._network(name)
                    obs = game.observe(games=idx, layout_version=net.layout_version)
                    self.out[idx] = net(obs, game.action_masks(games=idx))
        return self.out


__all__ = ["HEURISTIC", "NETWORK", "TypePolicies", "type_kind", "typed_actions"]
