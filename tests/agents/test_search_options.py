"""The search bot's options, word for word: what each refusal says, the rules its
rollouts play by, what it reports after a decision, the fallback, what it knows of its
opponents across ``reset``, and the torch threads of network rollouts."""

from __future__ import annotations

import math
import warnings
from contextlib import contextmanager

import numpy as np
import pytest

from agents import make
from agents.mc import DEFAULT_HORIZON
from agents.search import DEFAULT_ROLLOUTS, TYPES_MODEL, SearchAgent, _torch_threads
from pis_env import pis_yedili_v1, raw_env
from pis_env.observation import Layout


@pytest.mark.parametrize("kwargs, message", [
    ({"rollouts": 0}, "rollouts=0: must be an int >= 1"),
    ({"rollouts": True}, "rollouts=True: must be an int >= 1"),
    ({"rollouts": 2.0}, "rollouts=2.0: must be an int >= 1"),
    ({"determinize": "oracle"}, "determinize='oracle': one of belief, hints, uniform, particles"),
    ({"rollout_policy": "oracle"},
     "rollout_policy='oracle': one of heuristic, network, mixed, types"),
    ({"belief_path": "x.pt", "determinize": "uniform"},
     "belief_path is the learned belief of determinize='belief'; determinize='uniform' "
     "does not read it"),
    ({"fallback": "coin"}, "fallback='coin': one of heuristic, mean"),
    ({"rollout_policy": "types", "determinize": "belief"},
     "rollout_policy='types' plays the particle filter's types: determinize='particles', "
     "not 'belief'"),
    ({"rollout_policy": "types", "rollout_path": "x.zip"},
     "rollout_path is the network of rollout_policy='network' or 'mixed'; the heuristic "
     "rollouts take no policy file"),
    ({"determinize": "uniform", "particles": 4}, "particles: options of determinize='particles'"),
    ({"determinize": "hints", "particles": 4, "moves": 3, "opponent_model": "heuristic"},
     "particles, moves, opponent_model: options of determinize='particles'"),
    ({"rollout_policy": "network", "rollout_path": "no/such.zip"},
     "rollout_path='no/such.zip': no such policy file (the shipped rollout networks are "
     "models/ppo_{n}p.zip at 2, 3, 4, 5, 6, 7 players; pass rollout_path= for another table size)"),
])
def test_every_refusal_says_what_is_wrong(kwargs, message):
    with pytest.raises(ValueError) as err:
        SearchAgent(num_players=2, **kwargs)
    assert str(err.value) == message


def test_type_rollouts_take_a_temperature_from_0_to_1e6():
    from agents.search_options import TypeRollouts

    assert [TypeRollouts(t).temperature for t in (0.0, 1e6)] == [0.0, 1e6]
    for bad in (-0.5, 1e6 + 0.5):
        with pytest.raises(ValueError) as err:
            TypeRollouts(bad)
        assert str(err.value) == f"type_temperature={bad!r}: must be in 0..1e6"


def test_a_network_for_another_table_size_is_refused_with_the_reason():
    with pytest.raises(ValueError) as err:
        SearchAgent(num_players=2, rollout_policy="network", rollout_path="models/ppo_4p.zip")
    assert str(err.value).startswith("rollout_path='models/ppo_4p.zip' cannot play this "
                                     "table's rollouts: ")


def test_the_rollouts_play_one_deal_by_points_and_raise_on_an_illegal_move():
    bot = SearchAgent(num_players=3, num_deals=4, seed=1, determinize="uniform",
                      seven_penalty="double", fallback="heuristic", confidence=2, win_bonus=50,
                      match_aware=0,
                      reward="win", illegal_action="terminate")
    rules = bot._search_rules
    assert (rules.num_deals, rules.max_turns, rules.illegal_action, rules.reward) == (
        1, None, "raise", "points")
    assert (rules.num_players, rules.seven_penalty) == (3, "double")  # the table's variant
    assert (bot.rules.reward, bot.rules.illegal_action) == ("win", "terminate")
    # the variant given as rules (a mapping or Rules) rather than keywords
    assert SearchAgent(rules={"seven_penalty": "double"}).rules.seven_penalty == "double"
    assert bot.rules.num_deals == 4
    assert (bot.confidence, bot.win_bonus, bot.match_aware) == (2.0, 50.0, False)
    assert isinstance(bot.confidence, float) and isinstance(bot.win_bonus, float)
    assert bot.rollouts == DEFAULT_ROLLOUTS and bot.fallback == "heuristic"
    # a reshuffled stock can go on for ever: its rollouts stop at a horizon
    assert SearchAgent(empty_stock="reshuffle")._search_rules.max_turns == DEFAULT_HORIZON
    assert SearchAgent(empty_stock="reshuffle", horizon=30)._search_rules.max_turns == 30
    assert SearchAgent(horizon=30)._search_rules.max_turns == 30


