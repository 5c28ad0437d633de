"""Expert iteration (train/expert/iteration.py): labels, the loop end to end, resume, errors,
and the two train/sb3/run.py options it drives (``init_policy``, ``pretrain.data``)."""

from __future__ import annotations

import json
import signal
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

import agents
from agents.ppo import PolicyLoadError, read_policy
from pis_env import Rules, decode_observation
from pis_env.cards import NUM_CARDS
from pis_env.observation import Layout
from tests.train.sb3.test_train import play_deals, tiny_config
from train.common.schema import ConfigError
from train.expert import iteration as EI
from train.sb3.run import run as ppo_run

ROOT = Path(__file__).resolve().parents[3]
POLICY_2P = str(ROOT / "models" / "ppo_2p_v2.zip")
RULES_2P = Rules.from_options(num_players=2).to_dict()
#: train/sb3/run.py overrides of a train stage that takes a few seconds.
TINY_PPO = {
    "vec_env": "dummy", "n_envs": 2, "total_timesteps": 512, "max_minutes": None,
    "ppo": {"n_steps": 256, "batch_size": 256}, "policy": {"net_arch": [32, 32]},
    "league": {"opponents": {"random": 1}}, "pretrain": {"teacher": None, "epochs": 2},
    "log": {"tensorboard": False, "progress": False}, "checkpoint": {"every": 256},
    "eval": {"deals": 4, "opponents": ["random"], "workers": 1},
}



def _stop_after_one_chunk(monkeypatch) -> list:
    """Label one chunk, then interrupt the next as a kill would; returns the chunks' starts
    labelled (one)."""
    real, calls = EI._label_chunk, []

    def stopped_after_one(unit):
        if calls:
            raise KeyboardInterrupt
        calls.append(unit[1])
        return real(unit)

    monkeypatch.setattr(EI, "_label_chunk", stopped_after_one)
    return calls

def job(**kw) -> EI.LabelJob:
    args = dict(seed=3, iteration=1, rules=RULES_2P, policy=POLICY_2P,
                opponents={"heuristic": 1.0, "self": 1.0},
                labeller={"rollouts": 32, "determinize": "belief"},
                win_bonus=0.5, margin=5.0)
    return EI.LabelJob(**{**args, **kw})


def label(start: int, stop: int, **kw) -> dict[str, np.ndarray]:
    return EI.label_games(job(**kw), start, stop)


def ei_config(tmp_path: Path, *overrides: str) -> dict:
    cfg = EI.load_config(None, [f"run_dir={tmp_path / 'ei'}", "games=3", "labeller.rollouts=16",
                                "workers=1", "opponents={heuristic: 1, self: 1}", *overrides])
    cfg.ppo = TINY_PPO
    return cfg


# ---------------------------------------------------------------------- labels
def test_labels_are_the_same_in_any_chunking():
    whole = label(0, 4)
    parts = [label(0, 1), label(1, 4)]
    assert len(whole["action"]) > 10
    for key, value in whole.items():
        np.testing.assert_array_equal(value, np.concatenate([p[key] for p in parts]), key)


def test_labels_are_legal_and_the_positions_consistent():
    data = label(0, 6)
    rows = np.arange(len(data["action"]))
    mask = data["mask"].astype(bool)
    assert mask.sum(axis=1).min() >= 2  # forced moves teach nothing and are left out
    for key in ("action", "search", "own", "behaviour"):
        assert mask[rows, data[key]].all(), key
    np.testing.assert_array_equal(np.isnan(data["values"]), ~mask)
    assert 0.2 < (data["search"] == data["own"]).mean() < 1.0
    # target="improve": the search's move where it beats the network's by the margin
    gain = data["values"][rows, data["search"]] - data["values"][rows, data["own"]]
    np.testing.assert_array_equal(data["action"], np.where(gain > 5.0, data["search"],
                                                           data["own"]))
    assert 0 < (data["action"] != data["own"]).sum() < (data["search"] != data["own"]).sum()
    searched = label(0, 6, target="search")
    np.testing.assert_array_equal(searched["action"], data["search"])
    for g in np.unique(data["game"]):
        assert len(np.unique(data["returns"][data["game"] == g])) == 1  # gamma 1: one return
        assert (data["seat"][data["game"] == g] == g % 2).all()
    for obs, hidden in zip(data["obs"], data["privileged"]):
        decoded = decode_observation(obs, num_players=2)
        opponent_hand = hidden[:NUM_CARDS]
        assert opponent_hand.sum() == decoded["hand_sizes"][1]
        assert not opponent_hand[decoded["hand"]].any()


