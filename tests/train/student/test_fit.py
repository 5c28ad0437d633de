"""The student's training (``train.student.fit``): the soft-target loss of the imitation
loop against a hand computation, the policy targets, the numpy network against the torch
one, and the command on a synthetic labels directory: it learns and writes a file the
bot loads."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

import agents
from agents.common.weights_file import load_weights_file
from pis_env import pis_yedili_v1
from pis_env.observation import Layout
from train.common import pretrain
from train.common.pretrain import soft_cross_entropy
from train.student import fit as F


def test_the_soft_cross_entropy_is_the_hand_computed_one():
    """Three legal actions (1, 4, 9) of 58, the others masked as the networks mask them:
    -(0.2 log p1 + 0.5 log p4 + 0.3 log p9) with p the softmax of (1, 2, 0.5) alone."""
    logits = torch.full((1, 58), -1e8)
    logits[0, [1, 4, 9]] = torch.tensor([1.0, 2.0, 0.5])
    targets = torch.zeros((1, 58))
    targets[0, [1, 4, 9]] = torch.tensor([0.2, 0.5, 0.3])
    z = math.exp(1.0) + math.exp(2.0) + math.exp(0.5)
    hand = -(0.2 * (1.0 - math.log(z)) + 0.5 * (2.0 - math.log(z)) + 0.3 * (0.5 - math.log(z)))
    assert float(soft_cross_entropy(logits, targets)) == pytest.approx(hand, rel=1e-6)
    logits[0, [0, 2]] = -math.inf  # an infinitely masked action with a zero target adds 0
    assert float(soft_cross_entropy(logits, targets)) == pytest.approx(hand, rel=1e-6)


def test_the_policy_target_is_a_softmax_of_the_values_over_the_legal_actions():
    values = np.full((2, 58), np.nan, np.float32)
    values[:, [3, 5]] = [[10.0, 0.0], [-990.0, 10.0]]
    masks = np.zeros((2, 58), np.int8)
    masks[:, [3, 5]] = 1
    search = np.array([3, 5])
    t = F.policy_targets(values, masks, search, temperature=10.0)
    e = math.e
    np.testing.assert_allclose(t[0, [3, 5]], [e / (e + 1), 1 / (e + 1)], rtol=1e-6)
    np.testing.assert_allclose(t[1, [3, 5]], [0.0, 1.0], atol=1e-30)
    assert t.sum() == pytest.approx(2.0) and not t[:, [0, 1, 2, 4]].any()
    prior = np.zeros((2, 58))
    prior[0, 5] = 1.0  # the prior's logit evens out the 10-point gap at 10 points
    improved = F.policy_targets(values, masks, search, temperature=10.0, prior=prior)
    np.testing.assert_allclose(improved[0, [3, 5]], [0.5, 0.5], rtol=1e-6)
    hard = F.policy_targets(values, masks, search, temperature=0)
    assert hard[0, 3] == hard[1, 5] == 1.0 and hard.sum() == 2.0


def test_the_numpy_network_is_the_torch_network():
    from agents.student import StudentNetwork

    module = F.make_module(20, [16, 8], "tanh", seed=3)
    state = {k: v.detach().numpy() for k, v in module.state_dict().items()}
    network = StudentNetwork({"activation": "tanh", "input_size": 20}, state)
    x = np.random.default_rng(0).normal(size=(5, 20)).astype(np.float32)
    with torch.no_grad():
        logits, value = module(torch.as_tensor(x), torch.ones((5, 58), dtype=torch.bool))
    mine = network.forward(x)
    np.testing.assert_allclose(mine[0], logits.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mine[1], value.numpy(), rtol=1e-5, atol=1e-5)


def synthetic_labels(directory, chunks: int = 6, rows: int = 100, seed: int = 0,
                     determinize: str = "particles"):
    """A labels directory of the shape ``train.student.labels`` writes: at every position
    three to six legal actions of the first eight, action ``a`` worth 100 x observation
    column ``a`` points (so the best move is learnable from the observation), the position worth the
    best; uniform beliefs."""
    rng = np.random.default_rng(seed)
    directory.mkdir()
    size = Layout.of(2, 1, 0).size
    for c in range(chunks):
        obs = np.zeros((rows, size), np.float32)
        obs[:, :58] = rng.normal(size=(rows, 58))
        mask = np.zeros((rows, 58), np.int8)
        for r in range(rows):
            mask[r, rng.choice(8, size=rng.integers(3, 7), replace=False)] = 1
        values = np.where(mask == 1, 100 * obs[:, :58], np.nan)
        values = values.astype(np.float32)
        search = np.nanargmax(values, axis=1).astype(np.int16)
        np.savez_compressed(directory / f"games_{20 * c:07d}-{20 * c + 20:07d}.npz",
                            obs=obs, mask=mask, values=values, search=search,
                            value=values[np.arange(rows), search],
                            belief=np.full((rows, 52), 7 / 45, np.float32))
    rules = {"num_players": 2, "num_deals": 1}
    (directory / "job.json").write_text(json.dumps(
        {"rules": rules, "env_version": 0,
         "labeller": {"rollouts": 16, "determinize": determinize}}))
    return directory


#: The two-player v0 observation's size.
V0 = Layout.of(2, 1, 0).size
#: Overrides of the shipped recipe's keys that tie a run to the shipped network and labels.
ALONE = ["init=null", "prior=null", "max_labels=null"]


def test_the_fit_command_learns_and_writes_a_student_the_bot_plays(tmp_path, capsys):
    labels = synthetic_labels(tmp_path / "labels")
    out = tmp_path / "student.pt"
    code = F.main(["--labels", str(labels), "--out", str(out), "--epochs", "6", *ALONE,
                   "hidden=[64]", "val_chunks=2", "batch_size=50", "temperature=25",
                   "learning_rate=0.003", "threads=1"])
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    epochs = [line for line in lines if line.startswith("pretrain epoch")]
    assert len(epochs) == 6 and lines[0].startswith("student: 400 training labels")

    def figure(line, name, part=0):  # part 0: the training figures, 1: the held-out ones
        text = line.split(";")[part]
        return float(text.split(f"{name} ")[1].split(",")[0].rstrip("%"))

    assert figure(epochs[-1], "cross-entropy") < 0.8 * figure(epochs[0], "cross-entropy")
    assert figure(epochs[-1], "value loss") < figure(epochs[0], "value loss")
    assert figure(epochs[-1], "accuracy", 1) > 50  # chance among 3-6 legal moves: < 33%
    assert "held out: agreement with the search's move" in lines[-1]
    bot = agents.make("student", path=str(out), num_players=2, seed=0)
    assert bot.meta["filter"] == F.filter_settings() and bot.meta["value_scale"] == 1000.0
    assert bot.meta["labels"] == 400 and bot.meta["temperature"] == 25.0
    env = pis_yedili_v1.raw_env(num_players=2)
    env.reset(seed=1)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][bot.act(obs)] == 1


def test_without_the_marginals_the_fit_writes_a_ppo_policy_that_learnt_the_search(tmp_path):
    """features=[obs, mask]: the file is a PPO policy (no filter at play time) whose moves
    on held-out positions are the search's far above chance (3 to 6 legal moves)."""
    from agents.ppo import load_policy

    labels = synthetic_labels(tmp_path / "labels")
    out = tmp_path / "policy.pt"
    assert F.main(["--labels", str(labels), "--out", str(out), "--epochs", "6", *ALONE,
                   "features=[obs,mask]", "hidden=[64]", "val_chunks=2", "batch_size=50",
                   "temperature=25", "learning_rate=0.003", "threads=1"]) == 0
    bot = agents.make("ppo", path=str(out), num_players=2)
    assert bot.meta["features"] == ["obs", "mask"] and bot.policy.input_size == V0 + 58
    assert bot.meta["layout_version"] == 0
    assert bot.meta["student"] == {"labels": 400, "temperature": 25.0, "init": None,
                                   "prior": None,
                                   "labeller": {"rollouts": 16, "determinize": "particles"}}
    policy = load_policy(out, 2)
    with np.load(sorted(labels.glob("games_*.npz"))[0]) as held:  # the first: held out
        moves = [policy.act(o, m) for o, m in zip(held["obs"], held["mask"])]
        agreement = float(np.mean(np.asarray(moves) == held["search"]))
    assert agreement > 0.5, agreement  # chance: under 1/3


