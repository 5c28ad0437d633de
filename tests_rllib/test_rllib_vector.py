"""RLlib on the batched vector env (``env=vector``, the default of train/rllib/ppo.py): a
run warms up, trains against the bots and its snapshots, checkpoints, resumes and exports
a policy ``agents.make("ppo", path=...)`` plays; the new run is the command line in a
process where stable-baselines3 and sb3-contrib cannot be imported (an install of the
``rllib`` extra alone); a checkpoint of the other env is refused on resume; the fragment
and the learners' settings reach RLlib. What the remote env
runners sample (legal actions, the snapshots they play) is checked on a two-node cluster
in ``test_rllib_cluster.py``."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import torch
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from shared_ray import ensure_local_ray
from teacher_agreement import agreement_with_teacher

import agents
import pis_env
from train.rllib.config import load_config, rollout_fragment_length
from train.rllib.ppo import build_config, main, train
from train.sb3.config import ConfigError

ROOT = Path(__file__).resolve().parents[1]

TINY = ["env=vector", "env_runners.num_env_runners=0", "env_runners.num_envs_per_env_runner=32",
        "ppo.train_batch_size_per_learner=512", "ppo.minibatch_size=256", "ppo.num_epochs=1",
        "model.fcnet_hiddens=[32, 32]", "stop.minutes=null", "stop.iterations=1",
        "checkpoint_every=1", "eval_deals=0", "pretrain.teacher=heuristic", "snapshots.every=1",
        "pretrain.decisions=3000", "pretrain.epochs=2", "pretrain.learning_rate=0.003"]


#: ``sitecustomize.py`` of a process without stable-baselines3 and sb3-contrib: every
#: import of them fails as if they were not installed (Ray's workers inherit it too). At
#: exit it writes the modules the process imported to ``$IMPORTS_OUT/<pid>.json``.
NO_SB3 = """
import atexit, json, os, sys


class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("stable_baselines3", "sb3_contrib"):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())


@atexit.register
def _write_imports():
    out = os.environ.get("IMPORTS_OUT")
    if out:
        files = {k: getattr(m, "__file__", None) for k, m in list(sys.modules.items())}
        with open(os.path.join(out, f"{os.getpid()}.json"), "w") as f:
            json.dump(files, f)
