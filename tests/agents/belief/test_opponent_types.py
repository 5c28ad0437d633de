"""Opponent types: the ``"panel"`` opponent model, the particle filter's posterior over who
the opponent is (it finds the bot actually playing, carries from deal to deal, resets
when told), rollouts that play in each world the type it was weighed with, and the
tournament's repeated-opponent mode."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make
from agents.belief import ParticleBelief, opponent_model
from agents.belief.opponent_models import DEFAULT_MODEL, MixtureModel
from agents.panel import EVALUATION_SET, MODEL_SET, NOT_BATCHED, batched_policy
from agents.search import TYPES_MODEL, SearchAgent
from agents.typed_rollouts import TypePolicies
from pis_env import decode_observation, pis_yedili_v1
from pis_env.batched import BatchedGame
from pis_env.batched import kernels as K
from pis_env.rules import Rules


def test_the_panel_preset_is_the_model_set_a_self_model_and_uniform():
    model = opponent_model("panel", 2)
    bots = [m.bot for _, m in model.parts]
    assert bots == [m for m in MODEL_SET if m not in NOT_BATCHED and m != "random"] + [
        "self", "random"]
    assert not set(bots) & set(EVALUATION_SET)
    assert type(model.parts[-2][1]).__name__ == "NetworkModel"
    assert np.allclose([w for w, _ in model.parts], 1 / len(bots))
    fast = opponent_model(TYPES_MODEL, 2)
    assert [m.bot for _, m in fast.parts] == [b for b in bots if b not in ("ppo_v2", "self")]
    old = opponent_model(DEFAULT_MODEL, 2)  # the old specs still build
    assert isinstance(old, MixtureModel) and len(old.parts) == 2
    with pytest.raises(ValueError, match="no option"):
        opponent_model("panel?path=x", 2)


def _series(opponent: str, deals: int, seed: int, belief: ParticleBelief | None = None,
            reset: bool = True):
    """Seat 0 (the heuristic) followed by a filter against ``opponent`` in seat 1 for
    ``deals`` deals; returns the filter."""
    n = 2
    belief = belief or ParticleBelief(n, particles=64, opponent_model=TYPES_MODEL, seed=seed)
    me = make("heuristic", num_players=n)
    other = make(opponent, num_players=n, seed=seed)
    env = pis_yedili_v1.raw_env(num_players=n)
    for d in range(deals):
        env.reset(seed=seed * 100 + d)
        if reset:
            belief.reset()
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            if agent == "player_1":
                env.step(other.act(obs))
                continue
            belief.observe(decode_observation(obs["observation"], n, 1, 1))
            action = me.act(obs)
            belief.record(action)
            env.step(action)
    return belief


@pytest.mark.parametrize("opponent", ["hoarder", "sevens", "heuristic", "miser"])
def test_the_posterior_finds_the_bot_that_plays(opponent):
    """Against a model-set bot (the bot itself plays seat 1: the reference), three deals
    put most of the posterior on its type."""
    belief = _series(opponent, 3, seed=4)
    bots = [m.bot for m in belief.types]
    post = belief.type_posterior()[1]
    assert bots[int(np.argmax(post))] == opponent, dict(zip(bots, post.round(3)))
    assert post[bots.index(opponent)] > 4 / len(bots)  # four times its prior


def test_the_posterior_carries_across_deals_and_resets_when_told():
    belief = _series("hoarder", 2, seed=5)
    right = [m.bot for m in belief.types].index("hoarder")
    after_one = belief.type_posterior()[1, right]
    belief.reset()  # a new deal against the same opponent: the evidence stays
    assert np.exp(belief.seat_logprior[1, right]) == pytest.approx(after_one, rel=1e-6)
    assert np.exp(belief.seat_logprior[1, right]) > 2 / len(belief.types)
    _series("hoarder", 1, seed=6, belief=belief, reset=False)
    assert belief.type_posterior()[1, right] > after_one
    belief.reset()
    belief.forget_opponents()  # a new opponent: back to the prior
    assert np.allclose(belief.seat_logprior, belief.type_logprior[None])
    search = make("search", num_players=2, seed=1, opponent_model=TYPES_MODEL)
    search.filter.seat_logprior[1] = np.log(np.eye(len(belief.types))[right] + 1e-6)
    search.reset(seed=2)
    assert search.opponent_prior()[1].argmax() == right
    search.reset(seed=2, opponents_changed=True)
    assert np.allclose(search.opponent_prior(), search.filter.type_logprior[None])


def test_each_rollout_world_plays_the_type_it_was_weighed_with():
    """``sample(types=True)``: each determinization's opponent type comes from the world
    it was dealt from. The worlds are made to say, by their likelihoods, that the
    opponent is type ``hand % T`` (its hand mask), so a type drawn from the seat's
    overall posterior, or from another world, shows up as a mismatch."""
    belief = _series("greedy", 1, seed=2)
    belief.smoothing = 0.0
    t = len(belief.types)
    hands = belief._state[:, K.HAND + 1]
    belief.loglik[:] = 0.0
    belief.loglik[np.arange(belief.particles), 1, hands % t] = 50.0
    belief.seat_logprior[:] = np.log(1 / t)
    got_hands, _, kinds = belief.sample(400, np.random.default_rng(0), types=True)
    assert (kinds[:, 0] == -1).all()
    assert (kinds[:, 1] == got_hands[:, 0] % t).all()
    assert len(set(kinds[:, 1])) > 1


def test_type_temperature_sharpens_the_drawn_types():
    """``type_temperature``: 0 plays each world's most probable type, 1 draws from the
    posterior, in between draws are sharper; the reference is the posterior computed here
    from the worlds' likelihoods."""
    belief = _series("greedy", 1, seed=2)
    belief.smoothing = 0.0
    t = len(belief.types)
    belief.loglik[:] = 0.0
    belief.loglik[:, 1, 3] = np.log(3.0)  # type 3 is three times as likely as each other
    belief.seat_logprior[:] = np.log(1 / t)
    share = 3 / (3 + t - 1)
    _, _, top = belief.sample(600, np.random.default_rng(0), types=True, type_temperature=0)
    assert (top[:, 1] == 3).all() and (top[:, 0] == -1).all()
    _, _, plain = belief.sample(4000, np.random.default_rng(1), types=True)
    assert abs((plain[:, 1] == 3).mean() - share) < 0.03
    sharp_share = 9 / (9 + t - 1)  # T = 0.5: the posterior squared
    _, _, sharp = belief.sample(4000, np.random.default_rng(2), types=True,
                                type_temperature=0.5)
    assert abs((sharp[:, 1] == 3).mean() - sharp_share) < 0.03
    with pytest.raises(ValueError, match="type_temperature"):
        belief.sample(4, np.random.default_rng(0), types=True, type_temperature=-1)
    with pytest.raises(ValueError, match="type_temperature"):
        SearchAgent(num_players=2, type_temperature=0.5)
    with pytest.raises(ValueError, match="must be in 0..1e6"):
        SearchAgent(num_players=2, rollout_policy="types", type_temperature=-0.5)