def test_the_fit_command_holds_out_the_first_chunks_and_caps_the_labels(tmp_path):
    labels = synthetic_labels(tmp_path / "labels", chunks=5)
    train, held = F.split_chunks(labels, 2, max_labels=150)
    assert [p.name[6:13] for p in held] == ["0000000", "0000020"]
    assert [p.name[6:13] for p in train] == ["0000040", "0000060"]


@pytest.mark.parametrize("features", ["[obs]", "[mask,obs]", "[obs,belief]"])
def test_inputs_other_than_the_two_sets_are_refused_in_one_line(tmp_path, capsys, features):
    labels = synthetic_labels(tmp_path / "labels", chunks=3)
    assert F.main(["--labels", str(labels), "--out", str(tmp_path / "s.pt"), *ALONE,
                   f"features={features}"]) != 0
    err = capsys.readouterr().err.strip()
    listed = features[1:-1].split(",")
    assert err.endswith(f"features={listed!r}: one of ['obs', 'belief', 'mask'] or "
                        "['obs', 'mask']"), err
    assert len(err.splitlines()) == 1 and not (tmp_path / "s.pt").exists()


def test_the_fit_command_refuses_labels_without_the_particle_filter(tmp_path, capsys):
    labels = synthetic_labels(tmp_path / "labels", chunks=3, determinize="hints")
    assert F.main(["--labels", str(labels), "--out", str(tmp_path / "s.pt"), *ALONE]) != 0
    err = capsys.readouterr().err.strip()
    assert "determinize='hints'" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("features", ["[obs,belief,mask]", "[obs,mask]"])