@pytest.mark.parametrize("determinize", ["particles", "uniform"])
def test_what_the_bot_tracks_follows_the_tables_variant(determinize):
    reshuffled = SearchAgent(num_players=3, determinize=determinize, empty_stock="reshuffle",
                             seven_penalty="double")
    assert reshuffled.tracker.reshuffle is True
    assert SearchAgent(num_players=3, determinize=determinize).tracker.reshuffle is False
    if determinize == "particles":
        assert reshuffled.filter.rules == reshuffled.rules
        assert (reshuffled.filter.rules.seven_penalty, reshuffled.filter.num_players) == (
            "double", 3)


def test_the_particle_search_asks_for_the_event_log_and_reads_the_plain_table_too():
    particles = SearchAgent(num_players=3, seed=0)
    assert particles.layout_version == 1 and particles.filter is not None
    assert particles._readable_sizes[Layout.of(3, 1, 0).size] == 0
    assert particles._readable_sizes[Layout.of(3, 1, 1).size] == 1
    assert particles.tracker is particles.filter.tracker
    uniform = SearchAgent(num_players=3, seed=0, determinize="uniform")
    assert uniform.layout_version == 0 and uniform.filter is None
    assert uniform.carry_posterior is False
    assert SearchAgent(carry_posterior=1).carry_posterior is True


def test_repr_names_the_options_that_make_the_bot():
    assert repr(SearchAgent(num_players=4, seed=9, rollouts=64, determinize="hints")) == (
        "SearchAgent(num_players=4, rollouts=64, determinize='hints', "
        "rollout_policy='heuristic', seed=9)")


def _first_positions(n: int = 2, seed: int = 5, version: int = 0):
    """The observations of seat 0 in one heuristic deal: (searched, forced) lists."""
    env = pis_yedili_v1.raw_env(num_players=n) if version else raw_env(num_players=n)
    env.reset(seed=seed)
    bot = make("heuristic", num_players=n)
    searched, forced = [], []
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent == "player_0":
            (searched if obs["action_mask"].sum() > 1 else forced).append(obs)
        env.step(bot.act(obs))
    return searched, forced


def test_a_forced_move_is_played_without_rollouts_and_clears_the_last_report():
    searched, forced = _first_positions()
    assert searched and forced
    bot = SearchAgent(num_players=2, seed=0, rollouts=16, determinize="uniform")
    bot.advise(searched[0])
    assert bot.last_rollouts == 16 // len(bot.last_values) * len(bot.last_values) > 0
    assert set(bot.last_values) == set(np.flatnonzero(searched[0]["action_mask"]).tolist())
    only = int(np.flatnonzero(forced[0]["action_mask"])[0])
    assert bot.advise(forced[0]) == only
    assert (bot.last_rollouts, bot.last_values, bot.last_stderr) == (0, {}, {})


def test_one_rollout_per_move_has_no_standard_error_and_warns_nothing():
    searched, _ = _first_positions()
    moves = int(searched[0]["action_mask"].sum())
    bot = SearchAgent(num_players=2, seed=0, rollouts=moves, determinize="uniform")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's std of one sample warns
        bot.advise(searched[0])
    assert bot.last_rollouts == moves
    assert len(bot.last_stderr) == moves
    assert all(math.isnan(v) for v in bot.last_stderr.values())


def test_the_particle_filter_gets_the_moves_asked_for():
    bot = SearchAgent(num_players=2, seed=0, determinize="particles", particles=8, moves=2)
    assert bot.filter.moves == 2


def test_an_observation_with_nothing_legal_is_refused():
    searched, _ = _first_positions()
    obs = dict(searched[0], action_mask=np.zeros_like(searched[0]["action_mask"]))
    with pytest.raises(ValueError) as err:
        SearchAgent(num_players=2, determinize="uniform").act(obs)
    assert str(err.value) == ("no legal action in this observation: it is not this agent's "
                              "turn")


def test_the_mean_fallback_plays_the_best_mean_score():
    """``fallback="mean"`` favours no move: at every searched decision the action is the
    argmax of the values it reports (the heuristic fallback keeps the heuristic's move at
    some of them, which is how the two tell apart)."""
    searched, _ = _first_positions(seed=7)
    mean = SearchAgent(num_players=2, seed=0, rollouts=64, determinize="uniform",
                       fallback="mean")
    kept = SearchAgent(num_players=2, seed=0, rollouts=64, determinize="uniform",
                       fallback="heuristic")
    differ = 0
    for obs in searched:
        action = mean.advise(obs)
        best = max(mean.last_values.values())
        assert mean.last_values[action] == best
        differ += kept.advise(obs) != action
    assert differ  # the heuristic's move is kept at least once