def test_typed_rollout_moves_are_each_types_own_bot():
    """Every row's move is the move of that row's type for the seat to move: the style
    bots' own batched policies (the reference), the heuristic at seat 0 and for the
    heuristic type; the epsilon types' moves are legal."""
    rules = Rules(num_players=2, illegal_action="raise")
    types = ParticleBelief(2, particles=8, opponent_model=TYPES_MODEL).types
    bots = [m.bot for m in types]
    policies = TypePolicies(types, rules, seed=0)
    size = 512
    game = BatchedGame(size, rules, seed=3)
    game.reset()
    rng = np.random.default_rng(4)
    kinds = np.full((size, 2), -1, dtype=np.int64)
    kinds[:, 1] = rng.integers(0, len(types), size)
    heuristic = batched_policy("heuristic", size, rules)
    exact = {b: batched_policy(b, size, rules) for b in bots
             if b not in ("heuristic", "random", "greedy_eps")}
    checked = 0
    for _ in range(60):
        acts = policies.moves(game, kinds, heuristic.params).copy()
        st = game.st
        live = st[:, K.LEGAL] != 0
        if not live.any():
            break
        expect = heuristic.from_game(game).copy()
        kind = kinds[np.arange(size), st[:, K.CUR]]
        for k, b in enumerate(bots):
            rows = np.flatnonzero(live & (kind == k))
            if b in exact and rows.size:
                expect[rows] = exact[b].state_actions(game, rows)
        fuzzy = np.isin(kind, [bots.index("random"), bots.index("greedy_eps")])
        same = live & ~fuzzy
        assert (acts[same] == expect[same]).all()
        assert (((st[live, K.LEGAL] >> acts[live]) & 1) == 1).all()
        checked += int(same.sum())
        game.step(np.where(live, acts, 0), write_obs=False, auto_reset=True)
    assert checked > 2000


