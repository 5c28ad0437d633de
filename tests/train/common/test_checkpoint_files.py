"""The files a run starts from and resumes from, read without training: ``init_policy``
(``read_initial_policy``: every refusal word for word, the widening it asks for and the
one it does not), an older run's SB3 ``model.zip`` checkpoint (read weights-only), and
the policy file inside a checkpoint directory. Each file is built here from a toy
network, so what is checked is the reader, not a shipped model."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.common.weights_file import save_weights_file
from agents.ppo import META_NAME, POLICY_FORMAT, make_metadata
from pis_env.observation import Layout
from tests.train.sb3.test_train import TINY
from train.common.checkpoint import (
    STATE_FORMAT,
    CheckpointError,
    IncompatibleCheckpointError,
    export_weights,
    load_checkpoint,
    policy_file_of,
    read_initial_policy,
)
from train.sb3 import config as C

#: agents.ppo's refusal of a layout-0 network at a layout-1 table.
LAYOUT_0_AT_1 = ("built for observation layout version 0 (pis_yedili_v0), but the table "
                 "shows layout version 1 (pis_yedili_v1): seat it at a pis_yedili_v0 table, "
                 "or use a bot built for pis_yedili_v1")
NORM = {"mean": [0.0], "var": [1.0], "clip_obs": 10.0, "epsilon": 1e-8}


def config(tmp_path: Path, *extra: str) -> dict:
    """A run's config, read the way train/ppo.py reads it: one hidden layer of 6."""
    return C.build(None, [*TINY, f"run_dir={tmp_path / 'run'}", "policy.net_arch=[6]",
                          "policy.activation=tanh", "policy.features=[obs,mask]",
                          "policy.privileged_critic=false", "policy.normalize_obs=false",
                          *extra])


def policy_file(path: Path, players: int = 2, deals: int = 1, version: int = 0,
                features=("obs", "mask"), activation: str = "tanh", arch=(6,),
                obs_norm: dict | None = None, critic_extra: int | None = 0,
                seed: int = 0) -> tuple[Path, dict, dict]:
    """A policy file as train/ppo.py exports it, with random weights. ``critic_extra``:
    the critic's inputs beyond the actor's (a privileged critic reads more); None: no
    critic weights at all."""
    meta = make_metadata(rules={"num_players": players, "num_deals": deals},
                         net_arch={"pi": list(arch), "vf": list(arch)}, activation=activation,
                         features=list(features), obs_norm=obs_norm, layout_version=version)
    rng = np.random.default_rng(seed)
    size = meta["input_size"]
    arrays = {"mlp_extractor.policy_net.0.weight": rng.normal(size=(arch[0], size)),
              "mlp_extractor.policy_net.0.bias": rng.normal(size=arch[0])}
    if critic_extra is not None:
        arrays["mlp_extractor.value_net.0.weight"] = rng.normal(
            size=(arch[0], size + critic_extra))
    arrays = {k: v.astype(np.float32) for k, v in arrays.items()}
    export_weights({k: torch.as_tensor(v) for k, v in arrays.items()}, meta, path)
    return path, meta, arrays


# ---------------------------------------------------------------------- init_policy
def test_a_policy_that_fits_is_read_as_tensors_with_its_normalisation(tmp_path):
    path, _, arrays = policy_file(tmp_path / "p.pt", obs_norm=NORM)
    state, norm = read_initial_policy(str(path), config(tmp_path, "policy.normalize_obs=true"))
    assert norm == NORM
    assert set(state) == set(arrays)
    for key, value in arrays.items():
        assert isinstance(state[key], torch.Tensor)
        np.testing.assert_array_equal(state[key].numpy(), value)
    state, norm = read_initial_policy(str(policy_file(tmp_path / "q.pt")[0]),
                                      config(tmp_path))
    assert norm is None


def test_init_widen_widens_only_what_needs_it(tmp_path):
    """At the file's own layout and table ``init_widen`` changes nothing: a normalised
    policy (which cannot be widened) still loads, its weights as saved."""
    path, _, arrays = policy_file(tmp_path / "p.pt", obs_norm=NORM)
    state, norm = read_initial_policy(str(path), config(
        tmp_path, "policy.normalize_obs=true", "init_widen=true"))
    assert norm == NORM
    for key, value in arrays.items():
        np.testing.assert_array_equal(state[key].numpy(), value)


