"""RLlib PPO (train/rllib/ppo.py), run in .venv-rllib (``make test-rllib``): a run of a
few hundred env steps trains, checkpoints, resumes, and exports a policy that
``agents.make("ppo", path=...)`` plays with the same logits as the RLlib module."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from teacher_agreement import agreement_with_teacher

import agents
import pis_env
from train.rllib.config import dump, load_config
from train.rllib.env import MaskKeysWrapper, make_aec_env
from train.rllib.export import export_module
from train.rllib.ppo import LEARNER, SeatMapping, build_algorithm, learner_state, train
from train.sb3.config import ConfigError

TINY = ["env=aec", "opponents={heuristic: 1, greedy: 1}", "env_runners.num_env_runners=0",
        "env_runners.num_envs_per_env_runner=2",
        "ppo.train_batch_size_per_learner=200", "ppo.minibatch_size=100", "ppo.num_epochs=1",
        "model.fcnet_hiddens=[32, 32]", "stop.minutes=null", "stop.iterations=1",
        "checkpoint_every=1", "eval_deals=0", "pretrain.teacher=null"]
#: A warm start small enough for a test, big enough to imitate most of the heuristic.
TINY_PRETRAIN = ["pretrain.teacher=heuristic", "pretrain.decisions=6000", "pretrain.epochs=6",
                 "pretrain.batch_size=256", "pretrain.learning_rate=0.003"]


def test_wrapper_renames_keys_and_casts_the_mask():
    env = make_aec_env({"num_players": 3})
    env.reset(seed=1)
    agent = env.agent_selection
    obs = env.observe(agent)
    assert set(obs) == {"observations", "action_mask"}
    assert obs["action_mask"].dtype == np.float32
    assert env.observation_space(agent).contains(obs)
    raw = pis_env.env(num_players=3)
    raw.reset(seed=1)
    np.testing.assert_array_equal(raw.observe(agent)["observation"], obs["observations"])
    assert isinstance(env, MaskKeysWrapper)


def test_seat_mapping_one_learner_seat_per_episode():
    mapping = SeatMapping(4, {"heuristic": 1, "greedy": 1}, seed=0)
    seats = [[mapping(f"player_{s}", f"episode-{e}") for s in range(4)] for e in range(40)]
    assert all(row.count(LEARNER) == 1 for row in seats)
    assert {row.index(LEARNER) for row in seats} == {0, 1, 2, 3}
    assert seats[3] == [mapping(f"player_{s}", "episode-3") for s in range(4)]  # stable
    assert {"bot_heuristic", "bot_greedy"} <= {p for row in seats for p in row}


def test_train_resume_export_and_play(local_ray, tmp_path):
    """A new run warms up on the heuristic (the exported imitation plays its moves), trains,
    checkpoints; the resumed run continues without pretraining again."""
    run = tmp_path / "run"
    cfg = load_config(None, TINY + TINY_PRETRAIN)
    logs: list[str] = []
    state = train(cfg, run, log=logs.append)
    assert state["iterations"] == 1 and state["env_steps"] >= 200
    assert (run / "checkpoint").is_dir() and (run / "policy.pt").is_file()
    warm = state["pretrain"]
    assert warm["teacher"] == "heuristic" and warm["decisions"] > 5000
    assert warm["accuracy"] > 0.8 and warm["seconds"] > 0
    assert state["minutes"] >= warm["seconds"] / 60  # the warm start is in the budget
    assert any(line.startswith("pretraining") for line in logs)
    # a random network agrees with the heuristic on ~1/3 of the choices (chance)
    agreement, chance = agreement_with_teacher(run / "policy-pretrain.pt", num_players=2)
    assert agreement > 0.75 and agreement > chance + 0.15
    before = torch.load(run / "policy.pt", weights_only=True)

    cfg2 = load_config(run / "config.yaml", ["stop.iterations=2"])
    logs.clear()
    state = train(cfg2, run, resume=True, log=logs.append)
    assert state["iterations"] == 2 and state["env_steps"] >= 400
    assert not any("pretrain" in line for line in logs)  # resumed: no second warm start
    assert state["pretrain"] == warm
    lines = (run / "progress.jsonl").read_text().splitlines()
    assert [json.loads(x)["iteration"] for x in lines] == [1, 2]
    after = torch.load(run / "policy.pt", weights_only=True)
    assert not torch.equal(before["state_dict"]["action_net.weight"],
                           after["state_dict"]["action_net.weight"])  # it learned

    bot = agents.make("ppo", path=str(run / "policy.pt"), num_players=2)
    other = agents.make("heuristic", num_players=2, seed=0)
    env = pis_env.env()
    env.reset(seed=3)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        player = bot if agent == "player_0" else other
        action = player.act(obs)
        assert obs["action_mask"][action] == 1
        env.step(action)
    assert env.unwrapped.game.deal_over


def test_exported_policy_has_the_modules_logits(local_ray, tmp_path):
    """After the warm start the EnvRunner's module (``algo.get_module``) has the learner's
    fitted weights: the policy exported from the LearnerGroup has its logits."""
    from train.rllib.ppo import learner_spec
    from train.rllib.pretrain import warm_start

    cfg = load_config(None, TINY + ["pretrain.teacher=heuristic", "pretrain.decisions=500",
                                    "pretrain.epochs=1"])
    algo = build_algorithm(cfg)
    try:
        initial = learner_state(algo)
        stats = warm_start(algo, cfg, learner_spec(cfg), LEARNER, log=lambda s: None)
        assert stats["decisions"] > 0
        fitted = learner_state(algo)
        assert not np.array_equal(initial["pi.net.mlp.0.weight"], fitted["pi.net.mlp.0.weight"])
        path = export_module(fitted, cfg.rules, cfg.model, tmp_path / "p.pt")
        module = algo.get_module(LEARNER)
        env = make_aec_env(cfg.rules)
        env.reset(seed=0)
        obs, masks = [], []
        for _ in range(20):
            o = env.observe(env.agent_selection)
            obs.append(o["observations"])
            masks.append(o["action_mask"])
            env.step(int(np.flatnonzero(o["action_mask"])[0]))
        batch = {"obs": {"observations": torch.tensor(np.array(obs)),
                         "action_mask": torch.tensor(np.array(masks))}}
        with torch.no_grad():
            logits = module.forward_inference(batch)["action_dist_inputs"].numpy()
    finally:
        algo.stop()
    policy = agents.make("ppo", path=str(path)).policy
    mine = policy.logits(policy.inputs(np.array(obs), np.array(masks)))
    legal = np.array(masks) > 0
    np.testing.assert_allclose(mine[legal], logits[legal], rtol=1e-4, atol=1e-4)
    assert (logits[~legal] < -1e30).all()  # the mask as -inf logits


@pytest.mark.parametrize("override, match", [
    ("bogus=1", "unknown config key 'bogus'"),
    ("env_runners.num_env_runners=-1", "num_env_runners"),
    ("model.fcnet_activation=swish", "fcnet_activation"),
    ("opponents={mc: 0}", "weight"),
    ("opponents={human: 1}", "built-in bot"),
    ("rules.num_deals=4", "single deals"),
    ("stop.minutes=0", "stop.minutes"),
    ("pretrain.teacher=human", "pretrain.teacher='human'"),
    ("pretrain.teacher=nosuchbot", "built-in bot"),
    ("pretrain.decisions=0", "pretrain.decisions=0: must be > 0"),
    ("pretrain.epochs=1.5", "pretrain.epochs"),
    ("pretrain.batch_size=true", "pretrain.batch_size"),
    ("pretrain.learning_rate=0", r"pretrain.learning_rate=0.0: must be > 0"),
    ("pretrain.value_coef=-1", r"pretrain.value_coef=-1.0: must be >= 0"),
    ("pretrain.collector=gpu", "pretrain.collector"),
    ("pretrain.epoch=3", "unknown config key 'pretrain.epoch'"),
    ("pretrain=null", "pretrain.teacher=null skips"),
    ("rules.draw_rul=one", "did you mean rules.draw_rule"),
    ("stop.minuts=5", "did you mean stop.minutes"),
    ("ppo.lrr=1e-3", r"unknown ppo option 'ppo.lrr'; did you mean ppo.lr\b"),
    ("model.fcnet_hidens=[8]", "did you mean model.fcnet_hiddens"),
])
def test_bad_config_is_a_clear_error(override, match):
    with pytest.raises(ConfigError, match=match):
        load_config(None, [override])


def test_config_sections_merge_as_declared(tmp_path):
    """``model`` and ``ppo`` go to RLlib as they are, merged key by key over the defaults;
    ``opponents`` is replaced whole; a run's saved config reads back the same."""
    cfg = load_config(None, ["ppo.lr=3e-4", "model.fcnet_hiddens=[64]",
                             "opponents={mc: 1}", "rules.num_players=3"])
    assert cfg.ppo["lr"] == 3e-4 and cfg.ppo["num_epochs"] == 4
    assert cfg.model == {"fcnet_hiddens": [64], "fcnet_activation": "tanh",
                            "vf_share_layers": False}
    assert cfg.opponents == {"mc": 1.0} and cfg.rules["num_players"] == 3
    (tmp_path / "config.yaml").write_text(dump(cfg))
    assert load_config(tmp_path / "config.yaml") == cfg


