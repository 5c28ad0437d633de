"""The typed training config (``train/sb3/config.py``, OmegaConf structured configs): help for
every key, clear errors, TensorBoard's hyperparameters text, run directories written
before the change, and the entry point without an installed package."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from train.sb3 import config as C
from train.sb3.run import load_run_config, main, run

from .test_train import TINY, tiny_config

ROOT = Path(__file__).resolve().parents[3]
OLD_CONFIG = ROOT / "tests" / "fixtures" / "run_config_before_omegaconf.yaml"
#: The overrides OLD_CONFIG was written with (by train/sb3/config.py before OmegaConf).
OLD_OVERRIDES = [*TINY, "total_timesteps=2048", "league.opponents={random: 1, self: 1}"]


@pytest.fixture(scope="module")
def tb_run(tmp_path_factory) -> Path:
    """A finished tiny run with TensorBoard logs, the network of ``OLD_CONFIG``."""
    tmp = tmp_path_factory.mktemp("config")
    cfg = tiny_config(tmp, "total_timesteps=2048", "league.opponents={random: 1, self: 1}",
                      "log.tensorboard=true")
    return Path(run(cfg, verbose=False)["run_dir"])


# ---------------------------------------------------------------------- help
def test_every_key_has_help_and_help_config_prints_it(capsys):
    assert "ppo.learning_rate" in C.FIELDS and "league.opponents" in C.FIELDS
    for path, key in C.FIELDS.items():
        assert len(key.metadata.get("help", "")) > 10, path
    assert main(["--help-config"]) == 0
    out = capsys.readouterr().out
    for path, key in C.FIELDS.items():
        assert f"  {path}: " in out, path
        assert key.metadata["help"] in out, path
    assert "short: learning_rate" in out and "one of dummy, subproc, batched" in out


#: Every training entry point: its module (``main``), its config schema, its default file.
#: (pipeline module, its schema, its shipped config, the command that runs it)
ENTRY_POINTS = [("train.sb3.run", "train.sb3.config:TRAIN", "ppo_2p", "train/ppo.py"),
                ("train.expert.iteration", "train.expert.iteration:CONFIG", None,
                 "train/expert_iteration.py"),
                ("train.rllib.ppo", "train.rllib.config:CONFIG", "rllib_ppo",
                 "train/rllib_ppo.py")]


@pytest.mark.parametrize("entry, schema, default, script", ENTRY_POINTS)
def test_every_entry_point_has_one_config_system(entry, schema, default, script, capsys):
    """``--help-config`` lists each key with its help; a typo is refused in argparse's
    format naming the nearest key; the defaults live in the dataclass, not twice in a
    YAML file."""
    import importlib

    module = importlib.import_module(entry)
    name, attr = schema.split(":")
    fields = getattr(importlib.import_module(name), attr).fields
    assert module.main(["--help-config"]) == 0
    out = capsys.readouterr().out
    for path, key in fields.items():
        assert len(key.metadata.get("help", "")) > 10, path
        assert f"  {path}: " in out and key.metadata["help"] in out, path
    deep = [p for p in fields if "." in p][-1]
    assert module.main([f"{deep[:-1]}=1", "--print-config"]) == 2
    err = capsys.readouterr().err
    prog = f"python {script}"
    assert err.startswith(f"{prog}: error: unknown config key {deep[:-1]!r}"), err
    assert deep in err and len(err.strip().splitlines()) == 1, err
    if default:
        data = yaml.safe_load((ROOT / "configs" / f"{default}.yaml").read_text())
        assert data == {"name": default}


def test_the_defaults_are_declared_once():
    """configs/ppo_2p.yaml names the run; its values are the dataclass defaults."""
    data = yaml.safe_load((ROOT / "configs" / "ppo_2p.yaml").read_text())
    assert data == {"name": "ppo_2p"}
    assert C.build(None).ppo.batch_size == C.PPOConfig().batch_size == 8192


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("override, words", [
    ("ppo=3", ["'ppo' is a section", "ppo.learning_rate"]),
    ("rules=5", ["rules=5", "rules YAML"]),
    ("policy.net_arch=wide", ["policy.net_arch", "a list of int"]),
    ("league.opponents={random: lots}", ["league.opponents", "float"]),
    ("eval.workers=0", ["eval.workers", ">= 1"]),
    ("max_minutes=-1", ["max_minutes", "> 0", "null"]),
    ("n_envs=null", ["n_envs may not be null"]),
    ("learning_rate=true", ["ppo.learning_rate", "float"]),
    ("log.interval=-1", ["log.interval", ">= 0"]),
])
def test_more_bad_values_are_clear(override, words):
    with pytest.raises(C.ConfigError) as e:
        C.build(None, [override])
    for w in words:
        assert w in str(e.value)


def test_extends_chain_and_loop(tmp_path):
    (tmp_path / "a.yaml").write_text("extends: b.yaml\nseed: 1\n")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\n")
    with pytest.raises(C.ConfigError, match="loops back"):
        C.build(tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("extends: ppo_4p.yaml\n")
    shutil.copy(ROOT / "configs" / "ppo_4p.yaml", tmp_path / "ppo_4p.yaml")
    shutil.copy(ROOT / "configs" / "ppo_2p.yaml", tmp_path / "ppo_2p.yaml")
    cfg = C.build(tmp_path / "c.yaml", ["league.opponents={greedy: 1}"])
    assert cfg.num_players == 4 and cfg.league.opponents == {"greedy": 1.0}
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(C.ConfigError, match="mapping"):
        C.build(tmp_path / "list.yaml")


def test_a_corrupt_run_config_is_a_clear_error(tmp_path):
    (tmp_path / "config.yaml").write_text("- not\n- a mapping\n")
    with pytest.raises(C.ConfigError, match="corrupt config"):
        load_run_config(tmp_path)


# ---------------------------------------------------------------------- TensorBoard
def test_resolved_config_is_logged_to_tensorboard_as_text(tb_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    texts = []
    for f in (tb_run / "tb").glob("**/events.out.tfevents.*"):
        acc = EventAccumulator(str(f), size_guidance={"tensors": 0})
        acc.Reload()
        if "hyperparameters/text_summary" in acc.Tags()["tensors"]:
            texts += [e.tensor_proto.string_val[0].decode()
                      for e in acc.Tensors("hyperparameters/text_summary")]
    assert len(texts) == 1
    text = texts[0]
    assert "| ppo.learning_rate | 0.0005 |" in text
    assert "| policy.net_arch | [32, 32] |" in text
    assert "| league.opponents | {random: 1.0, self: 1.0} |" in text
    for path in C.FIELDS:
        assert f"| {path} |" in text, path


# ---------------------------------------------------------------------- older run directories
def test_a_run_directory_written_before_omegaconf_resumes(tb_run, tmp_path):
    run_dir = tmp_path / "old"
    shutil.copytree(tb_run, run_dir)
    shutil.copyfile(OLD_CONFIG, run_dir / "config.yaml")
    expected = C.build(None, [*OLD_OVERRIDES, f"run_dir={run_dir}"])
    assert load_run_config(run_dir) == expected
    with pytest.raises(C.ConfigError, match="cannot change"):
        load_run_config(run_dir, ["num_players=3"])
    s = run(resume=run_dir, overrides=["total_timesteps=2560"], verbose=False)
    assert s["status"] == "finished" and s["num_timesteps"] == 2560
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["total_timesteps"] == 2560 and saved["policy"]["net_arch"] == [32, 32]


# ---------------------------------------------------------------------- entry point
def test_without_the_package_the_script_prints_a_one_line_hint(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-S", str(ROOT / "train" / "ppo.py"),
                          "--print-config"], cwd=tmp_path, capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "pip install" in out.stderr and "Traceback" not in out.stderr


# ---------------------------------------------------------------------- config comments
def test_each_configs_save_to_is_the_model_it_made():
    """A config's header command (``--config configs/X.yaml --save-to models/Y``) writes
    the model that models/README.md says X made: following a v2 recipe must not overwrite
    the shipped v3 bots."""
    import re

    table = (ROOT / "models" / "README.md").read_text(encoding="utf-8")
    made = dict(re.findall(r"--config (configs/\S+\.yaml) --save-to (models/\S+?)`", table))
    assert len(made) >= 4, made
    seen = 0
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        header = "".join(line for line in path.read_text(encoding="utf-8").splitlines(True)
                         if line.startswith("#"))
        targets = set(re.findall(r"--save-to (models/\S+)", header))
        name = f"configs/{path.name}"
        if name in made:
            seen += 1
            assert targets == {made[name]}, (name, targets)
        else:
            assert not targets, f"{name} saves to {targets}, which models/README.md does " \
                                "not say it made"
    assert seen == len(made)


def test_a_missing_config_file_lists_the_shipped_ones(tmp_path):
    with pytest.raises(C.ConfigError, match=r"config file not found: .*nowhere.yaml "
                       r"\(shipped configs: .*ppo_2p, .*ppo_4p"):
        C.build(tmp_path / "nowhere.yaml")
    with pytest.raises(C.ConfigError, match=r"rules_file not found: nowhere.yaml \(shipped "
                       r"rules: big_table, .*strict\)"):
        C.build(None, ["rules_file=nowhere.yaml"])


@pytest.mark.parametrize("steps, n_steps, n_envs, note", [
    (4096, 2048, 8, "16,384 steps are trained"),  # less than one rollout
    (40_000, 2048, 8, "49,152 steps are trained"),
    (32_768, 2048, 8, ""),  # whole rollouts: nothing to say
    (0, 2048, 8, ""),
])
def test_the_start_line_says_when_sb3_trains_more_than_asked(steps, n_steps, n_envs, note):
    from train.sb3.run import rollout_note

    text = rollout_note(steps, n_steps, n_envs)
    assert (note in text and "n_steps x n_envs = 16,384" in text) if note else text == ""
