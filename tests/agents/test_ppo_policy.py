"""``agents.ppo`` below the bot: the numpy actor against SB3's own distribution, input
normalisation against VecNormalize's formula, sampling, the metadata of a foreign SB3
archive, and every refusal word for word."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.ppo import (
    NUM_ACTIONS,
    NumpyPolicy,
    PolicyLoadError,
    check_layout,
    check_metadata,
    input_size_of,
    load_policy,
    make_metadata,
    sb3_metadata,
)
from pis_env import raw_env
from pis_env.observation import Layout

ROOT = Path(__file__).resolve().parents[2]
V3 = ROOT / "models" / "ppo_2p.zip"
NO_TURN = "no legal action in this observation: it is not this agent's turn"


def positions(count: int, seed: int = 0):
    """(observation, mask) of the first ``count`` decisions with a choice, seat 0 and 1,
    of random play."""
    env, rng, out = raw_env(num_players=2), np.random.default_rng(seed), []
    env.reset(seed=seed)
    while len(out) < count:
        if env.game.deal_over:
            env.reset(seed=int(rng.integers(1 << 30)))
        obs = env.observe(env.agent_selection)
        legal = np.flatnonzero(obs["action_mask"])
        if legal.size > 1:
            out.append((obs["observation"], obs["action_mask"]))
        env.step(int(rng.choice(legal)))
    return out


# ---------------------------------------------------------------------- the actor
def test_the_numpy_actor_is_sb3s_masked_distribution():
    import torch
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(V3, device="cpu")
    policy = load_policy(V3, 2)
    extra = model.observation_space.shape[0] - policy.input_size  # the critic's inputs
    for obs, mask in positions(12):
        features = np.concatenate([obs, mask, np.zeros(extra)]).astype(np.float32)
        with torch.no_grad():
            dist = model.policy.get_distribution(torch.as_tensor(features[None]),
                                                 action_masks=mask[None])
        want = dist.distribution.probs[0].double().numpy()
        got = policy.probabilities(obs, mask)
        assert got.dtype == np.float64 and got.shape == (NUM_ACTIONS,)
        np.testing.assert_allclose(got, want, atol=2e-6)
        assert got[~mask.astype(bool)].sum() == 0 and got.sum() == pytest.approx(1.0)
        assert policy.act(obs, mask, deterministic=True) == int(np.argmax(want))


def test_sampling_follows_the_distribution_and_the_seed():
    policy = load_policy(V3, 2)
    obs, mask = min(positions(40, seed=3),  # the position it is least sure of
                    key=lambda position: policy.probabilities(*position).max())
    p = policy.probabilities(obs, mask)
    assert p.max() < 0.9
    rng = np.random.default_rng(0)
    draws = np.array([policy.act(obs, mask, deterministic=False, rng=rng)
                      for _ in range(3000)])
    freq = np.bincount(draws, minlength=NUM_ACTIONS) / draws.size
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / draws.size) + 1e-9)
    # a stochastic bot draws from its seed: the same seed, the same moves
    a = agents.make("ppo", path=str(V3), num_players=2, seed=5, deterministic=False)
    b = agents.make("ppo", path=str(V3), num_players=2, seed=5, deterministic=False)
    c = agents.make("ppo", path=str(V3), num_players=2, seed=6, deterministic=False)
    seen = {"observation": obs, "action_mask": mask}
    moves = [[bot.act(seen) for _ in range(60)] for bot in (a, b, c)]
    assert moves[0] == moves[1] != moves[2] and len(set(moves[0])) > 1


def test_without_a_legal_action_the_actor_says_it_is_not_its_turn():
    policy = load_policy(V3, 2)
    obs, mask = positions(1)[0]
    for call in (policy.probabilities, policy.act):
        with pytest.raises(ValueError) as err:
            call(obs, np.zeros_like(mask))
        assert str(err.value) == NO_TURN


def tiny_policy(features, obs_norm=None, seed=0):
    """A one-hidden-layer tanh actor on the 2-player observation with random weights."""
    meta = make_metadata(rules={"num_players": 2}, net_arch={"pi": [6], "vf": [6]},
                         activation="tanh", features=features, obs_norm=obs_norm)
    rng = np.random.default_rng(seed)
    state = {"mlp_extractor.policy_net.0.weight": rng.normal(size=(6, meta["input_size"])),
             "mlp_extractor.policy_net.0.bias": rng.normal(size=6),
             "action_net.weight": rng.normal(size=(NUM_ACTIONS, 6)),
             "action_net.bias": rng.normal(size=NUM_ACTIONS)}
    return NumpyPolicy(meta, state), state


def test_inputs_are_float32_features_in_order_for_one_position_or_a_batch():
    obs = np.stack([p[0] for p in positions(3)]).astype(np.int8)
    masks = np.stack([p[1] for p in positions(3)]).astype(bool)
    for features, want in ((["obs"], obs), (["obs", "mask"], np.hstack([obs, masks])),
                           (["mask", "obs"], np.hstack([masks, obs]))):
        policy, _ = tiny_policy(features)
        batch = policy.inputs(obs, masks)
        assert batch.dtype == np.float32 and batch.shape == want.shape
        np.testing.assert_array_equal(batch, want.astype(np.float32))
        one = policy.inputs(obs[1], masks[1])
        assert one.dtype == np.float32 and one.shape == want.shape[1:]


def test_inputs_are_normalised_as_vecnormalize_does_then_clipped():
    size = Layout.of(2, 1, 0).size
    rng = np.random.default_rng(1)
    mean, var = rng.normal(size=size), rng.uniform(0.001, 0.01, size=size)
    norm = {"mean": mean.tolist(), "var": var.tolist(), "clip": 3.0, "epsilon": 1e-4}
    policy, state = tiny_policy(["obs"], obs_norm=norm)
    obs = positions(1)[0][0]
    # VecNormalize: clip((obs - mean) / sqrt(var + epsilon), -clip, clip)
    want = np.clip((obs - mean) / np.sqrt(var + 1e-4), -3.0, 3.0)
    assert (want == 3.0).any() and (want == -3.0).any()  # both bounds are reached
    np.testing.assert_allclose(policy.inputs(obs, None), want, rtol=1e-5, atol=1e-5)
    assert policy.inputs(obs, None).dtype == np.float32
    hidden = np.tanh(state["mlp_extractor.policy_net.0.weight"] @ want
                     + state["mlp_extractor.policy_net.0.bias"])
    logits = state["action_net.weight"] @ hidden + state["action_net.bias"]
    np.testing.assert_allclose(policy.logits(policy.inputs(obs, None)), logits, rtol=1e-4,
                               atol=1e-4)
    default = tiny_policy(["obs"], obs_norm={"mean": mean.tolist(), "var": var.tolist()})[0]
    np.testing.assert_allclose(default.inputs(obs, None),
                               np.clip((obs - mean) / np.sqrt(var + 1e-8), -10, 10),
                               rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------- metadata
def test_an_unknown_feature_is_named_with_the_allowed_ones():
    assert input_size_of(100, ["obs", "mask"]) == 100 + NUM_ACTIONS
    with pytest.raises(ValueError) as err:
        input_size_of(100, ["obs", "belief"])
    assert str(err.value) == "unknown policy feature 'belief'; allowed: obs, mask"


def test_the_metadata_keeps_the_critic_and_the_normalisation():
    norm = {"mean": [0.0], "var": [1.0]}
    meta = make_metadata(rules={"num_players": 3, "num_deals": 2},
                         net_arch={"pi": [8, 4], "vf": [16]}, activation="relu",
                         features=["obs"], obs_norm=norm, extra={"source": "test"})
    assert meta["net_arch"] == {"pi": [8, 4], "vf": [16]} and meta["obs_norm"] == norm
    assert meta["source"] == "test" and meta["num_deals"] == 2
    assert meta["layout_size"] == Layout.of(3, 2, meta["layout_version"]).size


@pytest.mark.parametrize("change,message", [
    (lambda m: [], "f.zip: not a pis-yedili PPO policy (no pis-yedili-ppo-policy metadata)"),
    (lambda m: {**m, "format": "other"},
     "f.zip: not a pis-yedili PPO policy (no pis-yedili-ppo-policy metadata)"),
    (lambda m: {**m, "format_version": 99},
     "f.zip: policy file format 99; this version reads format 1"),
    (lambda m: {k: v for k, v in m.items() if k != "rules"},
     "f.zip: policy metadata lacks 'rules'"),
    (lambda m: {**m, "activation": "gelu"}, "f.zip: unknown activation 'gelu'"),
])
def test_each_broken_metadata_is_named(change, message):
    meta = make_metadata(rules={"num_players": 2}, net_arch={"pi": [4], "vf": [4]},
                         activation="tanh", features=["obs"])
    assert check_metadata(meta, "f.zip") is meta
    with pytest.raises(PolicyLoadError) as err:
        check_metadata(change(meta), "f.zip")
    assert str(err.value) == message


def test_a_policy_of_an_unknown_layout_version_is_refused_with_the_way_out():
    meta = make_metadata(rules={"num_players": 2}, net_arch={"pi": [4], "vf": [4]},
                         activation="tanh", features=["obs"])
    for version in (7, True):
        with pytest.raises(PolicyLoadError) as err:
            check_layout({**meta, "layout_version": version}, 2, source="f.zip")
        assert str(err.value) == (
            f"f.zip was saved with observation layout version {version!r} (size "
            f"{meta['layout_size']}), but this pis_env has layout versions 0, 1: retrain "
            "or export it with one of them")


def test_load_policy_checks_the_table_it_is_given():
    assert load_policy(V3).input_size == load_policy(V3, 2).input_size
    with pytest.raises(PolicyLoadError, match=str(V3)):
        load_policy(V3, 4)
    with pytest.raises(PolicyLoadError, match="single deals"):
        load_policy(V3, 2, 4)


#: The table sizes with a shipped network (``models/ppo_{n}p``).
SHIPPED_SIZES = (2, 3, 4, 5, 6, 7)


def test_without_a_path_the_ppo_bot_plays_the_shipped_network_of_its_table_size():
    assert agents.make("ppo").path == agents.make("ppo", num_players=2).path == \
        "models/ppo_2p.zip"
    for n in SHIPPED_SIZES:
        bot = agents.make("ppo", num_players=n)
        assert (bot.path, bot.num_players) == (f"models/ppo_{n}p.zip", n)
        assert bot.meta["num_players"] == n
    with pytest.raises(ValueError) as err:
        agents.ppo.default_policy(8)  # a size without a file
    assert str(err.value) == (
        '"ppo": no shipped network for 8 players (shipped for 2, 3, 4, 5, 6, 7); give path= '
        'to a policy file, e.g. agents.make("ppo", path="runs/ppo_8p/policy.zip")')


def test_without_any_shipped_network_the_error_says_none(monkeypatch):
    monkeypatch.setattr(agents.ppo, "_shipped_policies", lambda: [])
    with pytest.raises(ValueError, match=r"no shipped network for 8 players \(shipped for none\)"):
        agents.ppo.default_policy(8)  # no ppo_8p file, whatever sizes ship


def _play(bots, num_players: int, num_deals: int = 1, seed: int = 0) -> int:
    """Plays one deal (or match) of ``bots``; returns the decisions of seat 0."""
    env = raw_env(num_players=num_players, num_deals=num_deals)
    env.reset(seed=num_players + seed)
    decisions = 0
    while not env.game.match_over:
        seat = env.possible_agents.index(env.agent_selection)
        obs = env.observe(env.agent_selection)
        action = bots[seat].act(obs)
        assert obs["action_mask"][action] == 1
        decisions += seat == 0
        env.step(action)
    return decisions


@pytest.mark.parametrize("num_players", SHIPPED_SIZES)
def test_the_shipped_network_of_each_size_plays_a_deal_at_its_table(num_players):
    bots = [agents.make("ppo", num_players=num_players)] + [
        agents.make("heuristic", num_players=num_players) for _ in range(num_players - 1)]
    # at 7 players the stock is two cards: a deal may end before seat 0's first turn
    assert sum(_play(bots, num_players, seed=s) for s in range(3)) > 0


@pytest.mark.parametrize("num_players", [3, 6])
def test_the_shipped_network_plays_a_four_deal_match(num_players):
    bots = [agents.make("ppo", num_players=num_players, num_deals=4)] + [
        agents.make("heuristic", num_players=num_players, num_deals=4)
        for _ in range(num_players - 1)]
    assert bots[0].deal_view is not None  # a single-deal network, each deal as its own
    assert _play(bots, num_players, num_deals=4) > 0


def test_the_ppo_bot_keeps_its_seed_and_table():
    bot = agents.make("ppo", path=str(V3), num_deals=4, seed=3)
    assert bot.path == str(V3) and bot.num_deals == 4 and bot.num_players == 2
    assert bot.deal_view is not None and len(bot.deal_view) == Layout.of(2, 1, 0).size


# ---------------------------------------------------------------------- SB3 archives
def sb3_data(size, activation=None):
    data = {"observation_space": {"_shape": [size]}}
    if activation is not None:
        data["policy_kwargs"] = {"activation_fn": activation}
    return data


def sb3_state(pi_widths, vf_widths=(5,)):
    state = {}
    for net, widths in (("policy_net", pi_widths), ("value_net", vf_widths)):
        for i, w in enumerate(widths):
            state[f"mlp_extractor.{net}.{2 * i}.weight"] = np.zeros((w, 3))
    return state


def test_an_sb3_archive_gets_its_table_network_and_activation_from_readable_fields():
    size = Layout.of(3, 1, 0).size
    widths = [9, 8, 7, 6, 5, 4]  # six layers: keys 0, 2, ..., 10, sorted as numbers
    meta = sb3_metadata(sb3_data(size), sb3_state(widths, [3, 2]), "m.zip")
    assert (meta["num_players"], meta["num_deals"], meta["layout_version"]) == (3, 1, 0)
    assert meta["rules"] == {"num_players": 3, "num_deals": 1}
    assert meta["net_arch"] == {"pi": widths, "vf": [3, 2]}
    assert meta["activation"] == "tanh" and meta["features"] == ["obs"]  # SB3's default
    assert meta["source"] == "sb3"
    relu = sb3_data(size, "<class 'torch.nn.modules.activation.ReLU'>")
    assert sb3_metadata(relu, sb3_state([4]), "m.zip")["activation"] == "relu"
    match = sb3_metadata(sb3_data(Layout.of(2, 4, 0).size), sb3_state([4]), "m.zip",
                         num_deals=4)
    assert (match["num_players"], match["num_deals"]) == (2, 4)
    # a size shared by a 1-player match and 2 players at one deal: a deal-level 2-player net
    deal = sb3_metadata(sb3_data(Layout.of(2, 1, 0).size), sb3_state([4]), "m.zip",
                        num_deals=4)
    assert (deal["num_players"], deal["num_deals"]) == (2, 1)
    # a 6-player match is 8 players at one deal, a table that does not exist
    six = sb3_metadata(sb3_data(Layout.of(6, 4, 0).size), sb3_state([4]), "m.zip",
                       num_deals=4)
    assert (six["num_players"], six["num_deals"]) == (6, 4)


@pytest.mark.parametrize("data,kwargs,message", [
    ([], {}, "m.zip: an SB3 archive whose observation space is not a flat Box (readable "
     "shape None); a policy of the gymnasium views PisYedili-v0 or PisYedili-Events-v0 "
     "plays here"),
    ({"observation_space": "Box"}, {}, "m.zip: an SB3 archive whose observation space is "
     "not a flat Box (readable shape None); a policy of the gymnasium views PisYedili-v0 or "
     "PisYedili-Events-v0 plays here"),
    ({"observation_space": {"_shape": [2, 3]}}, {}, "m.zip: an SB3 archive whose "
     "observation space is not a flat Box (readable shape [2, 3]); a policy of the "
     "gymnasium views PisYedili-v0 or PisYedili-Events-v0 plays here"),
    (sb3_data(Layout.of(2, 2, 0).size), {}, "m.zip: an SB3 archive with observations of "
     f"size {Layout.of(2, 2, 0).size}, which is no observation layout of 2..7 players and "
     "1 deal(s); pass the num_players/num_deals it was trained for"),
    (sb3_data(Layout.of(1, 1, 0).size), {}, "m.zip: an SB3 archive with observations of "
     f"size {Layout.of(1, 1, 0).size}, which is no observation layout of 2..7 players and "
     "1 deal(s); pass the num_players/num_deals it was trained for"),
    (sb3_data(Layout.of(8, 1, 0).size), {"num_players": 5}, "m.zip: an SB3 archive with "
     f"observations of size {Layout.of(8, 1, 0).size}, which is no observation layout of 5 "
     "players and 1 deal(s); pass the num_players/num_deals it was trained for"),
    (sb3_data(Layout.of(2, 3, 0).size), {"num_deals": 3}, "m.zip: an SB3 archive with "
     f"observations of size {Layout.of(2, 3, 0).size}, which is several observation "
     "layouts of 2..7 players and 1 or 3 deal(s); pass the num_players/num_deals it was "
     "trained for"),
    (sb3_data(Layout.of(2, 1, 0).size), {"num_players": 3}, "m.zip: an SB3 archive with "
     f"observations of size {Layout.of(2, 1, 0).size}, which is no observation layout of "
     "3 players and 1 deal(s); it fits 2 players at one deal (layout 0); pass the "
     "num_players/num_deals it was trained for"),
    (sb3_data(Layout.of(2, 1, 0).size, "GELU"), {}, "m.zip: activation 'GELU'; this "
     "reader runs tanh, relu"),
])
def test_each_unreadable_sb3_archive_is_named(data, kwargs, message):
    with pytest.raises(PolicyLoadError) as err:
        sb3_metadata(data, sb3_state([4]), "m.zip", **kwargs)
    assert str(err.value) == message


# ---------------------------------------------------------------------- files
def _zip(path, members: dict[str, bytes]):
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _torch_bytes(obj) -> bytes:
    import io

    import torch

    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def test_each_unreadable_policy_file_is_named_with_what_is_wrong(tmp_path):
    import torch

    from agents.common.weights_file import save_weights_file
    from agents.ppo import META_NAME, POLICY_FORMAT, read_policy

    meta = make_metadata(rules={"num_players": 2}, net_arch={"pi": [4], "vf": [4]},
                         activation="tanh", features=["obs"])
    sb3 = json.dumps(sb3_data(Layout.of(2, 1, 0).size)).encode()
    cases = [
        (tmp_path, f"{tmp_path} is a directory; pass a policy file (a run's policy.zip or "
         "policy.pt)"),
        (_zip(tmp_path / "a.zip", {"policy.pth": b""}), f"{tmp_path / 'a.zip'}: an archive "
         f"with neither {META_NAME} nor SB3's data member, so its observation layout cannot "
         "be checked"),
        (_zip(tmp_path / "b.zip", {META_NAME: json.dumps(meta).encode()}),
         f"{tmp_path / 'b.zip'}: the archive holds no policy.pth weights"),
        (_zip(tmp_path / "c.zip", {"data": sb3, "policy.pth": _torch_bytes([1, 2])}),
         f"{tmp_path / 'c.zip'}: the weights are not a state dict"),
        (_zip(tmp_path / "d.zip", {META_NAME: json.dumps(meta).encode(),
                                   "policy.pth": _torch_bytes([1, 2])}),
         f"{tmp_path / 'd.zip'}: the weights are not a state dict"),
        (save_weights_file({"format": "other"}, tmp_path / "e.pt"),
         f"{tmp_path / 'e.pt'}: not a pis-yedili policy export"),
        (save_weights_file({"format": POLICY_FORMAT, "meta": json.dumps({"format": 1}),
                            "state_dict": {}}, tmp_path / "f.pt"),
         f"{tmp_path / 'f.pt'}: not a pis-yedili PPO policy (no {POLICY_FORMAT} metadata)"),
    ]
    for path, message in cases:
        with pytest.raises(PolicyLoadError) as err:
            read_policy(path)
        assert str(err.value) == message
    with pytest.raises(PolicyLoadError) as err:
        read_policy(_zip(tmp_path / "g.zip", {META_NAME: b"{not json"}))
    assert str(err.value).startswith(f"{tmp_path / 'g.zip'}: corrupt policy archive (")
    with pytest.raises(PolicyLoadError) as err:
        read_policy(save_weights_file({"format": POLICY_FORMAT}, tmp_path / "h.pt"))
    assert str(err.value) == f"{tmp_path / 'h.pt'}: corrupt policy export ('meta')"
    # an SB3 archive's table follows num_players/num_deals, its source is the path
    state = {"mlp_extractor.policy_net.0.weight": torch.zeros(4, 3)}
    match = _zip(tmp_path / "m.zip", {"data": json.dumps(sb3_data(Layout.of(2, 4, 0).size))
                                      .encode(), "policy.pth": _torch_bytes(state)})
    got, arrays = read_policy(match, 2, 4)
    assert (got["num_players"], got["num_deals"]) == (2, 4) and set(arrays) == set(state)
    with pytest.raises(PolicyLoadError) as err:
        read_policy(match)
    assert str(err.value).startswith(f"{match}: an SB3 archive with observations of size")


def test_each_table_a_policy_does_not_fit_is_named():
    meta = make_metadata(rules={"num_players": 2}, net_arch={"pi": [4], "vf": [4]},
                         activation="tanh", features=["obs"], layout_version=0)
    size = meta["layout_size"]
    cases = [
        ((meta, 2, 4), f"f.zip was trained on single deals (observation size {size}); this "
         f"observation is of 4-deal matches (size {Layout.of(2, 4, 0).size}): a single-deal "
         "network plays each deal of a match through its deal view (agents.make('ppo', ..., "
         "num_deals=N))"),
        (({**meta, "num_deals": 4, "layout_size": Layout.of(2, 4, 0).size}, 2, 2),
         f"f.zip was trained for 4-deal matches (observation size {Layout.of(2, 4, 0).size}); "
         f"this table plays 2 deal(s) (observation size {Layout.of(2, 2, 0).size}): seat it "
         "at a 4-deal table (num_deals=4), or use a network trained on single deals, which "
         "plays each deal of a match of any length"),
        ((meta, 3, 4), f"f.zip was trained for 2 players and 1 deal(s) (observation size "
         f"{size}); this table has 3 players and 4 deal(s) (observation size "
         f"{Layout.of(3, 4, 0).size})"),
        (({**meta, "layout_size": size + 1}, 2, 1), f"f.zip expects observations of size "
         f"{size + 1}, but layout version 0 for 2 players has size {size}"),
    ]
    for (m, players, deals), message in cases:
        with pytest.raises(PolicyLoadError) as err:
            check_layout(m, players, deals, source="f.zip")
        assert str(err.value) == message
    check_layout(meta, 2, 1, source="f.zip", layout_version=0)
    with pytest.raises(PolicyLoadError) as err:
        check_layout(meta, 2, 1, source="f.zip", layout_version=1)
    from pis_env.observation import layout_mismatch

    assert str(err.value) == "f.zip: " + layout_mismatch(0, 1)


def test_the_weights_must_fit_the_metadata_and_an_oracle_cannot_play():
    policy, state = tiny_policy(["obs"])
    meta = dict(policy.meta)
    del meta["input_size"]  # older files: the size follows from the layout and features
    assert NumpyPolicy(meta, state).input_size == Layout.of(2, 1, 0).size
    assert all(w.dtype == np.float32 and b.dtype == np.float32
               for w, b in NumpyPolicy(meta, state).layers)
    with pytest.raises(PolicyLoadError) as err:
        NumpyPolicy(meta, {k: v for k, v in state.items() if k != "action_net.bias"})
    assert str(err.value) == "the weights lack 'action_net.bias'"
    wide = {**state, "action_net.weight": np.zeros((NUM_ACTIONS + 1, 6)),
            "action_net.bias": np.zeros(NUM_ACTIONS + 1)}
    narrow = {**state, "mlp_extractor.policy_net.0.weight": np.zeros((6, 5))}
    for weights, inputs, outputs in ((wide, meta["layout_size"], NUM_ACTIONS + 1),
                                     (narrow, 5, NUM_ACTIONS)):
        with pytest.raises(PolicyLoadError) as err:
            NumpyPolicy(meta, weights)
        assert str(err.value) == (f"the weights take {inputs} inputs and give {outputs} "
                                  f"outputs; the metadata says {meta['layout_size']} and "
                                  f"{NUM_ACTIONS}")
    with pytest.raises(PolicyLoadError) as err:
        NumpyPolicy({**meta, "oracle_actor": True}, state)
    assert str(err.value) == (
        "an oracle probe (train/ppo.py policy.oracle_actor=true): its actor reads the "
        "opponents' hidden cards, which no table shows a bot, so it cannot play; it "
        "measures what that information could buy in training")


def test_the_defaults_one_deal_argmax_and_the_word_policy():
    policy, state = tiny_policy(["obs"])
    obs, mask = positions(1)[0]
    assert policy.act(obs, mask) == int(np.argmax(np.where(mask, policy.logits(obs), -np.inf)))
    meta = policy.meta
    check_layout(meta, 2)  # one deal unless told
    from agents.ppo import check_table

    assert check_table(meta, 2, 1) is False and check_table(meta, 2, 4) is True
    for call in (lambda: check_layout(meta, 3), lambda: check_table(meta, 3, 1)):
        with pytest.raises(PolicyLoadError) as err:
            call()
        assert str(err.value).startswith("policy was trained for 2 players")


def test_huge_logits_still_give_a_distribution():
    policy, state = tiny_policy(["obs"])
    policy.layers[-1] = (policy.layers[-1][0] * 1e3, policy.layers[-1][1] * 1e3)
    obs, mask = positions(1, seed=5)[0]
    assert np.abs(policy.logits(obs)).max() > 800  # exp() of these alone overflows
    p = policy.probabilities(obs, mask)
    assert np.isfinite(p).all() and p.sum() == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    assert mask[policy.act(obs, mask, deterministic=False, rng=rng)]


def test_a_deeper_network_is_named_by_its_first_and_last_layer():
    meta = make_metadata(rules={"num_players": 2}, net_arch={"pi": [6, 5], "vf": [4]},
                         activation="tanh", features=["obs"])
    state = {"mlp_extractor.policy_net.0.weight": np.zeros((6, meta["input_size"])),
             "mlp_extractor.policy_net.0.bias": np.zeros(6),
             "mlp_extractor.policy_net.2.weight": np.zeros((5, 6)),
             "mlp_extractor.policy_net.2.bias": np.zeros(5),
             "action_net.weight": np.zeros((NUM_ACTIONS - 1, 5)),
             "action_net.bias": np.zeros(NUM_ACTIONS - 1)}
    with pytest.raises(PolicyLoadError) as err:
        NumpyPolicy(meta, state)
    assert str(err.value) == (f"the weights take {meta['input_size']} inputs and give "
                              f"{NUM_ACTIONS - 1} outputs; the metadata says "
                              f"{meta['input_size']} and {NUM_ACTIONS}")


def _save_pt(meta, state, path):
    import torch

    from agents.common.weights_file import save_weights_file
    from agents.ppo import POLICY_FORMAT

    return save_weights_file({"format": POLICY_FORMAT, "meta": json.dumps(meta),
                              "state_dict": {k: torch.as_tensor(v) for k, v in state.items()}},
                             path)


def test_an_event_log_network_plays_a_match_through_its_own_deal_view(tmp_path):
    meta = make_metadata(rules={"num_players": 2}, net_arch={"pi": [6], "vf": [6]},
                         activation="tanh", features=["obs"], layout_version=1)
    rng = np.random.default_rng(0)
    state = {"mlp_extractor.policy_net.0.weight": rng.normal(size=(6, meta["input_size"])),
             "mlp_extractor.policy_net.0.bias": np.zeros(6),
             "action_net.weight": rng.normal(size=(NUM_ACTIONS, 6)),
             "action_net.bias": np.zeros(NUM_ACTIONS)}
    path = _save_pt(meta, state, tmp_path / "v1.pt")
    single = agents.make("ppo", path=str(path))
    assert single.deal_view is None  # a one-deal table: the observation as it is
    bot = agents.make("ppo", path=str(path), num_deals=4)
    match = Layout.of(2, 4, 1)
    skipped = set(range(match.size)) - set(bot.deal_view.tolist())
    match_only = {i for name in ("deal", "scores")
                  for i in range(match.offsets[name].start, match.offsets[name].stop)}
    assert skipped == match_only and len(bot.deal_view) == Layout.of(2, 1, 1).size
    assert bot.observation_size == match.size
    with pytest.raises(PolicyLoadError) as err:
        agents.make("ppo", path=str(path), num_players=3)
    assert str(err.value).startswith(f"{path} was trained for 2 players")


def test_a_foreign_sb3_match_network_loads_at_the_table_it_is_given(tmp_path):
    size = Layout.of(2, 4, 0).size
    rng = np.random.default_rng(2)
    state = {"mlp_extractor.policy_net.0.weight": rng.normal(size=(4, size)),
             "mlp_extractor.policy_net.0.bias": np.zeros(4),
             "action_net.weight": rng.normal(size=(NUM_ACTIONS, 4)),
             "action_net.bias": np.zeros(NUM_ACTIONS)}
    import torch

    path = _zip(tmp_path / "sb3.zip", {
        "data": json.dumps(sb3_data(size)).encode(),
        "policy.pth": _torch_bytes({k: torch.as_tensor(v) for k, v in state.items()})})
    assert load_policy(path, 2, 4).input_size == size
    bot = agents.make("ppo", path=str(path), num_players=2, num_deals=4)
    assert bot.num_deals == 4 and bot.deal_view is None


def test_a_missing_policy_lists_the_shipped_ones():
    from agents.ppo import read_policy

    with pytest.raises(FileNotFoundError) as err:
        read_policy("nowhere.zip")
    assert str(err.value) == ("policy file not found: nowhere.zip (shipped policies: ppo_2p, "
                              "ppo_2p_match, ppo_2p_v2, ppo_3p, ppo_4p, ppo_4p_v2, ppo_5p, "
                              "ppo_6p, ppo_7p)")


def test_a_damaged_archive_is_read_as_one_by_its_name_and_members(tmp_path):
    from agents.ppo import read_policy

    good = _zip(tmp_path / "x.zip", {"data": b"{}"})
    raw = bytearray(good.read_bytes())
    at = raw.find(b"PK\x01\x02")  # the central directory: the end record still reads
    raw[at:at + 2] = b"XX"
    for name, message in (("d.zip", "corrupt policy archive (Bad magic number for central "
                                    "directory)"),
                          ("d.pt", "corrupt or unreadable weights")):
        (tmp_path / name).write_bytes(bytes(raw))
        with pytest.raises(PolicyLoadError) as err:
            read_policy(tmp_path / name)
        assert str(err.value).startswith(f"{tmp_path / name}: {message}")
    with pytest.raises(PolicyLoadError) as err:  # SB3's data alone is an archive too
        read_policy(_zip(tmp_path / "only.pt", {"data": b"{}"}))
    assert str(err.value) == f"{tmp_path / 'only.pt'}: the archive holds no policy.pth weights"
    with pytest.raises(PolicyLoadError) as err:
        check_metadata([])
    assert str(err.value).startswith("policy: not a pis-yedili PPO policy")


def test_a_size_two_tables_share_is_told_apart_by_the_players_given(tmp_path):
    import torch

    size = Layout.of(3, 1, 0).size
    assert size == Layout.of(2, 3, 0).size  # 3 players at one deal, 2 at three
    state = {"mlp_extractor.policy_net.0.weight": torch.zeros(4, size),
             "mlp_extractor.policy_net.0.bias": torch.zeros(4),
             "action_net.weight": torch.zeros(NUM_ACTIONS, 4),
             "action_net.bias": torch.zeros(NUM_ACTIONS)}
    path = _zip(tmp_path / "p.zip", {"data": json.dumps(sb3_data(size)).encode(),
                                     "policy.pth": _torch_bytes(state)})
    from agents.ppo import read_policy

    assert read_policy(path, 3, 3)[0]["num_deals"] == 1  # a deal-level 3-player network
    assert load_policy(path, 2, 3).meta["num_deals"] == 3
