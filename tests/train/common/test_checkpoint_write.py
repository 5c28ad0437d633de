"""The checkpoints a run writes and resumes from, without training: ``save_checkpoint``'s
directory (its members, its ``state.json``, ``latest``, the old ones it prunes, nothing
left behind when it fails) and how a run directory is searched for the checkpoint to
resume from (``latest`` first, every damaged one skipped with a warning that names it,
every refusal word for word). The model is a toy network with an optimizer, so what is
checked is the file handling, not SB3."""

from __future__ import annotations

import json
import os
import stat
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from agents.common.weights_file import current_umask, load_weights_file
from agents.ppo import FORMAT_VERSION, META_NAME, make_metadata
from pis_env.observation import Layout, deal_view_indices
from train.common.checkpoint import (
    CHECKPOINTS,
    LATEST,
    STATE_FORMAT,
    CheckpointError,
    IncompatibleCheckpointError,
    SkippedCheckpointWarning,
    find_checkpoint,
    latest_checkpoint,
    layout_version_of,
    load_checkpoint,
    policy_metadata,
    read_state,
    save_checkpoint,
    save_model_zip,
    widen_to_layout,
)
from train.common.schema import as_dict
from train.sb3.config import TRAIN

from .test_checkpoint_files import config


class League:
    """The part of ``train.common.league.League`` a checkpoint keeps; it also notes what
    the checkpoint folder held while it was asked (the checkpoint half written)."""

    def __init__(self, tag: str, root: Path | None = None):
        self.tag, self.root, self.seen = tag, root, None

    def state_dict(self) -> dict:
        if self.root is not None:
            self.seen = sorted(p.name for p in self.root.iterdir())
        return {"pool": [self.tag], "scores": torch.arange(3.0)}


def model(steps: int, updates: int = 5, seed: int = 0, broken: bool = False):
    """An object with what ``save_checkpoint`` reads of an SB3 model: a one-layer policy
    with an optimizer that has taken a step (so its state is not empty)."""
    torch.manual_seed(seed)
    policy = torch.nn.Linear(3, 2)
    policy.net_arch = [6]
    policy.optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    policy(torch.ones(1, 3)).sum().backward()
    policy.optimizer.step()
    if broken:
        def fail():
            raise RuntimeError("disk full")
        policy.optimizer.state_dict = fail
    return SimpleNamespace(num_timesteps=steps, _n_updates=updates, policy=policy)


def save(tmp_path: Path, steps: int, **kwargs) -> Path:
    return save_checkpoint(tmp_path / "run", model(steps, seed=steps), League(f"at {steps}"),
                           config(tmp_path), {"wall_minutes": 1.5}, **kwargs)


def names(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "run" / CHECKPOINTS).iterdir())


