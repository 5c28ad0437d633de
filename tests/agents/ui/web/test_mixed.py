"""Mixed browser tables: a v1 network (``pis_yedili_v1`` observation), a v0 network and
rule-based bots at one table, each seat shown the observation of the layout its bot was
built for.

The reference is independent of the table: the finished game's exported history stepped
by ``pis_env.history.replay`` in a ``pis_yedili_v1`` and a ``pis_yedili_v0`` AEC env, whose
own ``observe`` gives what each seat should have been shown. Hidden cards stay secret: the
leak checks of ``test_api.py`` are run on a mixed table too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import agents
import agents.ui.web.bots as web_bots
from agents.ppo import make_metadata
from pis_env import pis_yedili_v0, pis_yedili_v1
from pis_env.history import replay
from pis_env.observation import Layout
from tests.conftest import finished_history

from .test_api import _LeakCheck, client, play_out, step

ROOT = Path(__file__).resolve().parents[4]
V0_4P = "ppo:models/ppo_4p.zip"


def v1_network(path: Path, num_deals: int) -> str:
    """A 4-player network of layout 1 (random weights: what it plays does not matter
    here, what it is shown does), saved as train/sb3/run.py saves its policy.pt; its spec."""
    import torch

    from train.common.checkpoint import export_weights

    meta = make_metadata(rules={"num_players": 4, "num_deals": num_deals},
                         net_arch={"pi": [16], "vf": [16]}, activation="tanh",
                         features=["obs", "mask"], layout_version=1)
    gen = torch.Generator().manual_seed(0)
    state = {"mlp_extractor.policy_net.0.weight": torch.randn(16, meta["input_size"],
                                                               generator=gen),
             "mlp_extractor.policy_net.0.bias": torch.randn(16, generator=gen),
             "action_net.weight": torch.randn(58, 16, generator=gen),
             "action_net.bias": torch.randn(58, generator=gen)}
    path = path / f"v1_4p_{num_deals}.pt"
    export_weights(state, meta, path)
    return f"ppo:{path}"


@pytest.fixture(scope="module")
def v1_specs(tmp_path_factory) -> dict[int, str]:
    """The layout-1 network of a one-deal and of a two-deal table."""
    tmp = tmp_path_factory.mktemp("v1web")
    return {d: v1_network(tmp, d) for d in (1, 2)}


def reference_views(history_text: str) -> list[tuple[int, dict[int, np.ndarray], np.ndarray]]:
    """Per move of a bot (seat != 0), in order: its seat, the observation a
    ``pis_yedili_v0`` and a ``pis_yedili_v1`` env show it ({layout: vector}), the mask."""
    out = []
    for v0, v1 in zip(replay(history_text, pis_yedili_v0.raw_env),
                      replay(history_text, pis_yedili_v1.raw_env)):
        game = v1.game
        if game.match_over or game.deal_over or game.current == 0:
            continue
        agent = v1.possible_agents[game.current]
        views = {0: v0.observe(agent)["observation"], 1: v1.observe(agent)["observation"]}
        out.append((game.current, views, v1.observe(agent)["action_mask"]))
    return out


@pytest.fixture
def shown(monkeypatch) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """What the bot lanes hand each bot: ``(seat, observation, mask)`` per move."""
    seen: list = []
    real = web_bots.perform

    def spy(bots, prototypes, op, args):
        if op == "act":
            _, seat, observation = args
            seen.append((seat, np.array(observation["observation"]),
                         np.array(observation["action_mask"])))
        return real(bots, prototypes, op, args)

    monkeypatch.setattr(web_bots, "perform", spy)
    return seen


@pytest.mark.parametrize("deals, others", [(1, (V0_4P, "heuristic")),
                                           (2, ("greedy", "held_out"))])
def test_each_seat_is_shown_its_own_layout(v1_specs, deals, others, shown):
    """A v1 network next to the shipped v0 one and the heuristic (one deal), and next to
    two other rule-based bots in a two-deal match (the log across the deal's end)."""
    v1_spec = v1_specs[deals]
    lineup = [v1_spec, *others]
    api = client("--players", "4", "--deals", str(deals), "--bots", ",".join(lineup),
                 "--seed", "2", "--show-bot-policy")
    L0, L1 = (Layout.of(4, deals, v).size for v in (0, 1))
    layouts = {seat: (1 if spec == v1_spec else 0) for seat, spec in enumerate(lineup, 1)}
    network = agents.make("ppo", path=v1_spec[4:], num_players=4, num_deals=deals)
    for game in range(2):
        shown.clear()
        state = api.post("/api/games", json={"bots": lineup}).json()
        states = play_out(api, state, np.random.default_rng(game))
        history = api.get(f"/api/games/{state['id']}/history").text
        expected = reference_views(history)
        assert len(shown) == len(expected) > 20
        for (seat, obs, mask), (ref_seat, views, ref_mask) in zip(shown, expected):
            assert seat == ref_seat
            assert obs.shape == ((L1,) if layouts[seat] == 1 else (L0,))
            np.testing.assert_array_equal(obs, views[layouts[seat]])
            np.testing.assert_array_equal(mask, ref_mask)
        # the policy the page shows for the v1 seat is the network's on its v1 view
        entries = [e for e in states[-1]["log"] if e["seat"] == 1]
        refs = [(views[1], m) for s, views, m in expected if s == 1]
        assert len(entries) == len(refs) > 0
        for entry, (obs, mask) in zip(entries, refs):
            probs = network.probabilities({"observation": obs, "action_mask": mask})
            assert {m["action"]: m["p"] for m in entry["policy"]["moves"]} == pytest.approx(
                {int(a): probs[a] for a in np.flatnonzero(mask)}, abs=1e-6)


def test_a_replay_shows_a_v1_policy_on_its_own_layout(v1_specs):
    v1_spec = v1_specs[2]
    api = client("--players", "4", "--deals", "2", "--bots", f"{v1_spec},heuristic,greedy")
    text = finished_history(4, num_players=4, num_deals=2)
    summary = api.post("/api/replays", json={"history": text}).json()
    assert summary["policy"] == v1_spec  # the first policy of this table's size
    network = agents.make("ppo", path=v1_spec[4:], num_players=4, num_deals=2)
    first_deal = len(pis_yedili_v1.raw_env.from_history(text).game.histories[0])
    checked = []
    for k, env in enumerate(replay(text, pis_yedili_v1.raw_env)):
        game = env.game
        if game.match_over or k % 5:
            continue
        seat = game.current
        obs = env.observe(env.possible_agents[seat])
        # the replay shows the first deal's end, then the second deal's first position
        frame = k if k < first_deal else k + 1
        shown = api.get(f"/api/replays/{summary['id']}/frames/{frame}?view={seat}&policy=1")
        probs = network.probabilities(obs)
        assert {m["action"]: m["p"] for m in shown.json()["policy"]["moves"]} == \
            pytest.approx({int(a): probs[a] for a in np.flatnonzero(obs["action_mask"])},
                          abs=1e-6)
        checked.append(game.deal_index)
    assert len(checked) > 5 and set(checked) == {0, 1}


def test_a_mixed_table_reveals_no_hidden_card(v1_specs):
    """test_web_api's leak check on a table with a v1 network: no answer of live play
    names a card in a bot's hand or the stock, or holds a seed or a deck."""
    api = client("--players", "4", "--bots", f"{v1_specs[1]},{V0_4P},heuristic",
                 arranged=False)
    rng = np.random.default_rng(3)
    state = api.post("/api/games", json={}).json()
    seen = _LeakCheck(api.app.state.games.peek(state["id"]))
    while state["status"] != "match_over":
        seen.append(api.get(f"/api/games/{state['id']}").text)
        state = step(api, state, rng, seen)
    assert len(seen) > 20 and all("policy" not in e for e in state["log"])