def test_the_type_search_rolls_out_the_types(monkeypatch):
    """``rollout_policy="types"`` hands the rollouts each world's types."""
    from agents.search import BatchedRollouts

    seen = []
    run = BatchedRollouts.run

    def spy(self, template, hands, stocks, actions, seeds, kinds=None):
        seen.append(kinds)
        return run(self, template, hands, stocks, actions, seeds, kinds)

    monkeypatch.setattr(BatchedRollouts, "run", spy)
    bot = make("search", num_players=2, seed=1, rollouts=32, particles=32,
               rollout_policy="types")  # its opponent model: TYPES_MODEL
    assert [m.bot for m in bot.filter.types] == [
        m.bot for _, m in opponent_model(TYPES_MODEL, 2).parts]
    env = pis_yedili_v1.raw_env(num_players=2)
    env.reset(seed=1)
    other = make("sevens", num_players=2)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        env.step((bot if agent == "player_0" else other).act(obs))
    assert seen and all(k is not None and k.shape[1] == 2 for k in seen)
    with pytest.raises(ValueError, match="particles"):
        make("search", determinize="belief", rollout_policy="types")


def test_the_repeated_opponent_mode_carries_the_posterior_between_rotations(monkeypatch):
    """``search?carry_posterior=1``: the second rotation's bot starts from what the first
    learnt of the opponent; the results do not depend on the workers."""
    from agents.tournament import run_tournament, worker

    starts = []
    carry = worker.carry_opponents

    def spy(players, labels, carried, into):
        if into:
            starts.append({k: v.copy() for k, v in carried.items()})
            for p in players:
                if getattr(p, "carry_posterior", False):
                    before.append(p.opponent_prior())
        carry(players, labels, carried, into)
        if into:
            for p in players:
                if getattr(p, "carry_posterior", False):
                    after.append(p.opponent_prior())

    before, after = [], []
    spec = f"search?rollouts=16&particles=16&opponent_model={TYPES_MODEL}&carry_posterior=1"
    monkeypatch.setattr(worker, "carry_opponents", spy)
    one = run_tournament([spec, "hoarder"], deals=2, seed=3, workers=1, progress=False)
    monkeypatch.undo()
    assert starts[0] == {} and set(starts[1]) == {(spec, "hoarder")}
    learnt = starts[1][(spec, "hoarder")]
    assert np.exp(learnt).sum() == pytest.approx(1.0, abs=1e-3)
    assert np.exp(learnt).max() > 2 / learnt.size  # it learnt something
    # the next rotation starts from what was learnt (normalised, as set_opponent_prior does)
    assert np.allclose(before[1], before[0])
    assert np.allclose(after[1][1], learnt - np.log(np.exp(learnt).sum()))
    two = run_tournament([spec, "hoarder"], deals=2, seed=3, workers=2, progress=False)
    drop = ("elapsed_s", "workers")
    assert ({k: v for k, v in one.to_dict().items() if k not in drop}
            == {k: v for k, v in two.to_dict().items() if k not in drop})


def _posterior_by_hand(prior: np.ndarray, loglik: np.ndarray) -> np.ndarray:
    """prior x likelihood, normalised over the types, one (world, seat) at a time, in
    plain Python: the reference for the filter's vectorised posteriors."""
    import math

    out = np.empty_like(loglik)
    for p in range(loglik.shape[0]):
        for seat in range(loglik.shape[1]):
            z = [prior[seat, t] + loglik[p, seat, t] for t in range(loglik.shape[2])]
            top = max(z)
            e = [math.exp(v - top) for v in z]
            out[p, seat] = [v / sum(e) for v in e]
    return out