def test_labels_carry_the_searchs_values_their_stderr_and_its_value(monkeypatch):
    """``stderr`` is every legal action's rollout scores' std / sqrt(count), recomputed
    here from the scores the search drew (captured at ``scores_of``); ``value`` the mean
    score of the search's move; the particle filter (the default) labels."""
    import agents.search as S

    drawn: list[np.ndarray] = []
    monkeypatch.setattr(S, "scores_of", lambda *a, **k: spy_scores(drawn, *a, **k))
    data = label(0, 2, labeller={"rollouts": 16}, opponents={"heuristic": 1.0})
    n = len(data["action"])
    assert n > 5 and len(drawn) == n  # one search per label, no other
    for key, shape in (("values", (n, 58)), ("stderr", (n, 58)), ("value", (n,)),
                       ("belief", (n, NUM_CARDS))):
        assert data[key].shape == shape and data[key].dtype == np.float32, key
    single = 0
    for i, scores in enumerate(drawn):
        legal = np.flatnonzero(data["mask"][i])
        count = max(1, 16 // len(legal))
        scores = scores.reshape(count, len(legal))
        expected = (scores.std(axis=0, ddof=1) / np.sqrt(count) if count > 1
                    else np.full(len(legal), np.nan))
        single += count == 1
        np.testing.assert_allclose(data["stderr"][i, legal], expected, rtol=1e-5)
        np.testing.assert_allclose(data["values"][i, legal], scores.mean(axis=0), rtol=1e-5)
        assert data["value"][i] == data["values"][i, data["search"][i]]
    illegal = data["mask"] == 0
    assert np.isnan(data["stderr"][illegal]).all()
    assert (data["stderr"][~illegal & ~np.isnan(data["stderr"])] >= 0).all()
    assert (data["stderr"][~illegal] > 0).any() and single < n


def spy_scores(drawn: list, *args, **kwargs) -> np.ndarray:
    from agents.mc import scores_of

    out = scores_of(*args, **kwargs)
    drawn.append(out.copy())
    return out


def test_label_beliefs_are_the_particle_filters_card_marginals():
    """At four players: per card at most 1 over the three opponents, none on the
    network's own cards, and each opponent's row sums to its hand size."""
    rules4 = Rules.from_options(num_players=4).to_dict()
    data = EI.label_games(EI.LabelJob(5, 0, rules4, str(ROOT / "models" / "ppo_4p_v2.zip"),
                                      {"heuristic": 1}, {"rollouts": 16}), 0, 1)
    assert data["belief"].shape == (len(data["action"]), 3 * NUM_CARDS) and len(data["action"])
    belief = data["belief"].reshape(-1, 3, NUM_CARDS)
    assert (belief >= 0).all() and (belief.sum(axis=1) <= 1 + 1e-5).all()
    for obs, row in zip(data["obs"], belief):
        decoded = decode_observation(obs, num_players=4)
        assert not row[:, decoded["hand"]].any()
        np.testing.assert_allclose(row.sum(axis=1), decoded["hand_sizes"][1:], atol=1e-3)


def test_labels_resume_per_chunk_after_an_interruption(tmp_path, monkeypatch):
    """A run stopped after its first chunk labels only the other two on a rerun, and the
    chunks make the arrays of one uninterrupted call."""
    monkeypatch.setattr(EI, "GAME_CHUNK", 1)
    the_job = job(labeller={"rollouts": 16})
    real = EI._label_chunk
    calls = _stop_after_one_chunk(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        EI.label_chunks(the_job, 3, tmp_path / "labels", workers=1)
    assert sorted(p.name for p in (tmp_path / "labels").glob("*.npz")) == [
        "games_0000000-0000001.npz"]

    def recorded(unit):
        calls.append(unit[1])
        return real(unit)

    monkeypatch.setattr(EI, "_label_chunk", recorded)
    paths = EI.label_chunks(the_job, 3, tmp_path / "labels", workers=1)
    assert calls == [0, 1, 2]  # chunk 0 once, then only the missing 1 and 2
    resumed = EI.load_chunks(paths)
    whole = EI.label_games(the_job, 0, 3)
    assert resumed.keys() == whole.keys()
    for key, value in whole.items():
        np.testing.assert_array_equal(resumed[key], value, key)


def test_a_labels_directory_refuses_another_jobs_labels(tmp_path):
    EI.label_chunks(job(), 0, tmp_path)
    EI.label_chunks(job(), 0, tmp_path)  # the same job resumes
    with pytest.raises(ConfigError, match="labeller"):
        EI.label_chunks(job(labeller={"rollouts": 64}), 0, tmp_path)


def test_ray_tasks_label_the_same_positions(tmp_path, monkeypatch):
    """An iteration's labels as Ray tasks equal the local ones (chunks of 2 games)."""
    import ray
    monkeypatch.setattr(EI, "GAME_CHUNK", 2)
    cfg = ei_config(tmp_path, "games=4", "labeller.rollouts=8", f"init_policy={POLICY_2P}")
    ppo_cfg = EI.ppo_config(cfg)
    local = EI.label_iteration(cfg, ppo_cfg, 0, POLICY_2P, tmp_path / "local")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = EI.label_iteration(replace(cfg, backend="ray", workers=2), ppo_cfg, 0,
                                    POLICY_2P, tmp_path / "ray")
    finally:
        ray.shutdown()
    for key, value in local.items():
        np.testing.assert_array_equal(value, remote[key], key)


# ---------------------------------------------------------------------- the loop
def test_expert_iteration_end_to_end_with_resume(tmp_path, monkeypatch):
    cfg = ei_config(tmp_path, "iterations=1")
    first = EI.run(cfg, verbose=False)  # no init_policy: iteration 0 is a plain PPO run
    run_dir = Path(first["run_dir"])
    assert first["iterations"] == 1 and not (run_dir / "iter_0" / "data.npz").exists()

    monkeypatch.setattr(EI, "GAME_CHUNK", 1)
    real = EI._label_chunk
    calls = _stop_after_one_chunk(monkeypatch)
    stopped = EI.run(resume=run_dir, overrides=["iterations=2"], verbose=False)
    assert stopped["status"] == "interrupted"
    state = json.loads((run_dir / "state.json").read_text())
    assert (state["iteration"], state["stage"]) == (1, "label")
    assert [p.name for p in (run_dir / "iter_1" / "labels").glob("*.npz")] == [
        "games_0000000-0000001.npz"]

    def recorded(unit):
        calls.append(unit[1])
        return real(unit)

    monkeypatch.setattr(EI, "_label_chunk", recorded)
    summary = EI.run(resume=run_dir, verbose=False)  # iterations=2 was saved with the resume
    assert calls == [0, 1, 2]  # the resumed stage labelled only the two missing chunks
    monkeypatch.undo()
    assert summary["status"] == "finished" and summary["iterations"] == 2
    assert not (run_dir / "iter_1" / "labels").exists()  # the chunks are in data.npz
    rows = [json.loads(line) for line in (run_dir / "progress.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [0, 1]
    assert rows[1]["label_positions"] > 0 and "random" in rows[1]["eval"]
    with np.load(run_dir / "iter_1" / "data.npz") as data:
        assert len(data["action"]) == rows[1]["label_positions"]
    ppo_cfg = yaml.safe_load((run_dir / "iter_1" / "ppo" / "config.yaml").read_text())
    assert ppo_cfg["init_policy"] == str(run_dir / "iter_0" / "ppo" / "policy.zip")
    assert ppo_cfg["pretrain"]["data"] == [str(run_dir / "iter_1" / "data.npz")]
    assert play_deals(run_dir / "policy.zip", 2, deals=2) > 0
    assert EI.run(resume=run_dir, verbose=False)["iterations"] == 2  # done: nothing more


@pytest.mark.parametrize("override, words", [
    ("iterations=0", ["iterations", ">= 1"]),
    ("labeller.determinize=perfect", ["labeller.determinize", "belief"]),
    ("opponents={human: 1}", ["human"]),
    ("opponents={heuristik: 1}", ["unknown bot", "heuristik"]),
    ("itrations=2", ["itrations"]),
    ("backend=spark", ["backend"]),
    ("target=copy", ["target", "improve"]),
    ("margin=-1", ["margin"]),
])
def test_bad_config_values_are_clear_errors(override, words):
    with pytest.raises(ConfigError) as e:
        EI.load_config(None, [override])
    assert all(w in str(e.value) for w in words), str(e.value)


def test_a_policy_of_another_table_is_refused_before_the_run_directory(tmp_path):
    cfg = ei_config(tmp_path, f"init_policy={ROOT / 'models' / 'ppo_4p_v2.zip'}")
    with pytest.raises(ConfigError, match="4 players"):
        EI.run(cfg, verbose=False)
    assert not (tmp_path / "ei").exists()


def test_cli_errors_are_one_line_and_exit_2(tmp_path, capsys):
    before = signal.getsignal(signal.SIGTERM)
    assert EI.main([f"run_dir={tmp_path / 'x'}", "games=-1"]) == 2
    assert signal.getsignal(signal.SIGTERM) is before  # the CLI's handler does not leak
    assert capsys.readouterr().err.startswith("python train/expert_iteration.py: error: games=-1")
    assert EI.main(["--resume", str(tmp_path / "nothing")]) == 2
    assert "no config.yaml" in capsys.readouterr().err


# ---------------------------------------------------------------------- train/sb3/run.py options
def test_init_policy_starts_from_its_weights(tmp_path):
    base = ppo_run(tiny_config(tmp_path, "total_timesteps=256", name="base"), verbose=False)
    _, before = read_policy(base["policy"])
    cfg = tiny_config(tmp_path, f"init_policy={base['policy']}", "total_timesteps=256",
                      "ppo.learning_rate=1e-9", name="next")
    _, after = read_policy(ppo_run(cfg, verbose=False)["policy"])
    # Both runs have seed 0: without init_policy "next" would hold base's initial weights,
    # which base's 256 steps of training moved.
    for key, value in before.items():
        np.testing.assert_allclose(after[key], value, atol=1e-5, err_msg=key)


@pytest.mark.parametrize("extra, words", [
    ([f"init_policy={ROOT / 'models' / 'ppo_4p_v2.zip'}"], ["init_policy", "4 players"]),
    ([f"init_policy={POLICY_2P}"], ["init_policy", "net_arch"]),
    ([f"init_policy={POLICY_2P}", "policy.net_arch=[256,256]"], ["privileged_critic"]),
    (["init_policy=nowhere/policy.zip"], ["init_policy", "not found"]),
    (["pretrain.data=[nowhere.npz]"], ["pretrain.data", "nowhere.npz"]),
    (["pretrain.teacher=heuristic", "pretrain.data=[x.npz]"], ["alternatives"]),
])
def test_bad_init_policy_or_data_is_refused_before_the_run_directory(tmp_path, extra, words):
    with pytest.raises(ConfigError) as e:
        ppo_run(tiny_config(tmp_path, *extra), verbose=False)
    assert all(w in str(e.value) for w in words), str(e.value)
    assert not (tmp_path / "run").exists()


def test_pretrain_data_of_another_table_is_refused(tmp_path):
    rules4 = Rules.from_options(num_players=4).to_dict()
    data = EI.label_games(EI.LabelJob(0, 0, rules4, str(ROOT / "models" / "ppo_4p_v2.zip"),
                                      {"heuristic": 1}, {"rollouts": 8}), 0, 1)
    np.savez(tmp_path / "d4.npz", **data)
    with pytest.raises(ConfigError, match="entries"):
        ppo_run(tiny_config(tmp_path, f"pretrain.data=[{tmp_path / 'd4.npz'}]"), verbose=False)


def test_pretrain_data_teaches_the_labelled_moves(tmp_path):
    """Imitating a data set moves the policy's choices onto its labels."""
    data = label(0, 8)
    np.savez(tmp_path / "d.npz", **data)
    cfg = tiny_config(tmp_path, f"pretrain.data=[{tmp_path / 'd.npz'}]", "pretrain.epochs=40",
                      "pretrain.batch_size=64", "total_timesteps=1", "ppo.learning_rate=1e-9")
    policy = agents.make("ppo", path=ppo_run(cfg, verbose=False)["policy"])
    chosen = np.array([policy.act({"observation": o, "action_mask": m})
                       for o, m in zip(data["obs"], data["mask"])])
    assert (chosen == data["action"]).mean() > 0.9


# ---------------------------------------------------------------------- env_version 1
V0_POLICY = str(ROOT / "models" / "ppo_2p.zip")  # the shipped v3 network: layout 0


@pytest.fixture(scope="module")
def v1_policy(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("ei_v1")
    return ppo_run(tiny_config(tmp, "env_version=1", "total_timesteps=256"),
                   verbose=False)["policy"]


def test_v1_labels_are_v1_positions_next_to_a_v0_network(v1_policy):
    data = label(0, 4, policy=v1_policy, env_version=1,
                 opponents={f"ppo:{V0_POLICY}": 1.0, "self": 1.0})
    assert data["obs"].shape[1] == Layout.of(2, 1, 1).size and len(data["action"]) > 5
    mask = data["mask"].astype(bool)
    assert mask[np.arange(len(mask)), data["action"]].all()
    for obs, hidden in zip(data["obs"], data["privileged"]):
        decoded = decode_observation(obs, num_players=2, version=1)  # checks every segment
        assert hidden[:NUM_CARDS].sum() == decoded["hand_sizes"][1]
        assert decoded["events"]  # the public event log of the network's seat


def test_a_v0_network_is_not_labelled_at_a_v1_table():
    with pytest.raises(PolicyLoadError, match=r"layout version 0 .*layout version 1"):
        label(0, 1, env_version=1)


def test_env_version_is_the_runs_own_key_and_reaches_every_train_stage(tmp_path, v1_policy):
    cfg = ei_config(tmp_path, "env_version=1")
    assert EI.ppo_config(cfg).env_version == 1
    assert EI.ppo_config(ei_config(tmp_path)).env_version == 0
    with pytest.raises(ConfigError, match="run's own key"):
        EI.load_config(None, ["ppo={env_version: 1}"])
    with pytest.raises(ConfigError, match=r"layout version 0 .*layout version 1"):
        EI.run(ei_config(tmp_path, "env_version=1", f"init_policy={V0_POLICY}"), verbose=False)
    assert not (tmp_path / "ei").exists()
    run = EI.Run.create(ei_config(tmp_path, f"init_policy={v1_policy}", "env_version=1"))
    with pytest.raises(ConfigError, match="cannot change env_version"):
        EI.Run.open(run.dir, ["env_version=0"])


def test_init_widen_starts_at_v1_from_a_v0_network_that_plays_as_before(tmp_path):
    """``init_widen``: a v1 run from the shipped v0 network. The labelling stage plays the
    widened copy (init/policy.pt, layout 1), whose choice at each labelled v1 position is
    the v0 network's choice at the same position's v0 observation (the first columns of
    every later layout); the train stage then starts from it."""
    from agents.ppo import load_policy

    tiny = dict(TINY_PPO, policy={"net_arch": [256, 256], "privileged_critic": True})
    cfg = ei_config(tmp_path, "env_version=1", f"init_policy={V0_POLICY}", "init_widen=true",
                    "iterations=1", "games=2", "labeller.rollouts=8", "sample=false")
    cfg.ppo = tiny
    summary = EI.run(cfg, verbose=False)
    start = tmp_path / "ei" / "init" / "policy.pt"
    assert read_policy(start)[0]["layout_version"] == 1
    data = np.load(tmp_path / "ei" / "iter_0" / "data.npz")
    assert data["obs"].shape[1] == Layout.of(2, 1, 1).size and len(data["own"]) > 5
    old, l0 = load_policy(V0_POLICY, 2), Layout.of(2, 1, 0).size
    assert [old.act(o[:l0], m) for o, m in zip(data["obs"], data["mask"])] == \
        data["own"].tolist()
    assert read_policy(summary["policy"])[0]["layout_version"] == 1


@pytest.mark.parametrize("n", [2, 4])
def test_the_v4_recipes_start_from_v3_widened_and_pass_preflight(n):
    """configs/expert_iteration_{2,4}p_v4.yaml: v1 runs from the widened v3 bot, labelled
    by the particle-filter search, checked as a run is before its directory exists."""
    from train.common.preflight import check_run

    cfg = EI.load_config(ROOT / "configs" / f"expert_iteration_{n}p_v4.yaml")
    assert (cfg.env_version, cfg.init_widen) == (1, True)
    assert cfg.init_policy == f"models/ppo_{n}p.zip"
    assert cfg.labeller.determinize == "particles" and cfg.max_minutes <= 90
    check_run(EI.ppo_config(cfg, policy=cfg.init_policy))