def test_a_v0_policy_is_widened_to_layout_1_only_when_asked(tmp_path):
    path, _, arrays = policy_file(tmp_path / "p.pt")
    old, new = Layout.of(2, 1, 0).size, Layout.of(2, 1, 1).size
    with pytest.raises(CheckpointError) as err:
        read_initial_policy(str(path), config(tmp_path, "env_version=1"))
    assert str(err.value) == (
        f"init_policy: {path}: {LAYOUT_0_AT_1}; init_widen=true starts from it with zero "
        "weights on the columns the run's layout adds")
    state, _ = read_initial_policy(str(path), config(tmp_path, "env_version=1",
                                                     "init_widen=true"))
    wide, narrow = (state["mlp_extractor.policy_net.0.weight"].numpy(),
                    arrays["mlp_extractor.policy_net.0.weight"])
    assert wide.shape == (6, new + narrow.shape[1] - old)
    np.testing.assert_array_equal(wide[:, :old], narrow[:, :old])
    np.testing.assert_array_equal(wide[:, new:], narrow[:, old:])
    assert not wide[:, old:new].any()


def test_a_policy_of_another_table_is_refused_without_the_widening_hint(tmp_path):
    path = policy_file(tmp_path / "p.pt", players=4)[0]
    size4, size2 = Layout.of(4, 1, 0).size, Layout.of(2, 4, 0).size
    expected = (f"init_policy: {path} was trained for 4 players and 1 deal(s) (observation "
                f"size {size4}); this table has 2 players and 4 deal(s) (observation size "
                f"{size2})")
    for extra in ([], ["init_widen=true"]):
        with pytest.raises(CheckpointError) as err:
            read_initial_policy(str(path), config(tmp_path, "rules.num_deals=4", *extra))
        assert str(err.value) == expected


def test_a_widened_start_still_needs_its_own_table(tmp_path):
    """``init_widen`` on a v0 policy of another table: the table's refusal, no hint (the
    run already asks for the widening)."""
    path = policy_file(tmp_path / "p.pt", players=4)[0]
    with pytest.raises(CheckpointError) as err:
        read_initial_policy(str(path), config(tmp_path, "env_version=1", "init_widen=true"))
    assert str(err.value) == (
        f"init_policy: {path} was trained for 4 players and 1 deal(s) (observation size "
        f"{Layout.of(4, 1, 0).size}); this table has 2 players and 1 deal(s) (observation "
        f"size {Layout.of(2, 1, 0).size})")


def test_a_missing_file_is_named_without_a_hint(tmp_path):
    with pytest.raises(CheckpointError, match=r"^init_policy: policy file not found: "
                       r".*nothing\.pt \(shipped policies: [^;]*\)$"):
        read_initial_policy(str(tmp_path / "nothing.pt"), config(tmp_path))


def test_a_normalised_policy_cannot_be_widened_and_the_file_is_named(tmp_path):
    path = policy_file(tmp_path / "p.pt", obs_norm=NORM)[0]
    with pytest.raises(CheckpointError) as err:
        read_initial_policy(str(path), config(tmp_path, "env_version=1", "init_widen=true",
                                              "policy.normalize_obs=true"))
    assert str(err.value) == (f"init_policy {path}: init_widen needs a policy whose input "
                              "starts with the observation and is not normalised")


@pytest.mark.parametrize("file_kwargs, override, message", [
    ({"features": ("obs",)}, [],
     "its features is ['obs'], the config's policy.features is ['obs', 'mask']"),
    ({"activation": "relu"}, [],
     "its activation is 'relu', the config's policy.activation is 'tanh'"),
    ({"arch": (5,)}, [],
     "its net_arch is {'pi': [5], 'vf': [5]}, the config's policy.net_arch is "
     "{'pi': [6], 'vf': [6]}"),
    ({"critic_extra": 0}, ["policy.privileged_critic=true"],
     "its critic does not see the hidden cards, policy.privileged_critic is True"),
    ({"critic_extra": 58}, [],
     "its critic sees the hidden cards, policy.privileged_critic is False"),
    ({"obs_norm": NORM}, [],
     "it normalises its input and policy.normalize_obs is false"),
    ({}, ["policy.normalize_obs=true"],
     "policy.normalize_obs is true and it was trained without input normalisation"),
])
def test_each_network_the_config_does_not_describe_is_named(tmp_path, file_kwargs, override,
                                                            message):
    path = policy_file(tmp_path / "p.pt", **file_kwargs)[0]
    with pytest.raises(CheckpointError) as err:
        read_initial_policy(str(path), config(tmp_path, *override))
    assert str(err.value) == f"init_policy {path}: {message}"


@pytest.mark.parametrize("critic_extra, privileged", [(0, "false"), (58, "true"),
                                                      (None, "true"), (None, "false")])
def test_a_critic_that_matches_the_config_or_none_at_all_is_accepted(tmp_path, critic_extra,
                                                                     privileged):
    path = policy_file(tmp_path / "p.pt", critic_extra=critic_extra)[0]
    state, _ = read_initial_policy(str(path), config(
        tmp_path, f"policy.privileged_critic={privileged}"))
    assert ("mlp_extractor.value_net.0.weight" in state) == (critic_extra is not None)