def test_a_student_started_from_a_network_first_plays_its_moves(tmp_path, features, capsys):
    """``init``: the network's actor, zero weights on the marginals (none without them);
    with a vanishing step the student's moves are the network's at every position of a
    deal."""
    labels = synthetic_labels(tmp_path / "labels", chunks=3)
    out = tmp_path / "student.pt"
    assert F.main(["--labels", str(labels), "--out", str(out), "--epochs", "1",
                   "init=models/ppo_2p.zip", "prior=null", "max_labels=null",
                   f"features={features}", "val_chunks=1", "learning_rate=1e-12",
                   "threads=1"]) == 0
    said = "student: starting from models/ppo_2p.zip's actor ([256, 256], tanh" + (
        "; zero weights on the marginals)" if "belief" in features else ")")
    assert said in capsys.readouterr().out.splitlines()
    student = (agents.make("student", path=str(out), num_players=2, seed=0)
               if "belief" in features else
               agents.make("ppo", path=str(out), num_players=2))
    network = agents.make("ppo", path="models/ppo_2p.zip", num_players=2)
    env = pis_yedili_v1.raw_env(num_players=2)
    env.reset(seed=2)
    moves = 0
    while not env.game.deal_over:
        obs = env.observe(env.agent_selection)
        v0 = {"observation": obs["observation"][:V0], "action_mask": obs["action_mask"]}
        if env.game.current != 0:
            action = network.act(v0)
        else:  # the student reads the v1 table's events; a network, the v0 observation
            action = student.act(obs if "belief" in features else v0)
        if env.game.current == 0 and obs["action_mask"].sum() > 1:
            assert action == network.act(v0)
            moves += 1
        env.step(action)
    assert moves > 3


def test_a_killed_fit_resumes_by_the_same_command_and_leaves_no_partial(tmp_path, capsys,
                                                                        monkeypatch):
    labels = synthetic_labels(tmp_path / "labels", chunks=4)
    argv = ["--labels", str(labels), "--epochs", "3", *ALONE, "hidden=[32]", "val_chunks=1",
            "batch_size=50", "threads=1"]
    whole = tmp_path / "whole.pt"
    assert F.main([*argv, "--out", str(whole)]) == 0
    out, partial = tmp_path / "student.pt", tmp_path / "student.pt.partial"
    real_evaluate = pretrain.evaluate
    calls = []

    def killed_in_epoch_two(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_evaluate(*args)

    monkeypatch.setattr(pretrain, "evaluate", killed_in_epoch_two)
    with pytest.raises(KeyboardInterrupt):
        F.main([*argv, "--out", str(out)])
    assert partial.exists() and not out.exists()
    monkeypatch.setattr(pretrain, "evaluate", real_evaluate)
    capsys.readouterr()
    assert F.main([*argv, "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"pretrain: resuming after epoch 1/3 ({partial})" in lines
    assert sum(line.startswith("pretrain epoch") for line in lines) == 2
    assert not partial.exists()
    resumed, uninterrupted = (load_weights_file(p)["state_dict"] for p in (out, whole))
    assert resumed.keys() == uninterrupted.keys()
    for name, w in uninterrupted.items():
        assert torch.equal(resumed[name], w), name