def test_what_it_knows_of_the_opponent_stays_across_a_reset_unless_they_changed():
    searched, _ = _first_positions(version=1)
    bot = SearchAgent(num_players=2, seed=0, rollouts=8, particles=16)
    prior = bot.opponent_prior()
    for obs in searched:
        bot.act(obs)
    learnt = bot.opponent_prior()
    assert not np.allclose(learnt, prior)
    bot.reset(seed=1)
    np.testing.assert_allclose(bot.opponent_prior(), learnt)
    bot.reset(seed=1, opponents_changed=True)
    np.testing.assert_allclose(bot.opponent_prior(), prior)
    bot.set_opponent_prior(learnt)
    np.testing.assert_allclose(bot.opponent_prior(), learnt)
    bot.set_opponent_prior(None)  # nothing known: nothing changes
    np.testing.assert_allclose(bot.opponent_prior(), learnt)
    bot.forget_opponents()
    np.testing.assert_allclose(bot.opponent_prior(), prior)
    plain = SearchAgent(num_players=2, determinize="uniform")
    assert plain.opponent_prior() is None
    plain.set_opponent_prior(learnt)
    plain.forget_opponents()
    plain.reset(seed=3, opponents_changed=True)  # no filter: nothing to forget


def test_network_rollouts_run_torch_on_one_thread_and_give_the_others_back(monkeypatch):
    """Torch's thread count is faked (a counter in place of ``set_num_threads``), so the
    real thread pool never changes: a pool resized in a process that forks (the mutation
    tool forks per mutant) deadlocks its children."""
    import torch

    threads = [2]
    calls = []

    def set_num_threads(n):
        calls.append(n)
        threads[0] = n

    monkeypatch.setattr(torch, "get_num_threads", lambda: threads[0])
    monkeypatch.setattr(torch, "set_num_threads", set_num_threads)
    seen = []
    with _torch_threads(1):
        seen.append(threads[0])
    assert seen == [1] and threads == [2] and calls == [1, 2]
    with _torch_threads(None):  # heuristic rollouts: torch is left alone
        seen.append(threads[0])
    assert seen == [1, 2] and calls == [1, 2]
    threads[0] = 1
    with _torch_threads(1):  # already one thread: nothing to set, nothing to give back
        pass
    assert threads == [1] and calls == [1, 2]
    threads[0] = 2
    searched, _ = _first_positions()
    bot = SearchAgent(num_players=2, seed=0, rollouts=8, determinize="uniform",
                      rollout_policy="network")
    inner = bot._network

    def network(obs, masks):
        seen.append(threads[0])
        return inner(obs, masks)

    bot._network = network
    bot.advise(searched[0])
    assert set(seen[2:]) == {1} and len(seen) > 2
    assert threads == [2]


@pytest.mark.parametrize("determinize", ["uniform", "particles"])
def test_a_reset_with_a_seed_plays_as_a_new_bot_of_that_seed(determinize):
    """The seed reaches both the determinizations' generator and the particle filter's."""
    searched, _ = _first_positions(version=determinize == "particles")
    options = {"num_players": 2, "rollouts": 16, "determinize": determinize}
    if determinize == "particles":
        options["particles"] = 16
    used = SearchAgent(seed=5, **options)
    for obs in searched[:3]:
        used.act(obs)
    used.reset(seed=1, opponents_changed=True)
    fresh = SearchAgent(seed=1, **options)
    for obs in searched[:3]:
        assert used.act(obs) == fresh.act(obs)
        assert used.last_values == fresh.last_values
    # and the seed matters: another one deals other worlds at the first decision
    other, again = SearchAgent(seed=2, **options), SearchAgent(seed=1, **options)
    other.act(searched[0])
    again.act(searched[0])
    assert other.last_values != again.last_values


def test_type_rollouts_refuse_what_they_cannot_play():
    """Worlds' types handed to rollouts built without type policies, or type rollouts
    with a network at the searching seat: both are refused, word for word."""
    from agents.search import BatchedRollouts

    searched, _ = _first_positions(version=1)
    bot = SearchAgent(num_players=2, seed=1, rollouts=16, particles=16,
                      rollout_policy="types")
    with _recorded_rollouts() as calls:
        bot.advise(searched[0])
    template, hands, stocks, actions, seeds, kinds = calls[0][0]
    assert kinds is not None
    plain = BatchedRollouts(bot._search_rules, bot.table.params)
    with pytest.raises(ValueError) as err:
        plain.run(template, hands, stocks, actions, seeds, kinds)
    assert str(err.value) == "kinds given to rollouts built without type policies"
    both = BatchedRollouts(bot._search_rules, bot.table.params,
                           network=lambda obs, masks: None, types=bot._types)
    with pytest.raises(ValueError) as err:
        both.run(template, hands, stocks, actions, seeds, kinds)
    assert str(err.value) == ("type rollouts play the heuristic at the searching seat; a "
                              "rollout network does not combine with them")