# ---------------------------------------------------------------------- older checkpoints
def meta_of(players: int = 2, deals: int = 1) -> dict:
    return make_metadata(rules={"num_players": players, "num_deals": deals},
                         net_arch={"pi": [6], "vf": [6]}, activation="tanh",
                         features=["obs", "mask"], layout_version=0)


def old_checkpoint(directory: Path, members: dict | None = None, meta: dict | None = None,
                   state_layout: int = 0) -> tuple[Path, dict, dict]:
    """A checkpoint directory of the format before digests: an SB3 ``model.zip`` (its
    metadata member and the two ``.pth`` weights), ``league.pt`` and ``state.json``."""
    directory.mkdir(parents=True)
    policy = {"w": torch.arange(6.0).reshape(2, 3)}
    optimizer = {"state": {}, "param_groups": [{"lr": 0.25, "params": [0]}]}
    meta = meta or meta_of()

    def pth(obj) -> bytes:
        buffer = io.BytesIO()
        torch.save(obj, buffer)
        return buffer.getvalue()

    content = {META_NAME: json.dumps(meta).encode(), "policy.pth": pth(policy),
               "policy.optimizer.pth": pth(optimizer), "data": b"not json: never read"}
    content.update(members or {})
    with zipfile.ZipFile(directory / "model.zip", "w") as archive:
        for name, raw in content.items():
            if raw is not None:
                archive.writestr(name, raw)
    save_weights_file({"pool": []}, directory / "league.pt")
    (directory / "state.json").write_text(json.dumps({
        "format": STATE_FORMAT, "layout_version": state_layout,
        "layout_size": Layout.of(2, 1, state_layout).size, "num_timesteps": 64}))
    return directory, policy, optimizer


def test_an_older_checkpoint_resumes_from_its_archives_weights(tmp_path):
    path, policy, optimizer = old_checkpoint(tmp_path / "step_1")
    ckpt = load_checkpoint(path, 2, 1)
    assert ckpt.path == path and ckpt.state["num_timesteps"] == 64
    assert ckpt.league == {"pool": []}
    torch.testing.assert_close(ckpt.policy["w"], policy["w"])
    assert ckpt.optimizer == optimizer
    assert policy_file_of(path) == path / "model.zip"


@pytest.mark.parametrize("missing", [META_NAME, "policy.pth", "policy.optimizer.pth"])
def test_an_archive_without_a_member_is_corrupt_and_named(tmp_path, missing):
    path = old_checkpoint(tmp_path / "step_1", {missing: None})[0]
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path, 2, 1)
    assert str(err.value) == (f"checkpoint {path}: corrupt model.zip (\"There is no item "
                              f"named '{missing}' in the archive\")")


def test_an_archive_with_unreadable_weights_is_corrupt_and_named(tmp_path):
    path = old_checkpoint(tmp_path / "step_1", {"policy.optimizer.pth": b"garbage"})[0]
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path, 2, 1)
    assert str(err.value).startswith(f"checkpoint {path}: corrupt model.zip ({path}/model.zip"
                                     ":policy.optimizer.pth")


def test_an_archive_of_another_layout_is_incompatible_and_named(tmp_path):
    """``state.json`` says layout 1 (the run's) and the archive's policy layout 0."""
    path = old_checkpoint(tmp_path / "step_1", state_layout=1)[0]
    with pytest.raises(IncompatibleCheckpointError) as err:
        load_checkpoint(path, 2, 1, layout_version=1)
    assert str(err.value) == (f"checkpoint {path}: incompatible policy ({path}/model.zip: "
                              f"{LAYOUT_0_AT_1})")


def test_the_policy_file_of_a_checkpoint_is_its_export_when_it_has_one(tmp_path):
    path = tmp_path / "step_2"
    path.mkdir()
    assert policy_file_of(str(path)) == path / "model.zip"
    (path / "policy.pt").write_bytes(b"")
    assert policy_file_of(str(path)) == path / "policy.pt"


def test_a_checkpoint_with_both_files_resumes_from_its_export(tmp_path):
    """The export (``policy.pt``, digest-checked) wins over a leftover ``model.zip``; a
    directory with neither is incomplete, named by the export it lacks."""
    path = old_checkpoint(tmp_path / "step_1")[0]
    export_weights({"w": torch.ones(2)}, meta_of(), path / "policy.pt")
    save_weights_file({"optimizer": {"state": {}, "param_groups": []}}, path / "optimizer.pt")
    ckpt = load_checkpoint(path, 2, 1)
    torch.testing.assert_close(ckpt.policy["w"], torch.ones(2))
    assert ckpt.optimizer == {"state": {}, "param_groups": []}
    (path / "model.zip").unlink()
    (path / "policy.pt").unlink()
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path, 2, 1)
    assert str(err.value) == f"checkpoint {path} is incomplete: policy.pt is missing"