def test_export_refuses_other_architectures():
    with pytest.raises(ValueError, match="not a default RLlib PPO module"):
        export_module({"foo.weight": np.zeros((2, 2))}, {"num_players": 2}, {}, "/tmp/x.pt")


def test_cli_refuses_a_run_without_checkpoint(tmp_path, capsys):
    from train.rllib.ppo import main

    assert main(["--resume", str(tmp_path)]) == 2
    assert "holds no checkpoint" in capsys.readouterr().err
    assert main(["nosuchkey=1"]) == 2


def test_an_iteration_without_samples_counts_no_steps():
    """A busy machine can leave RLlib's env runners without a sample in time: the
    iteration reports NaN steps, which must not end the run."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED

    from train.rllib.ppo import _env_steps

    assert _env_steps({ENV_RUNNER_RESULTS: {NUM_ENV_STEPS_SAMPLED: float("nan")}}) == 0
    assert _env_steps({}) == 0
    assert _env_steps({ENV_RUNNER_RESULTS: {NUM_ENV_STEPS_SAMPLED: 4000}}) == 4000


def test_batched_observations_are_the_aec_envs():
    """The warm start's batched collector (``train.vector.learner_batch.LearnerBatch``) feeds the
    module the vectors ``pis_env.aec`` would: each game's decoded position, encoded as the
    AEC env encodes it for the learner's seat, is the observation row."""
    from pis_env.batched import kernels as K
    from pis_env.observation import ObservationEncoder
    from train.vector.learner_batch import LearnerBatch

    rules = load_config(None, TINY).rules
    core = LearnerBatch(8, rules, opponent_mix={"heuristic": 1, "greedy": 1},
                        learner_seat="random", seed=5)
    obs = core.reset(5)
    aec = pis_env.env(**rules)
    enc = aec.unwrapped._encoder
    assert isinstance(enc, ObservationEncoder) and enc.layout.size == obs.shape[1]
    rng = np.random.default_rng(0)
    for _ in range(5):
        env = core.env
        for b in range(8):
            seat = int(env.learner[b, K.L_SEAT])
            state = env.game.game_state(b)
            np.testing.assert_array_equal(obs[b], enc.encode(state, seat))
            legal = state.legal_mask()
            np.testing.assert_array_equal(core.action_masks()[b],
                                          [(legal >> i) & 1 == 1 for i in range(58)])
        masks = core.action_masks()
        obs = core.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks])).obs


@pytest.mark.parametrize("collector", ["batched", "aec"])
def test_pretrain_is_seeded(collector):
    """The same config fits the same weights (no Ray needed); both collectors give a
    return for every row they keep."""
    from train.rllib.ppo import learner_spec
    from train.rllib.pretrain import collect_decisions, pretrain_state

    cfg = load_config(None, TINY + ["pretrain.teacher=heuristic", "pretrain.decisions=300",
                                    "pretrain.epochs=1", f"pretrain.collector={collector}"])
    data, used = collect_decisions(cfg)
    assert used == collector and len(data["rows"]) > 200
    assert data["x"].shape[1] == 178 and data["masks"][np.arange(len(data["actions"])),
                                                       data["actions"]].all()
    spec = learner_spec(cfg)
    torch.manual_seed(0)
    start = spec.build().get_state()
    a, sa = pretrain_state(cfg, spec, start, log=lambda s: None)
    b, sb = pretrain_state(cfg, spec, start, log=lambda s: None)
    assert sa["collector"] == collector and sa["accuracy"] == sb["accuracy"]
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