def _decoded_with_a_hint():
    """A decoded observation of seat 0 in which the opponent drew on a suit."""
    from pis_env import decode_observation

    for seed in range(40):
        searched, _ = _first_positions(seed=seed)
        for obs in searched:
            decoded = decode_observation(obs["observation"], 2)
            if np.any(decoded["drew_on_suit"]):
                return obs, decoded
    raise AssertionError("no position with a drew-on-suit hint")


def test_the_belief_each_mode_deals_from():
    from agents.belief.tracker import hint_belief, uniform_belief

    obs, decoded = _decoded_with_a_hint()
    hints = SearchAgent(determinize="hints").belief(decoded)
    uniform = SearchAgent(determinize="uniform").belief(decoded)
    np.testing.assert_allclose(hints, hint_belief(decoded, weight=0.15))
    np.testing.assert_allclose(uniform, uniform_belief(decoded))
    assert not np.allclose(hints, uniform)  # the hint moves probability
    particles = SearchAgent(num_players=2, seed=0, particles=32)
    particles.act(obs)  # the filter has seen this position
    np.testing.assert_allclose(particles.belief(decoded), particles.filter.belief(decoded))


def test_the_rollouts_heuristic_plays_by_the_searchs_rules_and_weights():
    from agents.heuristic import Params

    searched, _ = _first_positions(n=4, seed=2)
    weights = Params(shed=-3.0, draw_cost=-20.0, jack_keep=-40.0)
    bot = SearchAgent(num_players=4, seed=0, rollouts=32, determinize="uniform",
                      params=weights, seven_penalty="double")
    bot.advise(searched[0])
    (game, policy), = bot._engine._games.values()
    assert policy.rules == bot._search_rules and policy.rules.num_players == 4
    from agents.heuristic.batched import params_vector

    np.testing.assert_array_equal(policy.params, params_vector(weights))
    assert bot._engine.params == weights
    # the weights change what the rollouts play, so what the search estimates
    plain = SearchAgent(num_players=4, seed=0, rollouts=32, determinize="uniform",
                        seven_penalty="double")
    plain.advise(searched[0])
    assert plain.last_values != bot.last_values


def _midgame(rules, size: int = 24):
    """A batched game in which some rows are over and others wait for either seat."""
    from agents.heuristic.batched import HeuristicPolicy
    from pis_env.batched import BatchedGame
    from pis_env.batched import kernels as K

    game = BatchedGame(size, rules, seed=3)
    policy = HeuristicPolicy(size, rules)
    rng = np.random.default_rng(0)
    for _ in range(400):
        st = game.st
        live = st[:, K.LEGAL] != 0
        over = ~live
        if over.sum() >= 3 and (live & (st[:, K.CUR] == 0)).any() and \
                (live & (st[:, K.CUR] == 1)).any():
            return game, policy
        acts = policy.from_game(game).copy()
        # some rows draw where they may, so that deals end at different times
        lucky = live & (rng.random(size) < 0.3)
        for row in np.flatnonzero(lucky):
            legal = [a for a in range(58) if (int(st[row, K.LEGAL]) >> a) & 1]
            acts[row] = legal[rng.integers(len(legal))]
        game.step(acts, write_obs=False)
    raise AssertionError("no game with rows over and rows at both seats")


def test_network_rollout_moves_go_to_the_rows_of_the_seats_it_plays():
    """``network_seats="all"`` (the default): the network answers for every live row, a
    finished row gets -1; ``"searcher"``: only the live rows of seat 0, the heuristic
    answers for the others. Every answer reaches the row it was asked for."""
    from agents.heuristic import DEFAULT_PARAMS
    from agents.search import BatchedRollouts
    from pis_env import Rules
    from pis_env.batched import kernels as K

    rules = Rules(num_players=2)
    game, policy = _midgame(rules)
    st = game.st
    live = st[:, K.LEGAL] != 0
    asked = []

    def network(obs, masks):
        asked.append((obs.copy(), masks.copy()))
        return np.array([int(np.flatnonzero(m)[-1]) for m in masks])  # highest legal

    def highest(rows):
        return [int(np.flatnonzero(game.action_masks(games=[r])[0])[-1]) for r in rows]

    heuristic = policy.from_game(game).copy()
    acts = BatchedRollouts(rules, DEFAULT_PARAMS, network)._network_moves(policy)(game)
    rows = np.flatnonzero(live)
    assert acts.dtype == np.int64
    np.testing.assert_array_equal(asked[0][0], game.observe(games=rows))
    assert acts[~live].tolist() == [-1] * int((~live).sum())
    assert acts[rows].tolist() == highest(rows)
    asked.clear()
    acts = BatchedRollouts(rules, DEFAULT_PARAMS, network,
                           network_seats="searcher")._network_moves(policy)(game)
    mine = np.flatnonzero(live & (st[:, K.CUR] == 0))
    np.testing.assert_array_equal(asked[0][0], game.observe(games=mine))
    assert acts[mine].tolist() == highest(mine)
    others = np.setdiff1d(np.arange(len(acts)), mine)
    assert acts[others].tolist() == heuristic[others].tolist()
    assert heuristic[mine].tolist() != highest(mine)  # the two players differ there