def test_an_archive_whose_metadata_is_not_a_policy_is_incompatible_and_named(tmp_path):
    path = old_checkpoint(tmp_path / "step_1", meta={"format": "something else"})[0]
    with pytest.raises(IncompatibleCheckpointError) as err:
        load_checkpoint(path, 2, 1)
    assert str(err.value) == (f"checkpoint {path}: incompatible policy ({path}/model.zip: "
                              f"not a pis-yedili PPO policy (no {POLICY_FORMAT} metadata))")


def test_a_single_deal_policy_is_widened_to_a_match_only_when_asked(tmp_path):
    path, _, arrays = policy_file(tmp_path / "p.pt")
    with pytest.raises(CheckpointError) as err:
        read_initial_policy(str(path), config(tmp_path, "rules.num_deals=4"))
    assert str(err.value).startswith(f"init_policy: {path} was trained on single deals")
    assert str(err.value).endswith("; init_widen=true starts from it with zero weights on "
                                   "the columns the run's layout adds")
    state, _ = read_initial_policy(str(path), config(tmp_path, "rules.num_deals=4",
                                                     "init_widen=true"))
    wide = state["mlp_extractor.policy_net.0.weight"].numpy()
    narrow = arrays["mlp_extractor.policy_net.0.weight"]
    old, new = Layout.of(2, 1, 0).size, Layout.of(2, 4, 0).size
    assert wide.shape == (6, new + narrow.shape[1] - old)
    np.testing.assert_array_equal(wide[:, new:], narrow[:, old:])


def test_a_match_policy_at_its_own_match_length_is_not_widened(tmp_path):
    path, _, arrays = policy_file(tmp_path / "p.pt", deals=4, obs_norm=NORM)
    state, _ = read_initial_policy(str(path), config(
        tmp_path, "rules.num_deals=4", "init_widen=true", "policy.normalize_obs=true"))
    for key, value in arrays.items():
        np.testing.assert_array_equal(state[key].numpy(), value)


def checkpoint(directory: Path, meta: dict | str, optimizer=None, deals: int = 1,
               state_layout: int = 0) -> Path:
    """A checkpoint directory as ``save_checkpoint`` writes it, from the parts given."""
    directory.mkdir(parents=True)
    save_weights_file({"format": POLICY_FORMAT, "meta": meta if isinstance(meta, str)
                       else json.dumps(meta), "state_dict": {"w": torch.ones(2)}},
                      directory / "policy.pt")
    save_weights_file({"optimizer": {"state": {}} if optimizer is None else optimizer},
                      directory / "optimizer.pt")
    save_weights_file({"pool": []}, directory / "league.pt")
    (directory / "state.json").write_text(json.dumps({
        "format": STATE_FORMAT, "layout_version": state_layout,
        "layout_size": Layout.of(2, deals, state_layout).size}))
    return directory


def test_a_match_checkpoint_resumes_at_its_match_length(tmp_path):
    path = checkpoint(tmp_path / "step_1", meta_of(deals=4), deals=4)
    assert load_checkpoint(path, 2, 4).optimizer == {"state": {}}


def test_each_damaged_or_foreign_checkpoint_member_is_named(tmp_path):
    path = checkpoint(tmp_path / "a", "{")
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path, 2, 1)
    assert str(err.value) == (f"checkpoint {path}: corrupt policy.pt (Expecting property "
                              "name enclosed in double quotes: line 1 column 2 (char 1))")
    path = checkpoint(tmp_path / "b", meta_of(players=4))
    with pytest.raises(IncompatibleCheckpointError) as err:
        load_checkpoint(path, 2, 1)
    assert str(err.value) == (
        f"checkpoint {path}: incompatible policy ({path}/policy.pt was trained for 4 players "
        f"and 1 deal(s) (observation size {Layout.of(4, 1, 0).size}); this table has 2 "
        f"players and 1 deal(s) (observation size {Layout.of(2, 1, 0).size}))")
    path = checkpoint(tmp_path / "c", meta_of(), state_layout=1)
    with pytest.raises(IncompatibleCheckpointError) as err:
        load_checkpoint(path, 2, 1, layout_version=1)
    assert str(err.value) == (f"checkpoint {path}: incompatible policy ({path}/policy.pt: "
                              f"{LAYOUT_0_AT_1})")
    path = checkpoint(tmp_path / "d", meta_of(), optimizer=[1, 2])
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path, 2, 1)
    assert str(err.value) == f"checkpoint {path}: the weights are not state dicts"
    path = old_checkpoint(tmp_path / "e")[0]
    (path / "league.pt").unlink()
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path, 2, 1)
    assert str(err.value) == f"checkpoint {path} is incomplete: league.pt is missing"