def test_each_worlds_type_posterior_is_its_prior_times_its_likelihood():
    """Log-likelihoods far below zero, as a long match makes them: the posterior of each
    world and seat is normalised on its own and stays finite."""
    belief = _series("greedy", 1, seed=3)
    rng = np.random.default_rng(0)
    far = -3000.0 * (np.arange(belief.particles) % 3)[:, None, None]  # 0, -3000, -6000
    belief.loglik[:] = far + 40.0 * rng.standard_normal(belief.loglik.shape)
    idx = np.array([5, 0, 5, 17, 1])
    got = belief.world_type_posterior(idx)
    want = _posterior_by_hand(belief.seat_logprior, belief.loglik[idx])
    assert np.isfinite(got).all()
    assert np.allclose(got, want, atol=1e-12)


def test_the_type_posterior_is_the_weighted_mean_of_the_worlds_posteriors():
    """Each seat's posterior is normalised on its own, however far below the other seats'
    its log-likelihoods lie; a seat no type can explain (every likelihood zero) gets the
    uniform posterior."""
    belief = _series("greedy", 1, seed=3)
    rng = np.random.default_rng(1)
    belief.loglik[:, 1] = -3000.0 + 40.0 * rng.standard_normal(belief.loglik[:, 1].shape)
    belief.logw = rng.normal(0.0, 2.0, belief.particles)
    w = np.exp(belief.logw - belief.logw.max())
    w /= w.sum()
    want = np.einsum("p,pkj->kj", w, _posterior_by_hand(belief.seat_logprior, belief.loglik))
    got = belief.type_posterior()
    assert np.allclose(got, want, atol=1e-12) and np.allclose(got.sum(axis=1), 1.0)
    belief.loglik[:, 1] = -np.inf
    with np.errstate(invalid="ignore"):
        got = belief.type_posterior()
    assert np.array_equal(got[1], np.full(len(belief.types), 1.0 / len(belief.types)))
    assert np.allclose(got[0], want[0], atol=1e-12)


def test_an_opponent_prior_is_normalised_per_seat_and_checked_for_shape():
    belief = ParticleBelief(2, particles=8, opponent_model=TYPES_MODEL, seed=0)
    t = len(belief.types)
    raw = np.array([np.arange(t, dtype=float), 2.0 * np.arange(t) + 7.0])
    belief.set_opponent_prior(raw)
    assert np.allclose(np.exp(belief.seat_logprior).sum(axis=1), 1.0)
    assert np.allclose(belief.seat_logprior - raw, (belief.seat_logprior - raw)[:, :1])
    with pytest.raises(ValueError) as e:
        belief.set_opponent_prior(np.zeros((3, t)))
    assert str(e.value) == f"an opponent prior of shape (3, {t}): expected (2, {t})"


def test_forgetting_the_opponents_leaves_no_evidence_in_any_world():
    belief = _series("hoarder", 1, seed=7)
    belief.forget_opponents()
    prior = np.exp(belief.type_logprior)
    post = belief.world_type_posterior(np.arange(belief.particles))
    assert np.allclose(post, prior / prior.sum())


def test_before_any_decision_the_opponent_prior_is_the_one_given():
    """A type given less than the floor the carried posterior keeps (1e-6) keeps its
    given prior until a decision is seen."""
    belief = ParticleBelief(2, particles=8, opponent_model=TYPES_MODEL, seed=0)
    t = len(belief.types)
    given = np.log(np.full((2, t), 1.0))
    given[1, 0] = np.log(1e-9)
    belief.set_opponent_prior(given)
    env = pis_yedili_v1.raw_env(num_players=2)
    env.reset(seed=1)
    belief.observe(decode_observation(env.observe("player_0")["observation"], 2, 1, 1))
    assert belief.used == 0 and belief.st is not None
    assert np.allclose(belief.opponent_prior(), belief.seat_logprior)


def test_the_worlds_are_int_arrays_of_the_public_sizes():
    belief = _series("greedy", 1, seed=9)
    hands, stocks, weights = belief.worlds()
    assert hands.dtype == np.int64 and stocks.dtype == np.int64
    assert stocks.shape[1] == int(belief._state[0, K.SLEN] - belief._state[0, K.SPOS])
    assert weights.sum() == pytest.approx(1.0)


