"""The policy panel's numbers (``agents.ui.web.policy``): the critic's value against a torch
forward pass of the same weights, which critics are shown where, and the moves' order and
labels."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import agents
from agents.ppo import read_policy
from agents.ui.web.policy import PRIVILEGED, PUBLIC, PolicyView, ValueHead
from agents.ui.web.views import move_label
from pis_env.aec import mask_array
from pis_env.engine import GameState
from pis_env.privileged import privileged_features, privileged_size
from pis_env.rules import Rules

V3 = "models/ppo_2p.zip"


def critic_state(widths: list[int], input_size: int, seed: int = 0) -> dict[str, np.ndarray]:
    """SB3's names for a critic of hidden ``widths`` (Linear at even indices, as SB3's
    ``mlp_extractor.value_net`` Sequential numbers them)."""
    rng = np.random.default_rng(seed)
    state, previous = {}, input_size
    for k, width in enumerate(widths):
        state[f"mlp_extractor.value_net.{2 * k}.weight"] = rng.normal(size=(width, previous))
        state[f"mlp_extractor.value_net.{2 * k}.bias"] = rng.normal(size=width)
        previous = width
    state["value_net.weight"] = rng.normal(size=(1, previous))
    state["value_net.bias"] = rng.normal(size=1)
    return state


def torch_value(state: dict[str, np.ndarray], widths: list[int], activation: str,
                x: np.ndarray) -> float:
    """The critic as torch modules, the way SB3 builds it."""
    act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[activation]
    modules, previous = [], x.shape[0]
    for k, width in enumerate(widths):
        linear = torch.nn.Linear(previous, width, dtype=torch.float64)
        linear.weight.data = torch.as_tensor(state[f"mlp_extractor.value_net.{2 * k}.weight"],
                                             dtype=torch.float64)
        linear.bias.data = torch.as_tensor(state[f"mlp_extractor.value_net.{2 * k}.bias"],
                                           dtype=torch.float64)
        modules += [linear, act()]
        previous = width
    head = torch.nn.Linear(previous, 1, dtype=torch.float64)
    head.weight.data = torch.as_tensor(state["value_net.weight"], dtype=torch.float64)
    head.bias.data = torch.as_tensor(state["value_net.bias"], dtype=torch.float64)
    with torch.no_grad():
        return float(torch.nn.Sequential(*modules, head)(torch.as_tensor(x, dtype=torch.float64)))


@pytest.mark.parametrize("activation", ["tanh", "relu"])
@pytest.mark.parametrize("widths", [[7], [5, 4], [6, 3, 5]])
def test_the_value_is_torchs_forward_pass_of_the_same_critic(activation, widths):
    size = 11
    state = critic_state(widths, size, seed=len(widths))
    head = ValueHead.of({"activation": activation, "num_players": 2}, state, size)
    assert head.kind == PUBLIC and head.activation == activation
    assert all(w.dtype == np.float32 and b.dtype == np.float32 for w, b in head.layers)
    x = np.random.default_rng(3).normal(size=size) * 3
    assert head(x) == pytest.approx(torch_value(state, widths, activation, x), rel=1e-5,
                                    abs=1e-5)


def test_which_critics_are_read_and_which_are_refused():
    size = 9
    wide = size + privileged_size(2)
    meta = {"activation": "tanh", "num_players": 2}
    assert ValueHead.of(meta, critic_state([4], wide), size).kind == PRIVILEGED
    state = critic_state([4], wide, seed=1)
    relu = ValueHead.of({**meta, "activation": "relu"}, state, size)
    x = np.random.default_rng(4).normal(size=wide) * 3
    assert relu.kind == PRIVILEGED and relu(x) == pytest.approx(
        torch_value(state, [4], "relu", x), rel=1e-5, abs=1e-5)
    # a privileged critic trained on normalised inputs: its statistics are not in the file
    assert ValueHead.of({**meta, "obs_norm": {"clip": 10}}, critic_state([4], wide), size) \
        is None
    # a public critic with normalisation is still the actor's input
    assert ValueHead.of({**meta, "obs_norm": {"clip": 10}}, critic_state([4], size),
                        size).kind == PUBLIC
    assert ValueHead.of(meta, critic_state([4], size + 1), size) is None
    no_head = {k: v for k, v in critic_state([4], size).items() if not k.startswith("value_")}
    assert ValueHead.of(meta, no_head, size) is None
    # a critic with no hidden layer reads the input directly
    assert ValueHead.of(meta, critic_state([], size), size).kind == PUBLIC


@pytest.fixture(scope="module")
def view():
    return PolicyView(f"ppo:{V3}", agents.make("ppo", path=V3))


def positions(count: int, seed: int = 5):
    rng = np.random.default_rng(seed)
    game = GameState(Rules(num_players=2), seed=seed)
    out = []
    while len(out) < count and not game.deal_over:
        out.append(game.copy())
        game.apply(int(rng.choice(game.legal_actions())))
    return out


def test_the_moves_are_the_legal_ones_most_likely_first_with_their_labels(view):
    seen_two = False
    for game in positions(30):
        seat = game.current
        out = view.decision(game, seat)
        legal = game.legal_actions()
        assert sorted(m["action"] for m in out["moves"]) == legal
        assert all(set(m) == {"action", "label", "p"} for m in out["moves"])
        probs = [m["p"] for m in out["moves"]]
        assert probs == sorted(probs, reverse=True) and sum(probs) == pytest.approx(1.0)
        assert [m["label"] for m in out["moves"]] == [move_label(m["action"], game)
                                                      for m in out["moves"]]
        seen_two |= len(legal) > 1 and probs[0] > probs[-1]
        assert (out["policy"], out["seat"]) == (f"ppo:{V3}", seat)
    assert seen_two


def test_the_shipped_privileged_critic_is_shown_only_for_the_full_table(view):
    meta, state = read_policy(V3)
    widths = [state[f"mlp_extractor.value_net.{k}.weight"].shape[0]
              for k in range(0, 20, 2) if f"mlp_extractor.value_net.{k}.weight" in state]
    assert view.value.kind == PRIVILEGED and len(widths) >= 2
    for game in positions(6):
        seat = game.current
        hidden = view.decision(game, seat)
        assert set(hidden) == {"policy", "seat", "moves", "value", "value_kind",
                               "value_note"}
        assert hidden["value"] is None and hidden["value_kind"] is None
        assert hidden["value_note"] == ("the critic sees hidden cards: its value is shown "
                                        "only in full-table replays")
        full = view.decision(game, seat, full_table=True)
        obs = view.encoder.encode(game, seat)
        x = np.concatenate([view.agent.policy.inputs(obs, mask_array(game.legal_mask())),
                            privileged_features(game, seat)])
        assert full["value_kind"] == PRIVILEGED and full["value_note"] is None
        assert full["value"] == pytest.approx(
            torch_value(state, widths, meta["activation"], x.astype(np.float64)), abs=1e-4)


def test_a_given_observation_is_used_instead_of_the_seats_own(view):
    game = positions(4)[3]
    seat = game.current
    obs = {"observation": view.encoder.encode(game, seat).copy(),
           "action_mask": mask_array(game.legal_mask())}
    mine = view.decision(game, seat, observation=obs)
    assert mine["moves"] == view.decision(game, seat)["moves"]
    only = np.zeros_like(obs["action_mask"])
    only[np.flatnonzero(obs["action_mask"])[0]] = 1
    narrowed = view.decision(game, seat, observation={**obs, "action_mask": only})
    assert [m["action"] for m in narrowed["moves"]] == [int(np.flatnonzero(only)[0])]
    assert narrowed["moves"][0]["p"] == pytest.approx(1.0)


def test_a_public_critic_is_shown_everywhere_and_a_file_without_one_says_so(view, tmp_path):
    game = positions(3)[2]
    seat = game.current
    size = view.agent.policy.input_size
    state = critic_state([5], size, seed=8)
    public = PolicyView(view.spec, view.agent)
    public.value = ValueHead.of({"activation": "relu", "num_players": 2}, state, size)
    out = public.decision(game, seat)
    x = view.agent.policy.inputs(view.encoder.encode(game, seat), mask_array(game.legal_mask()))
    assert out["value_kind"] == PUBLIC and out["value_note"] is None
    assert out["value"] == pytest.approx(torch_value(state, [5], "relu",
                                                     x.astype(np.float64)), abs=1e-4)
    public.value = None
    none = public.decision(game, seat, full_table=True)
    assert none["value"] is None and none["value_kind"] is None
    assert none["value_note"] == "this policy file has no critic the page can evaluate"
    assert json.dumps(none)  # the page receives it as JSON


def test_a_view_fits_only_its_own_table(view):
    assert view.fits(2, 1)
    assert not view.fits(4, 1) and not view.fits(2, 4) and not view.fits(3, 1)