def test_a_rollout_network_is_named_after_its_file():
    from agents.search import rollout_network

    network = rollout_network("models/ppo_2p.zip", 2)
    assert network.name == "ppo:models/ppo_2p.zip" and network.deterministic


@contextmanager
def _recorded_rollouts():
    """Every ``BatchedRollouts.run`` inside the block is recorded: ``(arguments, result)``
    in the list it yields."""
    from agents.search import BatchedRollouts

    records = []
    run = BatchedRollouts.run

    def spy(self, *args):
        records.append((args, run(self, *args)))
        return records[-1][1]

    BatchedRollouts.run = spy
    try:
        yield records
    finally:
        BatchedRollouts.run = run


def _rollout_calls(**options):
    """The arguments of every ``BatchedRollouts.run`` of a search over one deal's first
    three searched decisions, and the engine that ran them."""
    searched, _ = _first_positions(version=options.get("determinize") is None)
    bot = SearchAgent(num_players=2, seed=1, rollouts=12, **options)
    with _recorded_rollouts() as records:
        for obs in searched[:3]:
            bot.advise(obs)
    calls = [args for args, _ in records]
    assert len(calls) == 3 and all(len(c[3]) > 1 for c in calls)
    return calls, bot._engine


def _replay_row(engine, template, hands, stock, seed, action, kinds=None):
    """One world after one action played to the end alone, in a one-game batch set up by
    hand (the reference for ``BatchedRollouts.run``'s rows): the heuristic at every seat,
    or with ``kinds`` ([n] type per seat) the rollouts' type policies."""
    from agents.heuristic.batched import HeuristicPolicy
    from pis_env.batched import BatchedGame
    from pis_env.batched import kernels as K

    rules = engine.rules
    n = rules.num_players
    game = BatchedGame(1, rules, seed=0)
    policy = HeuristicPolicy(1, rules, params=engine.params)
    game.st[0] = template
    game.st[0, K.HAND + 1:K.HAND + n] = hands
    game.stock[0, :len(stock)] = stock
    game.st[0, K.SLEN] = len(stock)
    K.seed_streams(game.rng, np.array([seed], dtype=np.uint64))
    game.step(np.array([action]), write_obs=False)
    while True:
        if kinds is None:
            acts = policy.from_game(game)
        else:
            acts = engine.types.moves(game, np.asarray(kinds)[None], policy.params)
        if acts[0] < 0:
            return game
        game.step(acts, write_obs=False)


@pytest.mark.parametrize("horizon", [None, 6])
def test_every_rollout_row_is_its_world_played_after_its_action(horizon):
    """Row ``d * A + i`` of a rollout batch is determinization ``d`` (its hands, stock and
    seed) after action ``i``, played to the end by the heuristic (``_replay_row``). With a
    horizon most rows stop short of the end: they are truncated, and scored on the hand
    points returned."""
    from pis_env.batched import kernels as K
    from pis_env.cards import points_of

    calls, engine = _rollout_calls(determinize="uniform", horizon=horizon)
    n = engine.rules.num_players
    cut = []
    for template, hands, stocks, actions, seeds, kinds in calls:
        charges, winners, points, truncated = engine.run(template, hands, stocks, actions,
                                                         seeds, kinds)
        assert charges.shape == (len(stocks) * len(actions), n)
        for d in range(len(stocks)):
            for i, action in enumerate(actions):
                game = _replay_row(engine, template, hands[d], stocks[d], seeds[d], action)
                row = d * len(actions) + i
                assert charges[row].tolist() == game.charges[0].tolist(), (d, i)
                assert winners[row].tolist() == game.winners[0].tolist(), (d, i)
                assert points[row].tolist() == [
                    points_of(int(game.st[0, K.HAND + s])) for s in range(n)]
                assert truncated[row] == (game.st[0, K.REASON] == K.TRUNCATED)
                cut.append(bool(truncated[row]))
                # a batch of this one row: the same game (it plays the two of clubs,
                # action 0, in many of them, and is not taken for finished then)
                alone = engine.run(template, hands[d:d + 1], stocks[d:d + 1], [action],
                                   seeds[d:d + 1])
                assert [part[0].tolist() for part in alone] == [
                    part[row].tolist() for part in (charges, winners, points, truncated)]
    # without a horizon every deal ends; with one of 6 moves most do not
    assert (sum(cut) > len(cut) / 2) if horizon else not any(cut)