# ---------------------------------------------------------------------- writing
def test_a_checkpoint_holds_every_member_and_its_state(tmp_path):
    cfg = config(tmp_path)
    m = model(1234, updates=7)
    norm = {"mean": [0.5], "var": [2.0], "clip_obs": 10.0, "epsilon": 1e-8}
    league = League("x", root=tmp_path / "run" / CHECKPOINTS)
    path = save_checkpoint(tmp_path / "run", m, league, cfg, {"wall_minutes": 1.5},
                           obs_norm=norm)
    # written in a temporary folder beside its final place, renamed when complete
    assert len(league.seen) == 1 and league.seen[0].startswith(".tmp-")
    assert path == tmp_path / "run" / CHECKPOINTS / "step_000000001234"
    assert names(tmp_path) == [LATEST, "step_000000001234"]
    assert (tmp_path / "run" / CHECKPOINTS / LATEST).read_text() == "step_000000001234\n"
    assert sorted(p.name for p in path.iterdir()) == [
        "league.pt", "optimizer.pt", "policy.pt", "state.json"]
    state = json.loads((path / "state.json").read_text(encoding="utf-8"))
    assert state == {"format": STATE_FORMAT, "format_version": state["format_version"],
                     "num_timesteps": 1234, "n_updates": 7, "layout_version": 0,
                     "layout_size": Layout.of(2, 1, 0).size, "rules": cfg.rules,
                     "obs_norm": norm, "wall_minutes": 1.5}
    assert isinstance(state["format_version"], int) and state["format_version"] >= 1
    assert (path / "state.json").read_text().startswith('{\n "format": ')  # indent=1
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o777 & ~current_umask()
    policy = load_weights_file(path / "policy.pt")
    assert policy["format_version"] == FORMAT_VERSION
    meta = json.loads(policy["meta"])
    assert (meta["obs_norm"], meta["num_timesteps"], meta["layout_version"]) == (norm, 1234, 0)

    ckpt = load_checkpoint(path, 2, 1)
    assert ckpt.path == path and ckpt.state == state
    assert ckpt.policy.keys() == m.policy.state_dict().keys()
    for key, value in m.policy.state_dict().items():
        assert torch.equal(ckpt.policy[key], value)
    saved = m.policy.optimizer.state_dict()
    assert ckpt.optimizer["param_groups"][0]["lr"] == saved["param_groups"][0]["lr"]
    assert torch.equal(ckpt.optimizer["state"][0]["exp_avg"], saved["state"][0]["exp_avg"])
    assert ckpt.league["pool"] == ["x"]
    assert torch.equal(ckpt.league["scores"], torch.arange(3.0))


def test_a_model_without_an_update_count_saves_zero_updates(tmp_path):
    m = model(8)
    del m._n_updates
    path = save_checkpoint(tmp_path / "run", m, League("x"), config(tmp_path), {})
    assert json.loads((path / "state.json").read_text())["n_updates"] == 0
    assert read_state(path, 2, 1)["obs_norm"] is None


def test_only_the_newest_two_are_kept_unless_told_otherwise(tmp_path):
    for steps in (10, 30, 20):
        save(tmp_path, steps)
    # the newest by step, not by time, and the one just written (latest) always stays
    assert names(tmp_path) == [LATEST, "step_000000000020", "step_000000000030"]
    assert latest_checkpoint(tmp_path / "run").name == "step_000000000020"
    save(tmp_path, 40, keep=1)
    assert names(tmp_path) == [LATEST, "step_000000000040"]
    for steps in (50, 60, 70):
        save(tmp_path, steps, keep=0)
    assert names(tmp_path) == [LATEST] + [f"step_{s:012d}" for s in (40, 50, 60, 70)]


def test_leftovers_of_an_interrupted_save_are_cleared_and_the_system_tmp_is_not_used(
        tmp_path, monkeypatch):
    root = tmp_path / "run" / CHECKPOINTS
    root.mkdir(parents=True)
    (root / ".tmp-a-folder").mkdir()
    (root / ".tmp-a-folder" / "policy.pt").write_text("half")
    (root / ".tmp-a-file").write_text("not even a folder")
    # a rename across file systems fails: the temporary folder is made in the run's own
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "no-such-folder"))
    save(tmp_path, 10)
    assert names(tmp_path) == [".tmp-a-file", LATEST, "step_000000000010"]


def test_saving_a_step_again_replaces_it(tmp_path):
    save(tmp_path, 10)
    stale = tmp_path / "run" / CHECKPOINTS / "step_000000000010" / "stale.txt"
    stale.write_text("from the first save")
    save(tmp_path, 10)
    assert not stale.exists()
    assert load_checkpoint(stale.parent, 2, 1).league["pool"] == ["at 10"]


def test_a_failed_save_leaves_the_previous_checkpoint_and_no_temporary(tmp_path):
    save(tmp_path, 10)
    root = tmp_path / "run" / CHECKPOINTS
    (root / ".tmp-left-by-a-crash").mkdir()
    with pytest.raises(RuntimeError, match="disk full"):
        save_checkpoint(tmp_path / "run", model(20, broken=True), League("y"),
                        config(tmp_path), {})
    assert names(tmp_path) == [LATEST, "step_000000000010"]
    assert (root / LATEST).read_text() == "step_000000000010\n"
    save(tmp_path, 30)
    assert not [p for p in root.iterdir() if p.name.startswith(".tmp-")]