"""


def without_sb3(tmp_path) -> dict:
    """The environment of a subprocess that cannot import stable-baselines3 or sb3-contrib
    (``NO_SB3``), writing its imports to ``tmp_path/imports``."""
    site, imports = tmp_path / "no_sb3", tmp_path / "imports"
    site.mkdir()
    imports.mkdir()
    (site / "sitecustomize.py").write_text(NO_SB3)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["IMPORTS_OUT"] = str(imports)
    env.pop("RAY_ADDRESS", None)
    return env


@pytest.fixture(scope="module")
def run_without_sb3(tmp_path_factory):
    """``train/rllib/ppo.py`` (TINY: a warm start, one iteration, sampled in the driver)
    run as a user runs it, in a process that cannot import stable-baselines3, joining the
    tests' local Ray: ``(run dir, its stdout, {module: file} of what it imported)``."""
    address = ensure_local_ray()
    tmp = tmp_path_factory.mktemp("no_sb3")
    env = without_sb3(tmp)
    probe = subprocess.run([sys.executable, "-c", "import stable_baselines3"], env=env,
                           capture_output=True, text=True)
    assert probe.returncode != 0 and "blocked" in probe.stderr
    run = tmp / "run"
    done = subprocess.run([sys.executable, "train/rllib/ppo.py", "--run-dir", str(run),
                           "--address", address, *TINY], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    imported: dict = {}
    for path in (tmp / "imports").glob("*.json"):
        imported.update(json.loads(path.read_text()))
    return run, done.stdout, imported


def test_config_sets_the_fragment_and_passes_the_learners():
    cfg = load_config(None, ["env_runners.num_env_runners=2",
                             "env_runners.num_envs_per_env_runner=128",
                             "ppo.train_batch_size_per_learner=8192", "learners.num_learners=2",
                             "learners.num_gpus_per_learner=0.5"])
    assert rollout_fragment_length(cfg) == 64  # 8192 x 2 learners / (128 envs x 2 runners)
    config = build_config(cfg)
    assert config.gym_env_vectorize_mode == "vector_entry_point"
    assert config.rollout_fragment_length == 64 and config.num_envs_per_env_runner == 128
    assert config.num_learners == 2 and config.num_gpus_per_learner == 0.5
    assert config.total_train_batch_size == 8192 * 2  # each learner trains on its batch
    assert not config.is_multi_agent
    config.validate()  # RLlib's own checks pass on this CPU-only machine: no GPU needed here
    assert load_config(None, []).env_runners.num_envs_per_env_runner == 256
    aec = load_config(None, ["env=aec", "opponents={heuristic: 1}"])
    assert aec.env_runners.num_envs_per_env_runner == 16
    with pytest.raises(ConfigError, match=r"needs env=vector.*'opponents=\{heuristic: 1, gre"):
        load_config(None, ["env=aec"])  # the default mix has self
    with pytest.raises(ConfigError, match="besides 'self'"):
        load_config(None, ["opponents={self: 1}"])
    with pytest.raises(ConfigError, match="rollout fragments of 4 steps"):
        load_config(None, ["env_runners.num_envs_per_env_runner=1024",
                           "ppo.train_batch_size_per_learner=4000"])
    with pytest.raises(ConfigError, match="env"):
        load_config(None, ["env=sync"])


def test_runs_warm_start_resume_export_and_play(run_without_sb3, local_ray, capsys):
    """A new run of the command line, where stable-baselines3 cannot be imported, warms up
    on the numba engine (its imitation plays the heuristic's moves far above chance),
    trains against the bots and its snapshots; resumed here, it goes on without a second
    warm start."""
    run, stdout, _ = run_without_sb3
    assert "pretraining: imitating heuristic" in stdout
    state = json.loads((run / "state.json").read_text())
    assert state["env"] == "vector" and state["iterations"] == 1
    assert state["env_steps"] >= 512 and state["pretrain"]["decisions"] > 2500
    assert state["pretrain"]["collector"] == "batched"  # the numba engine, not the AEC env
    agreement, chance = agreement_with_teacher(run / "policy-pretrain.pt", num_players=2)
    print(f"imitation agreement {agreement:.3f}, chance {chance:.3f}")
    assert agreement > chance + 0.15
    line = json.loads((run / "progress.jsonl").read_text().splitlines()[-1])
    assert line["learner_return"] is not None  # episodes (matches) ended in the sample
    assert line["snapshots"] == ["self@0", "self@1"]  # opponents.self: the default mix
    before = torch.load(run / "policy.pt", weights_only=True)

    # a checkpoint of the other env is refused, naming the env that resumes it
    aec = ["env=aec", "opponents={heuristic: 1, greedy: 1}"]  # a valid aec config
    with pytest.raises(ConfigError, match="written with env=vector.*resume it with env=vector"):
        train(load_config(run / "config.yaml", aec), run, resume=True)
    assert main(["--resume", str(run), *aec]) == 2
    assert "resume it with env=vector" in capsys.readouterr().err

    logs: list[str] = []
    state = train(load_config(run / "config.yaml", ["stop.iterations=2"]), run, resume=True,
                  log=logs.append)
    assert state["iterations"] == 2 and state["env_steps"] >= 1024
    assert not any("pretrain" in x for x in logs)
    after = torch.load(run / "policy.pt", weights_only=True)
    assert not torch.equal(before["state_dict"]["action_net.weight"],
                           after["state_dict"]["action_net.weight"])  # PPO updated it

    bot = agents.make("ppo", path=str(run / "policy.pt"), num_players=2)
    env = pis_env.env()
    env.reset(seed=4)
    other = agents.make("greedy", num_players=2)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = (bot if agent == "player_1" else other).act(obs)
        assert obs["action_mask"][action] == 1
        env.step(action)


def installed_by(extra: str) -> set[str]:
    """The distributions ``pip install pis-yedili[extra]`` installs (canonical names): the
    project's requirements as pyproject.toml gives them, then every requirement's own, from
    its installed metadata, extras and markers evaluated as pip does."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    own = canonicalize_name(project["name"])
    todo, seen = [Requirement(f"{own}[{extra}]")], set()
    while todo:
        req = todo.pop()
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        if key[0] == own:
            lines = project["dependencies"] + [line for e in sorted(req.extras)
                                               for line in project["optional-dependencies"][e]]
        else:
            lines = importlib.metadata.distribution(req.name).requires or []
        for line in lines:
            sub = Requirement(line)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e})
                                         for e in (req.extras or {""})):
                todo.append(sub)
    return {name for name, _ in seen}


def test_the_rllib_extra_installs_what_the_run_imports(run_without_sb3):
    """``.venv-rllib`` sees ``.venv``'s packages too, so a requirement missing from the
    ``rllib`` extra would not show in CI: every third-party package that the project's
    modules imported in the run above (the warm start, sampling, checkpoint and export)
    must be installed by the extra."""
    _, _, imported = run_without_sb3
    ours = set()
    for module, file in imported.items():
        if module.partition(".")[0] in ("pis_env", "agents", "train") and file:
            tree = ast.parse(Path(file).read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    ours.update(a.name.partition(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    ours.add(node.module.partition(".")[0])
    ran = {module.partition(".")[0] for module in imported}
    third_party = (ours & ran) - set(sys.stdlib_module_names) - {"pis_env", "agents", "train"}
    of = importlib.metadata.packages_distributions()
    needed = {canonicalize_name(d) for top in third_party for d in of[top]}
    assert {"numba", "ray", "torch", "omegaconf", "gymnasium"} <= needed  # what the run is
    assert not {"stable-baselines3", "sb3-contrib"} & needed
    missing = needed - installed_by("rllib")
    assert not missing, f"the run imports {sorted(missing)}: add them to the rllib extra"


def test_an_aec_checkpoint_from_before_the_vector_env_is_refused(tmp_path, capsys):
    run = tmp_path / "old"
    (run / "checkpoint").mkdir(parents=True)
    (run / "state.json").write_text(json.dumps({"iterations": 3, "env_steps": 9, "minutes": 1}))
    (run / "config.yaml").write_text("name: rllib_ppo\n")  # no env key: the default, vector
    assert main(["--resume", str(run)]) == 2
    assert "written with env=aec" in capsys.readouterr().err


@pytest.mark.parametrize("override, match", [
    ("model.fcnet_hiddens=[64]", r"model.fcnet_hiddens=\[32, 32\]\): --resume keeps them"),
    ("rules.num_players=3", r"rules.num_players=2\): --resume keeps them"),
])
def test_resuming_with_another_table_or_network_is_refused(tmp_path, capsys, override, match):
    """The checkpoint's modules are built for the run's rules and network: an override of
    either is refused, naming the key, before RLlib restores anything."""
    run = tmp_path / "run"
    (run / "checkpoint").mkdir(parents=True)
    (run / "state.json").write_text(json.dumps({"env": "vector", "iterations": 1,
                                                "env_steps": 9, "minutes": 1}))
    (run / "config.yaml").write_text("name: rllib_ppo\nmodel: {fcnet_hiddens: [32, 32]}\n")
    assert main(["--resume", str(run), override]) == 2
    assert re.search(match, capsys.readouterr().err)
    assert main(["--resume", str(run), "stop.iterations=5", "--print-config"]) == 0  # the rest may
