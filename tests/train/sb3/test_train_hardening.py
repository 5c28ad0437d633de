"""Training as a hostile or unlucky user meets it: overrides on resume, damaged and crafted
files, mistakes caught before any work, a clean command line."""

from __future__ import annotations

import base64
import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest

import agents
from agents.common.weights_file import UnverifiedFileWarning
from agents.ppo import PolicyLoadError
from train.common.checkpoint import (
    CheckpointError,
    SkippedCheckpointWarning,
    latest_checkpoint,
)
from train.sb3 import config as C
from train.sb3.run import load_run_config, run

from .test_train import StopAt, tiny_config

ROOT = Path(__file__).resolve().parents[3]
TINY_CLI = ["vec_env=dummy", "n_envs=2", "ppo.n_steps=256", "ppo.batch_size=256",
            "policy.net_arch=[32,32]", "pretrain.teacher=null", "max_minutes=null",
            "log.tensorboard=false", "league.opponents={random: 1}"]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A finished 2-player run with two checkpoints (steps 1024 and 2048)."""
    tmp = tmp_path_factory.mktemp("hardening")
    cfg = tiny_config(tmp, "total_timesteps=2048", "league.opponents={random: 1, self: 1}")
    return Path(run(cfg, verbose=False)["run_dir"])


def copy_run(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "copy"
    shutil.copytree(src, dest)
    return dest


def flip_bytes(path: Path, count: int = 200) -> None:
    """Damages ``count`` bytes in the middle of a file (as a bad disk or copy would)."""
    data = bytearray(path.read_bytes())
    start = len(data) // 2
    for i in range(start, start + count):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


# ---------------------------------------------------------------------- --resume overrides
def test_overrides_given_with_resume_are_kept_by_the_next_resume(finished_run, tmp_path):
    run_dir = copy_run(finished_run, tmp_path)
    first = run(resume=run_dir, overrides=["total_timesteps=4096"], callbacks=[StopAt(2600)],
                verbose=False)
    assert first["status"] == "interrupted"
    assert load_run_config(run_dir).total_timesteps == 4096  # saved at once
    second = run(resume=run_dir, verbose=False)  # the printed resume command: no overrides
    assert second["status"] == "finished"
    assert second["num_timesteps"] == 4096


# ---------------------------------------------------------------------- weights files
def test_damaged_policy_pt_is_refused_naming_the_file(finished_run, tmp_path):
    pt = tmp_path / "policy.pt"
    shutil.copyfile(finished_run / "policy.pt", pt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # intact: loads without a warning (one would raise)
        bot = agents.make("ppo", path=str(pt))
    obs = _first_observation()
    assert obs["action_mask"][bot.act(obs)] == 1
    flip_bytes(pt)
    with pytest.raises(PolicyLoadError, match=r"policy\.pt.*(damaged|corrupt)"):
        agents.make("ppo", path=str(pt))


def _first_observation(num_players: int = 2, num_deals: int = 1) -> dict:
    from pis_env import raw_env

    env = raw_env(num_players=num_players, num_deals=num_deals)
    env.reset(seed=0)
    return env.observe(env.agent_selection)


#: Every weights file shipped in models/.
SHIPPED_PT = ["belief_2p.pt", "belief_4p.pt", "ppo_2p.pt", "ppo_2p_match.pt", "ppo_2p_v2.pt",
              "ppo_3p.pt", "ppo_4p.pt", "ppo_4p_v2.pt", "ppo_5p.pt", "ppo_6p.pt", "ppo_7p.pt",
              "student_2p.pt"]


def test_the_shipped_weights_files_are_the_listed_ones():
    assert sorted(p.name for p in (ROOT / "models").glob("*.pt")) == SHIPPED_PT


@pytest.mark.parametrize("name", SHIPPED_PT)
def test_shipped_models_carry_a_digest(name):
    """Each shipped .pt holds the SHA-256 of its content, which matches, and loads through
    its own loader without a warning."""
    from agents.belief.tracker import BeliefModel
    from agents.common.weights_file import payload_digest, read_weights

    path = ROOT / "models" / name
    data = read_weights(path)
    stored = data.pop("sha256")
    assert len(stored) == 64 and stored == payload_digest(data), name
    num_players = int(name.split("_")[1][0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if name.startswith("belief_"):
            assert BeliefModel.load(path).meta["num_players"] == num_players
        elif name.startswith("student_"):
            bot = agents.make("student", path=str(path), num_players=num_players)
            obs = _first_observation(num_players, 1)
            assert obs["action_mask"][bot.act(obs)] == 1
        else:
            bot = agents.make("ppo", path=str(path), num_players=num_players)
            obs = _first_observation(num_players, bot.num_deals)  # the file's own table
            assert obs["action_mask"][bot.act(obs)] == 1


def test_policy_pt_without_digest_loads_with_a_warning(finished_run, tmp_path):
    import torch

    data = torch.load(finished_run / "policy.pt", weights_only=True)
    del data["sha256"]
    old = tmp_path / "old.pt"
    torch.save(data, old)
    with pytest.warns(UnverifiedFileWarning, match="cannot be verified"):
        agents.make("ppo", path=str(old))


def test_damaged_league_pt_falls_back_to_the_previous_checkpoint(finished_run, tmp_path):
    run_dir = copy_run(finished_run, tmp_path)
    latest = latest_checkpoint(run_dir)
    flip_bytes(latest / "league.pt", 64)
    with pytest.warns(SkippedCheckpointWarning, match=f"{latest.name}.*league.pt"):
        s = run(resume=run_dir, overrides=["total_timesteps=2048"], verbose=False)
    assert s["status"] == "finished"  # resumed from step 1024, trained up to 2048 again


def test_damaged_policy_weights_in_a_checkpoint_are_skipped(finished_run, tmp_path):
    run_dir = copy_run(finished_run, tmp_path)
    for path in (run_dir / "checkpoints").glob("step_*"):
        flip_bytes(path / "policy.pt")
    with pytest.raises(CheckpointError, match="(?s)no intact checkpoint.*damaged"):
        run(resume=run_dir, verbose=False)


def test_empty_latest_pointer_says_corrupt(finished_run, tmp_path):
    run_dir = copy_run(finished_run, tmp_path)
    for path in (run_dir / "checkpoints").glob("step_*"):
        shutil.rmtree(path)
    (run_dir / "checkpoints" / "latest").write_text("")
    with pytest.raises(CheckpointError, match="latest is corrupt"):
        run(resume=run_dir, verbose=False)


# ---------------------------------------------------------------------- untrusted run dirs
def _old_format_checkpoint(run_dir: Path, marker: Path) -> Path:
    """Turns the latest checkpoint into the pre-digest format (an SB3 ``model.zip``) whose
    pickled ``data`` member would create ``marker`` if anything unpickled it."""
    ckpt = latest_checkpoint(run_dir)
    src = run_dir / "policy.zip"  # the same step as the latest checkpoint
    evil = base64.b64encode(pickle.dumps(_MakeDir(str(marker)))).decode()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(ckpt / "model.zip", "w") as zout:
        for item in zin.namelist():
            raw = zin.read(item)
            if item == "data":
                data = json.loads(raw)
                data["policy_kwargs"] = {":type:": "<class 'dict'>", ":serialized:": evil}
                raw = json.dumps(data).encode()
            zout.writestr(item, raw)
    for member in ("policy.pt", "optimizer.pt"):
        (ckpt / member).unlink()
    return ckpt


class _MakeDir:
    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def test_resume_never_unpickles_the_run_directory(finished_run, tmp_path):
    from sb3_contrib import MaskablePPO

    run_dir = copy_run(finished_run, tmp_path)
    marker = tmp_path / "code_ran"
    ckpt = _old_format_checkpoint(run_dir, marker)
    try:  # the crafted archive does run code through SB3's own loader ...
        MaskablePPO.load(ckpt / "model.zip", device="cpu")
    except Exception:
        pass
    assert marker.exists()
    marker.rmdir()
    # ... but resuming reads only its weights (an old-format checkpoint still resumes)
    s = run(resume=run_dir, overrides=["total_timesteps=2560"], verbose=False)
    assert s["status"] == "finished" and s["num_timesteps"] == 2560
    assert not marker.exists()


def test_config_may_not_import_a_foreign_vec_env(tmp_path):
    cfg = tiny_config(tmp_path, "vec_env=os:system")
    with pytest.raises(C.ConfigError, match="command line"):
        run(cfg, verbose=False)
    assert not (tmp_path / "run").exists()
    from train.common.preflight import check_vec_env

    check_vec_env("pis_env.batched.vec_env:make_league_vec_env")  # the project's own
    check_vec_env("mymodule:factory", trusted_modules=["mymodule"])  # named by the user


# ---------------------------------------------------------------------- errors before work
@pytest.mark.parametrize("override, words", [
    ("seed=-1", ["seed", "0.."]),
    ("seed=99999999999", ["seed"]),
    ("eval.seed=-5", ["eval.seed"]),
    ("league.opponents={ppo:models/ppo_4p.zip: 1}", ["league.opponents", "4 players"]),
    ("eval.opponents=[ppo:models/ppo_4p.zip]", ["eval.opponents", "4 players"]),
    ("eval.opponents=[ppo:no/such/policy.zip]", ["eval.opponents", "not found"]),
    ("eval.workers=0", ["eval.workers"]),
])
def test_mistakes_are_caught_before_the_run_directory_exists(tmp_path, override, words):
    with pytest.raises(C.ConfigError) as e:
        run(tiny_config(tmp_path, "eval.deals=10", override), verbose=False)
    for w in words:
        assert w in str(e.value)
    assert not (tmp_path / "run").exists()


def test_files_get_ordinary_permissions(finished_run):
    for path in finished_run.rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        want = 0o755 if path.is_dir() else 0o644
        assert mode == want & ~_umask(), (path, oct(mode))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ---------------------------------------------------------------------- the command line
def _cli(tmp_path: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(ROOT / "train" / "ppo.py"), *args],
                          cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=timeout)


def test_a_clean_run_prints_no_traceback(tmp_path):
    out = _cli(tmp_path, *TINY_CLI, "total_timesteps=512", "eval.deals=40", "eval.workers=2",
               "eval.opponents=[random, greedy]", f"run_dir={tmp_path / 'r'}")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "KeyboardInterrupt" not in out.stderr, out.stderr
    assert "\r" not in out.stderr  # not a terminal: progress comes as lines
    assert (tmp_path / "r" / "eval.json").is_file() or (tmp_path / "r" / "summary.json").is_file()


@pytest.mark.parametrize("content, words", [
    ("total_timesteps: [1\n", ["bad.yaml", "line"]),
    ("ppo: {learning_rate: }\nnot: valid: yaml\n", ["bad.yaml", "line"]),
])
def test_malformed_yaml_is_one_line_and_exit_2(tmp_path, content, words):
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    for args in (["--config", str(bad)], [f"rules_file={bad}"]):
        out = _cli(tmp_path, *args, "--print-config", timeout=120)
        assert out.returncode == 2, (args, out.stderr)
        assert "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
        for w in words:
            assert w in out.stderr, (args, out.stderr)