# ---------------------------------------------------------------------- finding
def test_latest_names_the_checkpoint_even_when_a_higher_step_exists(tmp_path):
    save(tmp_path, 10)
    save(tmp_path, 20)
    root = tmp_path / "run" / CHECKPOINTS
    (root / LATEST).write_text("step_000000000010\n")
    assert latest_checkpoint(tmp_path / "run") == root / "step_000000000010"
    ckpt = find_checkpoint(tmp_path / "run", 2, 1)
    assert ckpt.path == root / "step_000000000010"


@pytest.mark.parametrize("pointer", ["", "step_000000000099", "step_\ufffd",
                                     "../checkpoints/step_000000000010"])
def test_a_corrupt_latest_falls_back_to_the_highest_step_with_a_warning(tmp_path, pointer):
    save(tmp_path, 10)
    save(tmp_path, 20)
    root = tmp_path / "run" / CHECKPOINTS
    (root / LATEST).write_bytes(pointer.replace("\ufffd", "\udcff").encode(
        "utf-8", "surrogateescape") + b"\n")  # the last: a byte that is not UTF-8
    assert latest_checkpoint(tmp_path / "run") == root / "step_000000000020"
    with pytest.warns(SkippedCheckpointWarning) as caught:
        ckpt = find_checkpoint(tmp_path / "run", 2, 1)
    assert ckpt.path == root / "step_000000000020"
    assert [str(w.message) for w in caught] == [
        f"skipped: {root / LATEST} is corrupt (it names {pointer!r}, not a checkpoint); "
        "resuming from step_000000000020"]


def test_a_damaged_newest_checkpoint_is_skipped_and_named(tmp_path):
    save(tmp_path, 10)
    newest = save(tmp_path, 20)
    (newest / "league.pt").unlink()
    with pytest.warns(SkippedCheckpointWarning) as caught:
        ckpt = find_checkpoint(tmp_path / "run", 2, 1)
    assert ckpt.path.name == "step_000000000010"
    assert ckpt.league["pool"] == ["at 10"]
    assert [str(w.message) for w in caught] == [
        f"skipped: checkpoint {newest} is incomplete: league.pt is missing; resuming from "
        "step_000000000010"]


def test_an_intact_newest_checkpoint_resumes_without_a_warning(tmp_path):
    save(tmp_path, 10)
    save(tmp_path, 20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert find_checkpoint(tmp_path / "run", 2, 1).path.name == "step_000000000020"


def test_when_every_checkpoint_is_damaged_each_is_named(tmp_path):
    oldest, older, newer = save(tmp_path, 5, keep=0), save(tmp_path, 10, keep=0), \
        save(tmp_path, 20, keep=0)
    (oldest / "league.pt").write_bytes(b"not torch")
    (older / "optimizer.pt").unlink()
    (newer / "state.json").write_text("[]")
    with pytest.raises(CheckpointError) as err:
        find_checkpoint(tmp_path / "run", 2, 1)
    assert str(err.value).startswith(  # the last line ends with torch's own message
        f"{tmp_path / 'run'}: no intact checkpoint to resume from:\n"
        f"  checkpoint {newer}: corrupt state.json (not a pis-yedili checkpoint)\n"
        f"  checkpoint {older} is incomplete: optimizer.pt is missing\n"
        f"  checkpoint {oldest}: {oldest / 'league.pt'}: corrupt or unreadable weights (")


def test_a_checkpoint_of_another_layout_is_not_skipped_for_an_older_one(tmp_path):
    save(tmp_path, 10)
    newest = save(tmp_path, 20)
    with pytest.raises(IncompatibleCheckpointError) as err:
        find_checkpoint(tmp_path / "run", 2, 1, layout_version=1)
    size_1 = Layout.of(2, 1, 1).size
    assert str(err.value) == (
        f"checkpoint {newest} was saved at observation layout version 0 (pis_yedili_v0, "
        f"size {Layout.of(2, 1, 0).size}); this run trains at layout version 1 "
        f"(env_version=1, size {size_1} for 2 players): it cannot be resumed (a run keeps "
        "its env_version; train the other layout in a new run directory)")
    with pytest.raises(IncompatibleCheckpointError, match="size .* for 4 players"):
        find_checkpoint(tmp_path / "run", 4, 1)


def test_a_run_directory_without_checkpoints_is_named(tmp_path):
    with pytest.raises(CheckpointError) as err:
        find_checkpoint(tmp_path / "nowhere", 2, 1)
    assert str(err.value) == f"run directory not found: {tmp_path / 'nowhere'}"
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError) as err:
        latest_checkpoint(tmp_path / "empty")
    assert str(err.value) == f"{tmp_path / 'empty'} holds no checkpoint (no checkpoints/step_*)"
    root = tmp_path / "empty" / CHECKPOINTS
    root.mkdir()
    (root / "step_000000000001").write_text("a file, not a checkpoint")
    (root / LATEST).write_text("step_000000000001\n")
    with pytest.raises(CheckpointError) as err:
        latest_checkpoint(tmp_path / "empty")
    assert str(err.value) == (
        f"{tmp_path / 'empty'} holds no checkpoint (no checkpoints/step_*) ({root / LATEST} "
        "is corrupt (it names 'step_000000000001', not a checkpoint))")


