"""``python -m train.sb3.ablations`` (variants side by side) and ``python -m train.sb3.curves``."""

from __future__ import annotations

import pytest

from train.sb3 import ablations
from train.sb3.curves import main as curves_main
from train.sb3.curves import training_curve

TINY_BASE = """\
n_envs: 2
total_timesteps: 1024
vec_env: dummy
policy: {net_arch: [16, 16], privileged_critic: true}
ppo: {n_steps: 128, batch_size: 128, n_epochs: 1}
league: {opponents: {random: 1}, snapshot_every: 512}
pretrain: {teacher: null}
checkpoint: {every: 512}
log: {progress: false}
"""


def test_two_variants_table_and_curves(tmp_path, capsys):
    base = tmp_path / "base.yaml"
    base.write_text(TINY_BASE)
    out = tmp_path / "abl"
    argv = ["--base", str(base), "--only", "base,no_memory", "--minutes", "5",
            "--deals", "4", "--out", str(out)]
    assert ablations.main(argv) == 0
    table = (out / "results.md").read_text()
    assert "| base |" in table and "| no_memory |" in table and "1,024" in table
    assert (out / "curves.png").stat().st_size > 0
    steps, values = training_curve(out / "base", tag="league/random/win_rate")
    assert steps and all(0.0 <= v <= 1.0 for v in values)
    png = tmp_path / "c.png"
    assert curves_main([str(out / "base"), str(out / "no_memory"), "--out", str(png),
                        "--tag", "league/random/win_rate"]) == 0
    assert png.stat().st_size > 0 and "2 of 2 runs" in capsys.readouterr().out
    capsys.readouterr()
    assert ablations.main(argv) == 0  # finished variants are not trained again
    assert "start" not in capsys.readouterr().out


def test_unknown_variant_and_missing_logs_are_errors(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        ablations.main(["--only", "base,no_such_thing"])
    assert e.value.code == 2
    assert "unknown variant(s) ['no_such_thing']" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        curves_main([str(tmp_path / "no_run")])
    assert e.value.code == 2
    assert f"no TensorBoard logs (tb/) in {tmp_path / 'no_run'}" in capsys.readouterr().err