def test_each_model_set_bot_has_its_own_model():
    from agents.belief.opponent_models import (
        HeuristicModel,
        NetworkModel,
        UniformModel,
        panel_model,
    )
    from agents.panel.models import StyleModel
    from agents.ppo import resolve_path

    assert isinstance(panel_model("heuristic"), HeuristicModel)
    assert isinstance(panel_model("random"), UniformModel)
    assert panel_model("ppo_v2").num_players == 2
    for n in (2, 4):
        net = panel_model("ppo_v2", n)
        assert isinstance(net, NetworkModel) and net.num_players == n
        assert net.policy is NetworkModel(f"models/ppo_{n}p_v2.zip", n).policy
        assert resolve_path(f"models/ppo_{n}p_v2.zip").exists()
    style = panel_model("hoarder")
    assert isinstance(style, StyleModel) and style.name == "hoarder"
    assert style.epsilon == pytest.approx(0.1)  # hoarder plays its style without noise
    assert panel_model("hoarder", epsilon=0.3).epsilon == pytest.approx(0.3)
    assert panel_model("greedy_eps").epsilon == pytest.approx(1 - 0.9 * 0.7)
    batched = ", ".join(m for m in MODEL_SET if m not in NOT_BATCHED)
    for name in ("mc", "nobody"):
        with pytest.raises(ValueError) as e:
            panel_model(name)
        assert str(e.value) == f"no opponent model for {name!r}: one of {batched}"
    with pytest.raises(ValueError) as e:
        panel_model("counter")
    assert str(e.value) == "'counter' is in the evaluation set: nothing may model it"


def test_the_panel_types_default_to_two_players_with_the_networks():
    from agents.belief.opponent_models import panel_types

    model = panel_types()
    parts = [m for _, m in model.parts]
    assert [getattr(m, "bot", None) for m in parts][-2:] == ["self", "random"]
    self_model = parts[-2]
    assert self_model.num_players == 2
    assert self_model.policy is opponent_model("network?path=models/ppo_2p.zip", 2).policy
    assert np.allclose([w for w, _ in model.parts], 1 / len(parts))
    noisy = panel_types(4, epsilon=0.5, networks=False)
    assert {round(m.epsilon, 6) for _, m in noisy.parts if hasattr(m, "epsilon")
            and m.bot in ("hoarder", "heuristic")} == {0.5}
    assert all(m.bot != "self" for _, m in noisy.parts[:-1])


def test_a_sample_of_worlds_is_drawn_by_weight_and_its_size_is_checked():
    belief = _series("greedy", 1, seed=2)
    belief.smoothing = 0.0
    belief.logw[:] = -1e3
    belief.logw[3] = 0.0
    hands, _ = belief.sample(50, np.random.default_rng(0))
    assert (hands[:, 0] == belief._state[3, K.HAND + 1]).all()
    for count in (0, (1 << 20) + 1):
        with pytest.raises(ValueError) as e:
            belief.sample(count, np.random.default_rng(0))
        assert str(e.value) == f"count={count}: must be in 1..{1 << 20}"


def _watch(belief, opponents, seed, deals=1, check=None):
    """Seat 0 (the heuristic) watched by ``belief`` against ``opponents`` (bot names, by
    seat) for ``deals`` deals; ``check(belief)`` after every observation."""
    n = belief.num_players
    me = make("heuristic", num_players=n)
    others = [make(name, num_players=n, seed=seed + i) for i, name in enumerate(opponents)]
    env = pis_yedili_v1.raw_env(num_players=n)
    for deal in range(deals):
        env.reset(seed=seed + deal)
        belief.reset()
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            seat = env.possible_agents.index(agent)
            if seat:
                env.step(others[seat - 1].act(obs))
                continue
            belief.observe(decode_observation(obs["observation"], n, 1, 1))
            if check:
                check(belief)
            action = me.act(obs)
            belief.record(action)
            env.step(action)