# ---------------------------------------------------------------------- state.json
def test_each_damaged_state_file_is_named(tmp_path):
    path = save(tmp_path, 10)
    state = path / "state.json"
    state.unlink()
    with pytest.raises(CheckpointError) as err:
        read_state(path, 2, 1)
    assert str(err.value) == f"checkpoint {path} is incomplete: state.json is missing"
    state.write_text("{")
    with pytest.raises(CheckpointError) as err:
        read_state(path, 2, 1)
    assert str(err.value) == (f"checkpoint {path}: corrupt state.json (Expecting property "
                              "name enclosed in double quotes: line 1 column 2 (char 1))")
    state.write_bytes(b'{"format": "\xff"}')
    with pytest.raises(CheckpointError, match="corrupt state.json .*utf-8"):
        read_state(path, 2, 1)
    for text in ('{"format": "another-format"}', '["pis-yedili-ppo-checkpoint"]'):
        state.write_text(text)
        with pytest.raises(CheckpointError) as err:
            read_state(path, 2, 1)
        assert str(err.value) == (f"checkpoint {path}: corrupt state.json (not a "
                                  "pis-yedili checkpoint)")


def test_a_state_of_the_right_version_but_another_size_is_incompatible(tmp_path):
    path = save(tmp_path, 10)
    state = json.loads((path / "state.json").read_text())
    state["layout_size"] += 1
    (path / "state.json").write_text(json.dumps(state))
    with pytest.raises(IncompatibleCheckpointError, match=(
            rf"layout version 0 \(pis_yedili_v0, size {state['layout_size']}\); this run")):
        read_state(path, 2, 1)
    state.pop("layout_version")
    (path / "state.json").write_text(json.dumps(state))
    with pytest.raises(IncompatibleCheckpointError,
                       match=r"layout version None \(pis_yedili_vNone"):
        read_state(path, 2, 1)


# ---------------------------------------------------------------------- metadata
def test_a_policys_metadata_says_its_run_step_and_table(tmp_path):
    cfg = config(tmp_path, "name=probe")
    meta = policy_metadata(cfg, model(77), step=None, note="kept")
    assert meta == make_metadata(
        rules=cfg.rules, net_arch={"pi": [6], "vf": [6]}, activation="tanh",
        features=["obs", "mask"], layout_version=0,
        extra={"num_timesteps": 77, "run_name": "probe", "note": "kept"})
    assert policy_metadata(cfg, model(77), step=12)["num_timesteps"] == 12
    m = model(77)
    m.policy.net_arch = {"pi": [6], "vf": [9]}
    assert policy_metadata(cfg, m)["net_arch"] == {"pi": [6], "vf": [9]}
    cfg = config(tmp_path, "env_version=1")
    cfg.policy.oracle_actor = True
    meta = policy_metadata(cfg, model(3))
    assert (meta["oracle_actor"], meta["layout_version"], meta["layout_size"]) == (
        True, 1, Layout.of(2, 1, 1).size)
    assert meta["obs_norm"] is None