def test_every_typed_rollout_row_keeps_its_worlds_types():
    """With the worlds' types (``rollout_policy="types"``) each row is its world and action
    played alone by the world's types (``_replay_row``), the epsilon moves drawn from the
    world's seed: so the rows of one world share their random numbers."""
    calls, engine = _rollout_calls(rollout_policy="types", particles=16)
    for template, hands, stocks, actions, seeds, kinds in calls:
        assert kinds is not None and len(set(kinds[:, 1].tolist())) > 1
        charges, winners, *_ = engine.run(template, hands, stocks, actions, seeds, kinds)
        for d in range(len(stocks)):
            for i, action in enumerate(actions):
                game = _replay_row(engine, template, hands[d], stocks[d], seeds[d], action,
                                   kinds[d])
                row = d * len(actions) + i
                assert charges[row].tolist() == game.charges[0].tolist(), (d, i)
                assert winners[row].tolist() == game.winners[0].tolist(), (d, i)


def _searched_calls(n: int = 2, seeds=range(3), **options):
    """``(observation, run's arguments)`` at every searched decision of seat 0 over one
    deal per seed, the other seats heuristics; ``options`` the search's and the table's."""
    rules = {k: options[k] for k in ("draw_rule", "after_penalty", "nominate", "opening",
                                     "seven_penalty") if k in options}
    seen = []
    with _recorded_rollouts() as calls:
        for seed in seeds:
            env = raw_env(num_players=n, **rules)
            env.reset(seed=seed)
            bot = SearchAgent(num_players=n, seed=seed, **options)
            others = [make("heuristic", num_players=n, **rules) for _ in range(n)]
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                if agent == "player_0":
                    before = len(calls)
                    action = bot.act(obs)
                    if len(calls) > before:
                        seen.append((obs, calls[-1][0]))
                else:
                    action = others[int(agent[-1])].act(obs)
                env.step(action)
    return seen


@pytest.mark.parametrize("variant", [{"draw_rule": "one"}, {"draw_rule": "until_playable"},
                                     {"nominate": "other"}, {"opening": "first_round"}])
def test_the_rollouts_start_from_the_moves_the_table_allows(variant):
    """At a variant's table, the rollouts' first position allows exactly the moves the
    observation's mask allows, and they try each of them."""
    from pis_env.batched import kernels as K

    seen = _searched_calls(rollouts=8, determinize="uniform", **variant)
    assert len(seen) > 5
    for obs, (template, *_, actions, _seeds, _kinds) in seen:
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        assert [a for a in range(58) if (int(template[K.LEGAL]) >> a) & 1] == legal
        assert list(actions) == legal


def test_one_rollout_per_legal_action_when_the_budget_is_smaller():
    searched, _ = _first_positions()
    bot = SearchAgent(num_players=2, seed=0, rollouts=1, determinize="uniform")
    counts = []
    for obs in searched:
        bot.advise(obs)
        counts.append((bot.last_rollouts, int(obs["action_mask"].sum())))
    assert all(r == legal for r, legal in counts) and max(legal for _, legal in counts) > 2


def test_every_world_rolls_out_with_its_own_seed():
    seen = _searched_calls(seeds=[0], rollouts=600, determinize="uniform")
    for _, (*_, actions, seeds, _kinds) in seen:
        assert len(set(seeds.tolist())) == len(seeds) == 600 // len(actions)
        assert seeds.min() >= 1


@pytest.mark.parametrize("determinize", ["uniform", "hints", "belief"])
def test_no_world_gives_an_opponent_a_card_it_cannot_hold(monkeypatch, determinize):
    """What the tracker knows an opponent lacks (a hard void) is never dealt to it: the
    dealt hands are read where the search deals them, the voids from its tracker then."""
    import agents.search as search_module

    bots = []
    checked = []
    deal = search_module.sample_hidden_batch

    def spy(*args):
        hands, stocks = deal(*args)
        void = bots[-1].tracker.void[1]
        forbidden = sum(1 << int(c) for c in np.flatnonzero(void))
        checked.append(bool(forbidden))
        assert all(int(h) & forbidden == 0 for h in hands[:, 0])
        return hands, stocks

    monkeypatch.setattr(search_module, "sample_hidden_batch", spy)
    for seed in range(12):
        env = raw_env(num_players=2)
        env.reset(seed=seed)
        bots.append(SearchAgent(num_players=2, seed=seed, rollouts=64,
                                determinize=determinize))
        other = make("heuristic", num_players=2)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step((bots[-1] if agent == "player_0" else other).act(obs))
    assert sum(checked) >= 2, "too few decisions with a known void"


