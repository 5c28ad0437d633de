"""``python -m train.ablations``: variants trained side by side, a table and curves."""

from __future__ import annotations

import pytest

pytest.importorskip("sb3_contrib")

from train import ablations  # noqa: E402

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
    steps, values = ablations.training_curve(out / "base", tag="league/random/win_rate")
    assert steps and all(0.0 <= v <= 1.0 for v in values)
    capsys.readouterr()
    assert ablations.main(argv) == 0  # finished variants are not trained again
    assert "start" not in capsys.readouterr().out


def test_unknown_variant_is_an_error():
    with pytest.raises(SystemExit):
        ablations.main(["--only", "base,no_such_thing"])