def test_a_config_without_an_env_version_trained_on_layout_0():
    saved = as_dict(TRAIN.build(None))
    del saved["env_version"]
    assert layout_version_of(TRAIN.build(base=saved)) == 0
    assert layout_version_of(TRAIN.build(None, {"env_version": "1"})) == 1


class Saver:
    """What ``save_model_zip`` asks of an SB3 model: ``save(path)`` writes an archive."""

    def save(self, path: str) -> None:
        import zipfile
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("policy.pth", b"weights")


def test_a_model_archive_carries_its_metadata_with_ordinary_permissions(tmp_path):
    import zipfile
    meta = {"format": "x", "num_players": 2}
    path = tmp_path / "out" / "policy.zip"
    save_model_zip(Saver(), path, meta)
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == sorted(["policy.pth", META_NAME])
        assert archive.read(META_NAME).decode() == json.dumps(meta, indent=1)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~current_umask()
    assert sorted(p.name for p in path.parent.iterdir()) == ["policy.zip"]


# ---------------------------------------------------------------------- widening
def arrays_of(meta: dict, critic_extra: int = 3, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    size = meta["input_size"]
    return {"mlp_extractor.policy_net.0.weight": rng.normal(size=(4, size)).astype(np.float32),
            "mlp_extractor.value_net.0.weight":
                rng.normal(size=(4, size + critic_extra)).astype(np.float32),
            "action_net.weight": rng.normal(size=(2, 4)).astype(np.float32)}


def widenable_meta(deals: int = 1, version: int = 0) -> dict:
    """A 2-player policy's metadata whose input is the observation alone (what
    ``init_widen`` widens; ``test_checkpoint_files.meta_of``'s also reads the mask)."""
    return make_metadata(rules={"num_players": 2, "num_deals": deals},
                         net_arch={"pi": [4], "vf": [4]}, activation="tanh",
                         features=["obs"], layout_version=version)


def test_a_widened_policy_computes_what_the_old_one_did(tmp_path):
    """v0 -> v1: a v1 observation begins with the v0 one, so the old weights on those
    columns and zeros elsewhere give the same first layer, actor and critic alike (the
    critic's extra inputs after the observation keep their weights)."""
    meta = widenable_meta()
    arrays = arrays_of(meta)
    old, new = Layout.of(2, 1, 0).size, Layout.of(2, 1, 1).size
    wide_meta, wide = widen_to_layout(meta, arrays, 1)
    assert wide_meta == dict(meta, layout_version=1, layout_size=new, num_deals=1,
                             input_size=new)
    rng = np.random.default_rng(1)
    x_old, extra = rng.normal(size=old), rng.normal(size=3)
    x_new = np.concatenate([x_old, rng.normal(size=new - old)])
    actor, critic = "mlp_extractor.policy_net.0.weight", "mlp_extractor.value_net.0.weight"
    np.testing.assert_allclose(wide[actor] @ x_new, arrays[actor] @ x_old, rtol=1e-5)
    np.testing.assert_allclose(wide[critic] @ np.concatenate([x_new, extra]),
                               arrays[critic] @ np.concatenate([x_old, extra]), rtol=1e-5)
    assert wide[actor].dtype == wide[critic].dtype == np.float32
    assert wide["action_net.weight"] is arrays["action_net.weight"]
    assert wide[critic].shape == (4, new + 3)


@pytest.mark.parametrize("version", [0, 1])
def test_a_deal_policy_widened_to_a_match_reads_the_deal_where_the_match_shows_it(version):
    meta = widenable_meta(deals=1, version=version)
    arrays = arrays_of(meta, critic_extra=0)
    wide_meta, wide = widen_to_layout(meta, arrays, version, num_deals=4)
    size = Layout.of(2, 4, version).size
    assert (wide_meta["num_deals"], wide_meta["layout_size"], wide_meta["layout_version"]) \
        == (4, size, version)
    match_obs = np.random.default_rng(2).normal(size=size)
    deal_obs = match_obs[deal_view_indices(2, 4, version)]
    actor = "mlp_extractor.policy_net.0.weight"
    np.testing.assert_allclose(wide[actor] @ match_obs, arrays[actor] @ deal_obs, rtol=1e-5)
    same_meta, same = widen_to_layout(meta, arrays, version)  # nothing to widen
    assert same_meta == meta
    np.testing.assert_array_equal(same[actor], arrays[actor])


@pytest.mark.parametrize("deals, version, to_deals, to_version", [(1, 0, 4, 1), (4, 0, 8, 0)])
def test_widening_a_match_and_a_layout_at_once_is_refused_and_named(deals, version,
                                                                    to_deals, to_version):
    meta = widenable_meta(deals=deals, version=version)
    with pytest.raises(CheckpointError) as err:
        widen_to_layout(meta, arrays_of(meta), to_version, num_deals=to_deals)
    assert str(err.value) == (
        "init_policy policy: init_widen widens a single-deal policy to a match of its own "
        "layout version, or a policy to a later layout version for its own table, not both "
        f"at once (it has layout version {version} and {deals} deal(s); the run has "
        f"{to_version} and {to_deals})")


def test_the_skip_warning_points_at_the_callers_line(tmp_path):
    save(tmp_path, 10)
    (save(tmp_path, 20) / "league.pt").unlink()
    with pytest.warns(SkippedCheckpointWarning) as caught:
        find_checkpoint(tmp_path / "run", 2, 1)
    assert caught[0].filename == __file__


# ---------------------------------------------------------------------- faults and locales
def test_a_folder_that_cannot_be_removed_never_fails_a_save_nor_hides_its_error(
        tmp_path, monkeypatch):
    """A checkpoint folder the file system will not remove (a busy NFS file, say) is left
    behind: pruning an old one does not fail the save, and clearing up after a failed save
    does not replace the save's own error with the clean-up's."""
    save(tmp_path, 10)
    save(tmp_path, 20)
    rmdir = os.rmdir

    def stuck(path, *args, **kwargs):
        if Path(path).name.startswith(("step_", ".tmp-")):
            raise OSError("device or resource busy")
        return rmdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "rmdir", stuck)
    save(tmp_path, 30)  # step_10 cannot go: it stays, the save succeeds
    assert "step_000000000030" in names(tmp_path)
    with pytest.raises(RuntimeError, match="disk full"):
        save_checkpoint(tmp_path / "run", model(40, broken=True), League("y"),
                        config(tmp_path), {})


def test_the_files_are_utf8_whatever_the_locale(tmp_path, ascii_locale):
    from train.common.checkpoint import atomic_write_text

    atomic_write_text(tmp_path / "config.yaml", "name: dört yedi\n")
    assert (tmp_path / "config.yaml").read_bytes() == "name: dört yedi\n".encode()
    path = save(tmp_path, 10)
    state = json.loads((path / "state.json").read_text(encoding="utf-8"))
    (path / "state.json").write_text(json.dumps(dict(state, note="pis yedili: ç"),
                                                ensure_ascii=False), encoding="utf-8")
    assert read_state(path, 2, 1)["note"] == "pis yedili: ç"
    save(tmp_path, 20)
    (tmp_path / "run" / CHECKPOINTS / LATEST).write_text("step_ç\n", encoding="utf-8")
    with pytest.warns(SkippedCheckpointWarning, match="it names 'step_ç'"):
        find_checkpoint(tmp_path / "run", 2, 1)