def _likelihoods_are_the_recorded_moves(belief) -> bool:
    t = belief.used
    if not t:
        return False
    for seat in range(1, belief.num_players):
        mine = belief.dec_mover[:t] == seat
        want = belief.dec_logp[:, :t][:, mine].sum(axis=1)
        np.testing.assert_allclose(belief.loglik[:, seat], want, atol=1e-9)
        post = belief.world_type_posterior(np.arange(belief.particles))[:, seat]
        z = belief.seat_logprior[seat] + want
        ref = np.exp(z - z.max(axis=1, keepdims=True))
        np.testing.assert_allclose(post, ref / ref.sum(axis=1, keepdims=True), atol=1e-9)
    return True


@pytest.mark.parametrize("opponents", [["sevens"], ["sevens", "hoarder", "greedy"]],
                         ids=["2p", "4p"])
def test_each_worlds_likelihood_is_the_sum_of_its_recorded_moves(opponents):
    """Through weighing, resampling and the rejuvenation's card exchanges, each world's
    log-likelihood of each type, seat by seat, is the sum of the log-probabilities of
    that opponent's recorded moves in that world (``dec_logp``), and its type posterior
    is that likelihood times the prior, normalised: what the filter believes of who each
    opponent is follows the moves it saw, world by world, for each of three opponents at
    four players."""
    belief = ParticleBelief(len(opponents) + 1, particles=64, opponent_model=TYPES_MODEL,
                            seed=3, ess_threshold=0.9)  # resample often
    checked = []
    _watch(belief, opponents, seed=40, deals=2,
           check=lambda b: checked.append(_likelihoods_are_the_recorded_moves(b)))
    assert sum(checked) > 15 and belief.resamples > 3 and belief.accepted > 0
    assert belief.repairs > 0
    if len(opponents) > 1:
        assert set(belief.dec_mover[:belief.used]) == {1, 2, 3}


def test_the_filter_resamples_when_its_weights_degenerate_and_counts_it(monkeypatch):
    """A resample comes only when the effective sample size falls below its share of the
    worlds (or a world died); it leaves every world the same weight, and ``resamples``
    counts them."""
    seen = []
    original = ParticleBelief._resample

    def watched(self):
        seen.append(self.ess < self.ess_threshold * self.particles
                    or not np.isfinite(self.logw).all())
        original(self)
        assert np.isclose(self.ess, self.particles)

    monkeypatch.setattr(ParticleBelief, "_resample", watched)
    belief = ParticleBelief(2, particles=32, opponent_model=TYPES_MODEL, seed=5,
                            ess_threshold=0.8)
    _watch(belief, ["sevens"], seed=21)  # one deal: reset() starts the count again
    assert len(seen) >= 3 and all(seen) and belief.resamples == len(seen)


def test_a_full_decision_record_keeps_its_latest_half(monkeypatch):
    """The record grows by doubling from 64 decisions and, full at ``MAX_DECISIONS``,
    keeps its latest half: decision k of the new record is decision k + half of the
    old one, for every array of it."""
    from agents.belief import particles

    monkeypatch.setattr(particles, "MAX_DECISIONS", 128)
    belief = _series("greedy", 1, seed=2)
    belief._clear_history()
    t_types = len(belief.types)
    for i in range(128):
        belief._record(1, i % 58, np.full((belief.particles, t_types), -float(i)))
    assert belief.used == 128 and belief.dec_mover.shape[0] == 128  # grown from 64
    before = {name: getattr(belief, name).copy()
              for name in ("dec_rows", "dec_mover", "dec_action", "dec_hand", "dec_logp")}
    belief._record(1, 57, np.full((belief.particles, t_types), -999.0))
    assert belief.used == 65
    np.testing.assert_array_equal(belief.dec_action[:64], before["dec_action"][64:128])
    np.testing.assert_array_equal(belief.dec_mover[:64], before["dec_mover"][64:128])
    np.testing.assert_array_equal(belief.dec_rows[:64], before["dec_rows"][64:128])
    np.testing.assert_array_equal(belief.dec_hand[:, :64], before["dec_hand"][:, 64:128])
    np.testing.assert_array_equal(belief.dec_logp[:, :64], before["dec_logp"][:, 64:128])
    assert belief.dec_action[64] == 57 and (belief.dec_logp[:, 64] == -999.0).all()