def test_the_defaults():
    bot = SearchAgent()
    assert (bot.num_players, bot.num_deals, bot.rollouts, bot.confidence, bot.win_bonus,
            bot.determinize, bot.rollout_policy, bot.match_aware) == (
        2, 1, 4096, 0.0, 1000.0, "particles", "heuristic", True)
    assert (bot.last_rollouts, bot.last_values, bot.rollout_path) == (0, {}, None)
    typed = SearchAgent(rollout_policy="types", seven_penalty="double")
    assert typed._types.rules == typed._search_rules
    from agents.search import BatchedRollouts

    with pytest.raises(ValueError) as err:
        BatchedRollouts(bot._search_rules, bot.table.params, network_seats="opponents")
    assert str(err.value) == "network_seats='opponents': one of all, searcher"


@pytest.mark.parametrize("num_deals", [1, 4])
def test_a_short_horizon_scores_the_cut_rollouts_on_hand_points(num_deals):
    """Rollouts cut by the horizon are scored as if the deal had ended on hand points, at
    a deal's table and a match's: the values are the mean scores of the rows returned."""
    from agents.match_value import match_scores, settled_charges, standing
    from agents.mc import scores_of

    env = raw_env(num_players=2, num_deals=num_deals)
    env.reset(seed=4)
    bot = SearchAgent(num_players=2, num_deals=num_deals, seed=0, rollouts=12,
                      determinize="uniform", horizon=4)
    other = make("heuristic", num_players=2, num_deals=num_deals)
    checked = 0
    with _recorded_rollouts() as records:
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc or checked >= 3:
                break
            if agent == "player_0" and obs["action_mask"].sum() > 1:
                bot.advise(obs)
                charges, winners, points, truncated = records[-1][1]
                assert truncated.any()
                if num_deals == 1:
                    scores = scores_of(charges, winners, points, truncated, "points",
                                       bot.win_bonus)
                else:
                    match = standing(bot.decode(obs), num_deals)
                    scores = match_scores(settled_charges(charges, winners, points, truncated),
                                          match[1], match[0], num_deals)
                means = scores.reshape(-1, len(bot.last_values)).mean(axis=0)
                assert list(bot.last_values.values()) == pytest.approx(means.tolist())
                checked += 1
                env.step(bot.act(obs))
            else:
                env.step((bot if agent == "player_0" else other).act(obs))
    assert checked == 3


def test_heuristic_rollouts_leave_torch_alone(monkeypatch):
    import torch

    calls = []
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    monkeypatch.setattr(torch, "set_num_threads", calls.append)
    searched, _ = _first_positions()
    SearchAgent(num_players=2, seed=0, rollouts=8, determinize="uniform").advise(searched[0])
    assert calls == []


def test_an_error_inside_the_torch_threads_block_is_not_swallowed():
    with pytest.raises(KeyError), _torch_threads(None):
        raise KeyError("raised in the block")


def test_a_position_with_one_legal_action_is_never_searched_whatever_it_is():
    """The only legal action is played at once, also action 0 (the two of clubs)."""
    _, forced = _first_positions()
    bot = SearchAgent(num_players=2, seed=0, rollouts=8, determinize="uniform")
    for only in (0, 1, 57):
        mask = np.zeros_like(forced[0]["action_mask"])
        mask[only] = 1
        assert bot.advise(dict(forced[0], action_mask=mask)) == only
        assert bot.last_rollouts == 0


def test_the_learned_belief_mode_deals_from_its_model():
    """``determinize="belief"`` deals from the learned card-location model of the table's
    size (``belief_path`` another file of it): not uniformly."""
    from agents.belief.tracker import load_model, uniform_belief

    obs, decoded = _decoded_with_a_hint()
    bot = SearchAgent(num_players=2, seed=0, rollouts=16, determinize="belief")
    assert bot.model is load_model(2)
    bot.act(obs)
    learnt = bot.belief(decoded)
    np.testing.assert_allclose(learnt, bot.model(decoded, bot.tracker))
    assert not np.allclose(learnt, uniform_belief(decoded), atol=0.02)
    same = SearchAgent(num_players=2, seed=0, determinize="belief",
                       belief_path="models/belief_2p.pt")
    np.testing.assert_allclose(same.model(decoded, bot.tracker), learnt)  # the same file
    assert SearchAgent(num_players=4, determinize="belief").model is load_model(4)
    assert SearchAgent(num_players=2, determinize="particles").model is None
    # another file is read: the 4-player model (its features are per opponent, so it
    # serves any table) gives other probabilities here
    other = SearchAgent(num_players=2, determinize="belief", belief_path="models/belief_4p.pt")
    assert not np.allclose(other.model(decoded, bot.tracker), learnt)


