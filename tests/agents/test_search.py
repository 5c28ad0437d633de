"""The belief-guided search bot (agents.search): deterministic for a seed, legal at every
table size, its budget counted in rollouts."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make
from agents.mc import scores_of
from pis_env import pis_yedili_v1, raw_env


def _play(n: int, seed: int, search_kwargs: dict, others: str = "heuristic",
          version: int = 0):
    """One deal with ``search`` in seat 0: its actions, rollout counts and legal-action
    counts at each of its decisions (a ``pis_yedili_v{version}`` table)."""
    # illegal_action="raise": an illegal move fails the test
    env = pis_yedili_v1.raw_env(num_players=n) if version else raw_env(num_players=n)
    env.reset(seed=seed)
    bots = [make("search", num_players=n, seed=seed, **search_kwargs)]
    bots += [make(others, num_players=n, seed=seed + s) for s in range(1, n)]
    record = []
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = int(agent.split("_")[1])
        action = bots[seat].act(obs)
        assert obs["action_mask"][action] == 1
        if seat == 0:
            record.append((action, bots[0].last_rollouts, int(obs["action_mask"].sum())))
        env.step(action)
    return record


def test_deterministic_for_a_seed():
    a = _play(2, 5, {"rollouts": 24})
    b = _play(2, 5, {"rollouts": 24})
    assert a == b
    assert any(r for _, r, _ in a), "the search must have searched at least once"


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_legal_at_every_table_size(n):
    record = _play(n, 10 + n, {"rollouts": 8}, others="random" if n % 2 else "heuristic")
    assert record


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("version", [0, 1])
def test_particles_legal_at_every_table_size(n, version):
    """The particle-filter mode at v0 tables (worlds projected) and v1 tables (exact
    events): legal, and at v1 never out of step with the table."""
    kwargs = {"rollouts": 8, "determinize": "particles", "particles": 16}
    others = "random" if n % 2 else "heuristic"
    for seed in range(20 + n, 30 + n):  # a deal in which seat 0 gets to move
        record = _play(n, seed, kwargs, others, version)
        if record:
            break
    assert record
    again = _play(n, seed, kwargs, others, version)
    assert again == record  # deterministic for a seed


@pytest.mark.parametrize("mode", ["belief", "hints", "uniform", "particles"])
def test_budget_in_rollouts(mode):
    budget = 20
    record = _play(2, 3, {"rollouts": budget, "determinize": mode})
    searched = [(r, legal) for _, r, legal in record if legal > 1]
    assert searched
    for rollouts, legal in searched:
        # budget // A determinizations x A actions: never more than the budget, unless
        # there are more legal actions than rollouts (then one each).
        assert rollouts == max(1, budget // legal) * legal
        assert rollouts <= max(budget, legal)
    assert all(r == 0 for _, r, legal in record if legal == 1)


def test_bad_arguments():
    with pytest.raises(ValueError, match="rollouts"):
        make("search", rollouts=0)
    with pytest.raises(ValueError, match="determinize"):
        make("search", determinize="oracle")


def test_scores_match_mc():
    """The vectorized score: charge differential plus the win
    bonus, truncated rows scored on hand points."""
    charges = np.array([[0, 30], [12, 0], [0, 0]])
    winners = np.array([[1, 0], [0, 1], [0, 0]])
    points = np.array([[0, 30], [12, 0], [5, 9]])
    truncated = np.array([False, False, True])
    s = scores_of(charges, winners, points, truncated, "points", 100.0)
    np.testing.assert_allclose(s, [30 + 100, -12 - 100, 9 + 100])


def test_paired_difference(tmp_path):
    """The paired comparison of two tournaments reads the search seat's wins per
    (deal, rotation)."""
    from agents.tournament.compare import paired_difference

    head = "table,deal,rotation,seat,agent,charge,winner,end_reason,decisions\n"
    a = tmp_path / "a.csv"
    b = tmp_path / "b.csv"
    a.write_text(head + "0,0,0,0,search,0,1,going_out,5\n0,0,0,1,heuristic,9,0,going_out,5\n"
                 "0,1,0,0,search,0,1,going_out,5\n0,1,0,1,heuristic,9,0,going_out,5\n")
    b.write_text(head + "0,0,0,0,search?x=1,0,1,going_out,5\n0,0,0,1,heuristic,9,0,going_out,5\n"
                 "0,1,0,0,search?x=1,7,0,going_out,5\n0,1,0,1,heuristic,0,1,going_out,5\n")
    diff, low, high, count = paired_difference(str(a), str(b))
    assert (diff, count) == (0.5, 2)
    assert low < 0.5 < high


# ---------------------------------------------------------------------- rollout policies
PPO_2P = "models/ppo_2p.zip"


@pytest.mark.parametrize("mode", ["network", "mixed"])
def test_network_rollouts_legal_and_deterministic(mode):
    a = _play(2, 5, {"rollouts": 16, "rollout_policy": mode})
    b = _play(2, 5, {"rollouts": 16, "rollout_policy": mode})
    assert a == b
    searched = [(r, legal) for _, r, legal in a if legal > 1]
    assert searched, "the search must have searched at least once"
    assert all(r == max(1, 16 // legal) * legal for r, legal in searched)


def test_heuristic_mode_is_the_default():
    """``rollout_policy="heuristic"`` is the bot as it was: the same actions and the same
    rollout values for a seed."""
    a = make("search", num_players=2, seed=4, rollouts=24)
    b = make("search", num_players=2, seed=4, rollouts=24, rollout_policy="heuristic")
    assert a._network is None and b._network is None
    env = raw_env(num_players=2)
    env.reset(seed=4)
    other = make("heuristic", num_players=2)
    compared = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent == "player_1":
            env.step(other.act(obs))
            continue
        action = a.act(obs)
        assert b.act(obs) == action
        assert a.last_values == b.last_values
        compared += bool(a.last_values)
        env.step(action)
    assert compared


class _Recorder:
    """Wraps the rollout network: every batch it was asked to move, and its answers."""

    def __init__(self, network):
        self.network = network
        self.calls = []

    def __call__(self, obs, masks):
        acts = self.network(obs, masks)
        self.calls.append((obs.copy(), masks.copy(), acts.copy()))
        return acts


def _searched_position(n: int = 2, seed: int = 5):
    """An observation of seat 0 with more than one legal action."""
    env = raw_env(num_players=n)
    env.reset(seed=seed)
    bot = make("heuristic", num_players=n)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        assert not (term or trunc), "no searched decision in this deal"
        if agent == "player_0" and obs["action_mask"].sum() > 1:
            return obs
        env.step(bot.act(obs))
    raise AssertionError("unreachable")


def _recorded_search(mode: str, obs: dict):
    search = make("search", num_players=2, seed=1, rollouts=8, rollout_policy=mode)
    recorder = search._network = _Recorder(search._network)
    search.act(obs)
    assert search.last_rollouts
    return recorder


def test_network_rollout_moves_are_the_networks_argmax():
    """Every rollout move after the searched action is asked of the network (the
    heuristic plays none), on the mover's observation, and it is the argmax that the
    ``ppo`` agent plays at that observation."""
    recorder = _recorded_search("network", _searched_position())
    assert recorder.calls, "the rollouts never asked the network: heuristic rollouts?"
    ppo = make("ppo", num_players=2, path=PPO_2P)
    checked = 0
    for obs, masks, acts in recorder.calls[::3]:
        for row in range(0, len(acts), 2):
            assert masks[row, acts[row]] == 1
            assert ppo.act({"observation": obs[row], "action_mask": masks[row]}) == acts[row]
            checked += 1
    assert checked >= 10
    # every unfinished row moves with the network: a rollout of 8 rows asks for 8 moves
    # at first, then fewer as deals end
    sizes = [len(acts) for _, _, acts in recorder.calls]
    assert sizes[0] == 8 and sizes == sorted(sizes, reverse=True)


def test_mixed_rollouts_ask_the_network_for_the_searching_seat_only():
    """``mixed``: the network moves seat 0 only (the opponents are the heuristic), so it
    is asked about fewer rows than with ``network``, but about some."""
    obs = _searched_position()
    full = _recorded_search("network", obs)
    mixed = _recorded_search("mixed", obs)
    rows_full = sum(len(a) for _, _, a in full.calls)
    rows_mixed = sum(len(a) for _, _, a in mixed.calls)
    assert 0 < rows_mixed < rows_full


def test_rollout_policy_from_a_spec_string():
    from agents.tournament.specs import build_agent

    bot = build_agent("search?rollouts=16&rollout_policy=network", 2, seed=3)
    assert (bot.rollouts, bot.rollout_policy, bot.rollout_path) == (
        16, "network", "models/ppo_2p.zip")
    assert bot._network is not None
    big = build_agent("search?rollouts=16&rollout_policy=mixed", 7, seed=3)
    assert big.rollout_path == "models/ppo_7p.zip" and big._network is not None


def test_bad_rollout_options():
    with pytest.raises(ValueError, match="heuristic, network, mixed"):
        make("search", rollout_policy="oracle")
    with pytest.raises(ValueError, match="4 players"):
        make("search", num_players=2, rollout_policy="network", rollout_path="models/ppo_4p.zip")
    with pytest.raises(ValueError, match="rollout_path"):
        make("search", rollout_path=PPO_2P)  # a network for heuristic rollouts
