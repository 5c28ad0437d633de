"""Every bot at match tables: a deal-level network plays each deal of a match through the
deal view, a match network only at its own deal count, and whole four-deal matches with
every registered bot.

The reference for "the deal observation" is a one-deal ``ObservationEncoder`` writing the
same engine state (it has no ``deal``/``scores`` segments), not the view's own indices."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import agents
from agents.common.weights_file import save_weights_file
from agents.ppo import POLICY_FORMAT, PolicyLoadError, make_metadata
from pis_env import raw_env
from pis_env.observation import Layout, deal_view_indices, observation_encoder


@pytest.mark.parametrize("num_players,version", [(2, 0), (4, 0), (3, 1)])
def test_the_deal_view_is_the_one_deal_observation(num_players, version):
    env = raw_env(num_players=num_players, num_deals=3)
    env.reset(seed=5)
    match = observation_encoder(num_players, 3, version)
    deal = observation_encoder(num_players, 1, version)
    view = deal_view_indices(num_players, 3, version)
    assert view.size == Layout.of(num_players, 1, version).size
    rng = np.random.default_rng(0)
    game, seen_deals = env.game, set()
    while not game.match_over:
        seen_deals.add(game.deal_index)
        for seat in range(num_players):
            np.testing.assert_array_equal(match.encode(game, seat)[view],
                                          deal.encode(game, seat))
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)[
            "action_mask"]))))
    assert seen_deals == {0, 1, 2} and sum(game.totals) > 0  # the scores were not all 0


@pytest.mark.parametrize("num_players", [2, 4])
def test_a_shipped_network_plays_each_deal_of_a_match_as_a_single_deal(num_players):
    """At every decision of a four-deal match its move is the one the same network makes
    at a one-deal table shown the same position."""
    match_bot = agents.make("ppo", path=f"ppo_{num_players}p", num_players=num_players,
                            num_deals=4)
    deal_bot = agents.make("ppo", path=f"ppo_{num_players}p", num_players=num_players)
    one_deal = observation_encoder(num_players, 1, deal_bot.layout_version)
    env = raw_env(num_players=num_players, num_deals=4)
    env.reset(seed=3)
    game, decisions = env.game, 0
    while not game.match_over:
        seat = game.current
        obs = env.observe(env.possible_agents[seat])
        action = match_bot.act(obs)
        alone = {"observation": one_deal.encode(game, seat), "action_mask": obs["action_mask"]}
        assert action == deal_bot.act(alone)
        np.testing.assert_array_equal(match_bot.probabilities(obs),
                                      deal_bot.probabilities(alone))
        env.step(action)
        decisions += 1
    assert game.deal_index == 3 and decisions > 40


def _match_policy(tmp_path, num_deals: int = 4):
    """A small random network trained (as its metadata says) on ``num_deals``-deal
    matches, saved as a weights-only export."""
    rng = np.random.default_rng(0)
    meta = make_metadata(rules={"num_players": 2, "num_deals": num_deals},
                         net_arch={"pi": [8], "vf": [8]}, activation="tanh",
                         features=["obs"])
    width = meta["input_size"]
    state = {"mlp_extractor.policy_net.0.weight": rng.normal(size=(8, width)),
             "mlp_extractor.policy_net.0.bias": rng.normal(size=8),
             "action_net.weight": rng.normal(size=(58, 8)),
             "action_net.bias": rng.normal(size=58)}
    path = tmp_path / "match.pt"
    save_weights_file({"format": POLICY_FORMAT, "meta": json.dumps(meta),
                       "state_dict": {k: torch.tensor(v, dtype=torch.float32)
                                      for k, v in state.items()}}, path)
    return path


def test_a_match_network_plays_at_its_own_deal_count_only(tmp_path):
    path = _match_policy(tmp_path)
    bot = agents.make("ppo", path=str(path), num_players=2, num_deals=4)
    assert bot.deal_view is None
    env = raw_env(num_players=2, num_deals=4)
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][bot.act(obs)] == 1
    for deals in (1, 3):
        with pytest.raises(PolicyLoadError, match=r"trained for 4-deal matches.*"
                           r"seat it at a 4-deal table \(num_deals=4\)"):
            agents.make("ppo", path=str(path), num_players=2, num_deals=deals)


def test_a_network_refuses_a_table_of_another_size():
    with pytest.raises(PolicyLoadError, match="trained for 2 players"):
        agents.make("ppo", path="ppo_2p", num_players=4, num_deals=4)


#: Small budgets for the searching bots (the test is about playing matches, not strength;
#: the default particle search's match scoring is tests/agents/test_match_value.py's).
BUDGETS = {"search": {"rollouts": 16, "determinize": "hints"},
           "mc": {"samples": 1, "rollouts": 1, "track": False}}


def _match_bots(num_players: int, num_deals: int = 4) -> list[tuple[str, dict]]:
    """Every registered bot but ``human`` that sits at the table's size (``ppo`` once per
    shipped policy that plays the table: of its size, trained on single deals or on
    matches of ``num_deals``), with the keyword arguments it is built with."""
    from agents.ppo import read_policy
    from pis_env.shipped import find_shipped, shipped_names

    out = []
    for name in sorted(agents.REGISTRY):
        low, high = agents.REGISTRY[name].players
        if name == "human" or not low <= num_players <= high:  # the student: 2 players
            continue
        if name == "ppo":
            for p in shipped_names("model"):
                if not p.startswith(f"ppo_{num_players}p"):
                    continue
                trained = read_policy(find_shipped(p, "model"))[0]["num_deals"]
                if trained in (1, num_deals):
                    out.append(("ppo", {"path": p}))
        else:
            out.append((name, BUDGETS.get(name, {})))
    return out


@pytest.mark.parametrize("num_players", [2, 4])
def test_every_bot_plays_whole_four_deal_matches(num_players):
    """Each bot sits at seat 0 of one four-deal match against heuristics, built through
    ``agents.make(..., num_deals=4)``, and moves in every deal."""
    bots = _match_bots(num_players)
    assert {"ppo", "search", "mc", "heuristic", "random"} <= {name for name, _ in bots}
    assert sum(name == "ppo" for name, _ in bots) >= 1
    for k, (name, options) in enumerate(bots):
        bot = agents.make(name, num_players=num_players, num_deals=4, seed=k, **options)
        others = [agents.make("heuristic", num_players=num_players, num_deals=4)
                  for _ in range(num_players - 1)]
        players = [bot, *others]
        env = raw_env(num_players=num_players, num_deals=4)
        env.reset(seed=k)
        game, moved_in = env.game, set()
        while not game.match_over:
            seat = game.current
            if seat == 0:
                moved_in.add(game.deal_index)
            env.step(players[seat].act(env.observe(env.possible_agents[seat])))
        assert game.end_reason != "truncated" and game.deal_index == 3, (name, options)
        assert moved_in == {0, 1, 2, 3}, (name, options)


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_heuristic_knows_the_standing_and_plays_its_single_deal_moves(num_players):
    match_bot = agents.make("heuristic", num_players=num_players, num_deals=4)
    deal_bot = agents.make("heuristic", num_players=num_players)
    one_deal = observation_encoder(num_players, 1)
    env = raw_env(num_players=num_players, num_deals=4)
    env.reset(seed=11)
    game = env.game
    while not game.match_over:
        seat = game.current
        obs = env.observe(env.possible_agents[seat])
        action = match_bot.act(obs)
        totals = [game.totals[(seat + k) % num_players] for k in range(num_players)]
        assert match_bot.last_standing == (game.deal_index, totals)
        assert action == deal_bot.act({"observation": one_deal.encode(game, seat),
                                       "action_mask": obs["action_mask"]})
        env.step(action)
    assert deal_bot.last_standing is None and max(game.totals) > 0


@pytest.mark.parametrize("num_deals", [1, 2, 100])
def test_every_bot_moves_at_a_table_of_any_length(num_deals):
    """Built for a table of 1, 2 or 100 deals, each bot makes a legal move there (in the
    second deal of a longer match, where the standing is not all zeros)."""
    env = raw_env(num_players=2, num_deals=num_deals)
    env.reset(seed=1)
    heuristic = agents.make("heuristic", num_players=2, num_deals=num_deals)
    game = env.game
    while num_deals > 1 and game.deal_index == 0:
        env.step(heuristic.act(env.observe(env.agent_selection)))
    while env.observe(env.agent_selection)["action_mask"].sum() < 2:
        env.step(heuristic.act(env.observe(env.agent_selection)))
    obs = env.observe(env.agent_selection)
    for name, options in _match_bots(2, num_deals):
        bot = agents.make(name, num_players=2, num_deals=num_deals, seed=0, **options)
        assert obs["action_mask"][bot.act(obs)] == 1, (name, options)


def test_the_batched_network_plays_each_deal_of_a_match_as_a_single_deal():
    """``TorchPolicy`` (the batched engine's network opponents) of a deal-level network at
    a match table: its logits on the match rows of layout 0, and of layout 1 (where the
    match segments sit in the middle), are the deal-level network's on the one-deal
    encoding of the same state, in every deal of the match."""
    from agents.batched_policy import TorchPolicy

    path = "models/ppo_2p.zip"
    at_match = TorchPolicy.from_file(path, 2, 3, deterministic=True)
    at_deal = TorchPolicy.from_file(path, 2, 1, deterministic=True)
    env = raw_env(num_players=2, num_deals=3)
    env.reset(seed=8)
    encoders = [observation_encoder(2, 3, v) for v in (0, 1)]
    deal = observation_encoder(2, 1, 0)
    rng = np.random.default_rng(1)
    game, seen_deals = env.game, set()
    while not game.match_over:
        seen_deals.add(game.deal_index)
        seat = game.current
        mask = env.observe(env.agent_selection)["action_mask"][None]
        want = at_deal.logits(deal.encode(game, seat)[None], mask)
        for encoder in encoders:
            torch.testing.assert_close(at_match.logits(encoder.encode(game, seat)[None], mask),
                                       want)
        env.step(int(rng.choice(np.flatnonzero(mask[0]))))
    assert seen_deals == {0, 1, 2}
    with pytest.raises(ValueError, match="rows of 5 entries"):
        at_match(np.zeros((1, 5), np.float32), np.ones((1, 58), np.int8))


def test_a_batched_layout_1_network_reads_around_the_match_segments():
    """A deal-level network of layout 1 (random weights, every input column used) at a
    layout-1 match table, whose ``deal`` and ``scores`` come before v1's own segments."""
    from agents.batched_policy import TorchPolicy

    rng = np.random.default_rng(3)
    size = Layout.of(2, 1, 1).size
    net = torch.nn.Sequential(torch.nn.Linear(size + 58, 16), torch.nn.Tanh(),
                              torch.nn.Linear(16, 58))
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.as_tensor(rng.normal(0.0, 0.5, p.shape), dtype=torch.float32))
    at_match = TorchPolicy(net, features=("obs", "mask"), layout=(2, 1, 1), table_deals=2)
    at_deal = TorchPolicy(net, features=("obs", "mask"), layout=(2, 1, 1))
    env = raw_env(num_players=2, num_deals=2)
    env.reset(seed=9)
    match, deal = observation_encoder(2, 2, 1), observation_encoder(2, 1, 1)
    game, count = env.game, 0
    while not game.match_over:
        mask = env.observe(env.agent_selection)["action_mask"][None]
        torch.testing.assert_close(at_match.logits(match.encode(game, game.current)[None], mask),
                                   at_deal.logits(deal.encode(game, game.current)[None], mask))
        count += 1
        env.step(int(rng.choice(np.flatnonzero(mask[0]))))
    assert count > 40 and sum(game.totals) > 0
