"""Opponent models built from spec strings, their options and their refusals word for word
(``agents.belief.opponent_models``). What the models compute is checked against the
Python bots in ``test_inference.py``; here: that each spec builds the model it names, with
the options it was given, and that every bad spec or shape is refused with its message."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agents.belief import opponent_models
from agents.belief.opponent_models import (
    HeuristicModel,
    MixtureModel,
    NetworkModel,
    UniformModel,
    opponent_model,
)
from agents.heuristic import DEFAULT_PARAMS
from agents.heuristic.batched import params_vector
from agents.panel.networks import V2_PATH
from pis_env.batched import kernels as K
from pis_env.batched.core import rules_vector
from pis_env.rules import Rules

CFG = rules_vector(Rules(num_players=2))


def _refusal(call, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as e:
        call(*args, **kwargs)
    return str(e.value)


def _rows(count: int, width: int = K.NF) -> np.ndarray:
    return np.zeros((count, width), dtype=np.int64)


def test_rows_and_actions_of_the_wrong_shape_are_refused_word_for_word():
    """A row one field too wide, rows with a third axis, actions of another length."""
    for rows, actions in ((_rows(3, K.NF + 1), np.zeros(3, dtype=np.int64)),
                          (np.zeros((2, K.NF, 1), dtype=np.int64), np.zeros(2, dtype=np.int64)),
                          (_rows(3), np.zeros(2, dtype=np.int64))):
        message = _refusal(UniformModel().probs, rows, actions, CFG)
        assert message == (f"expected rows [K, {K.NF}] and actions [K], got {rows.shape} and "
                           f"{actions.shape}")


def test_at_most_max_rows_rows_in_one_call(monkeypatch):
    """Exactly ``MAX_ROWS`` rows are taken, one more is refused (the limit made small here
    so that the test allocates nothing big)."""
    monkeypatch.setattr(opponent_models, "MAX_ROWS", 4)
    assert UniformModel().probs(_rows(4), np.zeros(4, dtype=np.int64), CFG).tolist() == [0.0] * 4
    message = _refusal(UniformModel().probs, _rows(5), np.zeros(5, dtype=np.int64), CFG)
    assert message == "5 rows in one call: at most 4"


def test_the_heuristic_model_takes_epsilon_up_to_one_and_its_own_weights():
    assert HeuristicModel().epsilon == 0.1
    assert HeuristicModel(1.0).epsilon == 1.0
    for epsilon in (0.0, 1.5):
        assert _refusal(HeuristicModel, epsilon) == (
            f"epsilon={epsilon!r}: must be in (0, 1] (0 would let one surprising move kill "
            "every world)")
    bold = dataclasses.replace(DEFAULT_PARAMS, draw_cost=DEFAULT_PARAMS.draw_cost + 7.0)
    np.testing.assert_array_equal(HeuristicModel(params=bold).params, params_vector(bold))
    assert not np.array_equal(HeuristicModel(params=bold).params, params_vector())


def test_the_heuristic_choices_are_move_ids_for_any_number_of_rows():
    model = HeuristicModel()
    for count in (0, 3, 0):
        moves = model.choices(_rows(count), CFG)
        assert moves.shape == (count,) and moves.dtype == np.int64


def test_a_spec_of_one_model_with_its_options():
    assert isinstance(opponent_model("uniform"), UniformModel)
    assert opponent_model("heuristic?epsilon=0.3").epsilon == 0.3
    network = opponent_model("network")
    assert network.num_players == 2 and network.temperature == 1.0
    assert network.policy is NetworkModel("models/ppo_2p.zip", 2).policy
    hot = opponent_model("network?temperature=2")
    assert hot.temperature == 2.0 and hot.policy is network.policy
    v2 = opponent_model(f"network?path={V2_PATH.format(n=4)}", 4)
    assert v2.num_players == 4
    assert v2.policy is NetworkModel(V2_PATH.format(n=4), 4).policy
    assert v2.policy is not opponent_model("network", 4).policy  # one read per file


def test_the_panel_preset_takes_epsilon_and_can_leave_out_the_networks():
    full = opponent_model("panel?epsilon=0.3")
    assert any(isinstance(m, NetworkModel) for _, m in full.parts)
    for off in ("0", "false", "no"):
        light = opponent_model(f"panel?epsilon=0.3&networks={off}")
        assert not any(isinstance(m, NetworkModel) for _, m in light.parts)
        heuristic = [m for _, m in light.parts if isinstance(m, HeuristicModel)]
        assert [m.epsilon for m in heuristic] == [0.3]


def test_an_option_given_no_value_is_refused_not_dropped():
    assert _refusal(opponent_model, "heuristic?epsilon=") == (
        "opponent model 'heuristic?epsilon=': could not convert string to float: ''")
    assert _refusal(opponent_model, "uniform?epsilon=") == (
        "opponent model 'uniform' takes no option ['epsilon']; its options: none")


def test_unknown_models_and_options_are_refused_word_for_word():
    assert _refusal(opponent_model, "oracle") == (
        "opponent model 'oracle': one of uniform, heuristic, network, panel (or a mixture "
        "like 'heuristic:0.5,uniform:0.5')")
    assert _refusal(opponent_model, "heuristic?temperature=2") == (
        "opponent model 'heuristic' takes no option ['temperature']; its options: ['epsilon']")


def test_a_model_object_is_passed_through_and_a_spec_is_a_short_string():
    model = UniformModel()
    assert opponent_model(model) is model
    assert _refusal(opponent_model, 12) == (
        "opponent model spec 12: a string of at most 500 characters")
    exactly = ",".join(["uniform:1"] * 49 + ["uniform:10"])
    assert len(exactly) == 500 and len(opponent_model(exactly).parts) == 50
    too_long = exactly + "0"
    assert _refusal(opponent_model, too_long) == (
        f"opponent model spec {too_long!r}: a string of at most 500 characters")


def test_a_mixture_spec_splits_at_commas_and_each_weight_at_its_last_colon():
    one = opponent_model("heuristic:1")
    assert isinstance(one, MixtureModel) and [w for w, _ in one.parts] == [1.0]
    mix = opponent_model("heuristic?epsilon=0.2:0.25,uniform:0.75")
    assert [w for w, _ in mix.parts] == [0.25, 0.75] and mix.parts[0][1].epsilon == 0.2
    four = opponent_model("network:1,uniform:1", 4)
    assert four.parts[0][1].num_players == 4
    # a colon after the "?" belongs to an option value, not to a weight
    assert _refusal(opponent_model, "network?path=dir:x.zip") == (
        "opponent model 'network?path=dir:x.zip': network opponent model: no policy file "
        "'dir:x.zip'")
    assert _refusal(opponent_model, "network?path=dir:x.zip:0.5,uniform:0.5") == (
        "opponent model 'network?path=dir:x.zip': network opponent model: no policy file "
        "'dir:x.zip'")


def test_a_mixture_without_a_model_or_a_weight_is_refused_word_for_word():
    for spec in ("uniform,uniform", ":0.5,uniform:1"):
        assert _refusal(opponent_model, spec) == (
            f"opponent model mixture {spec!r}: write 'model:weight,...'")
    assert _refusal(opponent_model, "heuristic:x,uniform:1") == (
        "opponent model mixture 'heuristic:x,uniform:1': weight 'x' is not a number")