def test_the_search_is_given_its_belief_rollouts_and_choice_as_objects():
    """The objects of ``agents.search_options`` build the same bot as the shorthand, and
    a bot given both an object and shorthand for it is refused."""
    from agents.search_options import (
        HintBelief,
        KeepHeuristic,
        NetworkRollouts,
        Particles,
        TypeRollouts,
        UniformBelief,
        from_shorthand,
    )

    bot = SearchAgent(num_players=2, belief=HintBelief(), rollout=NetworkRollouts(seats="searcher"),
                      choice=KeepHeuristic(2.5))
    assert (bot.determinize, bot.rollout_policy, bot.fallback, bot.confidence,
            bot.rollout_path) == ("hints", "mixed", "heuristic", 2.5, "models/ppo_2p.zip")
    belief, rollout, choice, rest = from_shorthand(
        {"determinize": "particles", "particles": 64, "rollout_policy": "types",
         "type_temperature": 0.5, "horizon": 30, "seven_penalty": "double"})
    assert belief == Particles(64, "panel?networks=0", None)
    assert rollout == TypeRollouts(0.5, 30) and choice.name == "mean"
    assert rest == {"seven_penalty": "double"}
    with pytest.raises(ValueError) as err:
        SearchAgent(belief=UniformBelief(), rollout_policy="network")
    assert str(err.value) == ("belief given as an object and rollout_policy as shorthand: "
                              "give one or the other")
    with pytest.raises(ValueError) as err:
        SearchAgent(belief=HintBelief(), rollout=TypeRollouts())
    assert str(err.value) == ("rollout_policy='types' plays the particle filter's types: "
                              "determinize='particles', not 'hints'")
    typed = SearchAgent(belief=Particles(particles=16), rollout=TypeRollouts(), seed=0)
    assert typed.belief_source.opponent_model == "panel?networks=0"


def test_the_shorthand_builds_the_objects_it_names():
    from agents.search_options import from_shorthand

    belief, rollout, choice, rest = from_shorthand(
        {"determinize": "particles", "particles": 16, "moves": 2, "rollout_policy": "types",
         "type_temperature": 0.0, "horizon": 7, "fallback": "heuristic", "draw_rule": "one"})
    assert (belief.particles, belief.moves, belief.opponent_model) == (16, 2, TYPES_MODEL)
    assert (rollout.temperature, rollout.horizon) == (0.0, 7)
    assert choice.confidence == 1.0 and rest == {"draw_rule": "one"}
    assert from_shorthand({"rollout_policy": "types", "determinize": "particles",
                           "type_temperature": 1e6})[1].temperature == 1e6
    for bad in (-0.5, 1e6 + 0.5):
        with pytest.raises(ValueError, match=r"must be in 0\.\.1e6"):
            from_shorthand({"rollout_policy": "types", "determinize": "particles",
                            "type_temperature": bad})
    with pytest.raises(ValueError) as err:
        from_shorthand({"type_temperature": 0.5})
    assert str(err.value) == ("type_temperature sharpens the types the rollouts of "
                              "rollout_policy='types' play; other rollouts draw no type")


def test_a_network_search_keeps_its_horizon_with_the_shipped_network():
    bot = SearchAgent(num_players=2, seed=0, rollout_policy="network", horizon=9)
    assert (bot.rollout.path, bot.rollout.horizon) == ("models/ppo_2p.zip", 9)


def test_objects_and_shorthand_together_are_refused_naming_both():
    from agents.search_options import BestMean, HeuristicRollouts

    with pytest.raises(ValueError) as err:
        SearchAgent(num_players=2, rollout=HeuristicRollouts(None), choice=BestMean(),
                    determinize="uniform", fallback="mean")
    assert str(err.value) == ("rollout, choice given as an object and determinize, fallback "
                              "as shorthand: give one or the other")


def test_type_rollouts_given_as_objects_keep_the_filters_size_and_moves():
    from agents.search_options import BestMean, Particles, TypeRollouts

    bot = SearchAgent(num_players=2, seed=0, belief=Particles(16, None, 2),
                      rollout=TypeRollouts(1.0, None), choice=BestMean())
    assert (bot.filter.particles, bot.filter.moves) == (16, 2)
    assert bot.last_stderr == {} and bot.last_values == {}


def test_type_rollouts_are_the_same_for_the_same_seed():
    searched, _ = _first_positions()
    values = []
    for _ in range(2):
        bot = SearchAgent(num_players=2, seed=3, rollouts=32, determinize="particles",
                          particles=16, rollout_policy="types")
        bot.advise(searched[0])
        values.append(bot.last_values)
    assert values[0] == values[1]
