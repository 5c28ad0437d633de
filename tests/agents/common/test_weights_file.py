"""The one torch weights reader (``agents.common.weights_file.read_weights``): a missing file is
"not found", a damaged one "corrupt or unreadable", whichever reader asks (a belief
model, a policy export, an SB3 archive's members)."""

from __future__ import annotations

import io
import zipfile

import pytest

import agents
from agents.common.weights_file import (
    WeightsFileError,
    WeightsFileNotFoundError,
    load_weights_file,
    read_weights,
    save_weights_file,
)
from agents.ppo import META_NAME, PolicyLoadError, read_policy


def test_a_missing_file_is_not_found_naming_the_path(tmp_path):
    path = tmp_path / "belief_2p.pt"
    for reader in (read_weights, load_weights_file):
        with pytest.raises(WeightsFileNotFoundError) as e:
            reader(path)
        assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, WeightsFileError)
        assert str(path) in str(e.value) and "not found" in str(e.value)
        assert "corrupt" not in str(e.value)


def test_a_damaged_file_is_corrupt_not_missing(tmp_path):
    path = tmp_path / "w.pt"
    save_weights_file({"x": 1}, path)
    path.write_bytes(path.read_bytes()[:40])  # truncated
    with pytest.raises(WeightsFileError, match="corrupt or unreadable") as e:
        load_weights_file(path)
    assert not isinstance(e.value, FileNotFoundError) and str(path) in str(e.value)
    with pytest.raises(WeightsFileError, match="archive.zip:policy.pth: corrupt or unreadable"):
        read_weights(io.BytesIO(b"not torch"), "archive.zip:policy.pth")


def test_the_search_bot_says_its_missing_belief_model_is_not_found(tmp_path):
    """What an installed wheel without its models said as 'corrupt or unreadable'."""
    missing = tmp_path / "models" / "belief_2p.pt"
    with pytest.raises(FileNotFoundError, match=r"belief_2p\.pt: not found"):
        agents.make("search", num_players=2, determinize="belief", belief_path=str(missing))
    with pytest.raises(ValueError, match="belief_path"):  # the default mode does not read it
        agents.make("search", num_players=2, belief_path=str(missing))


def test_policy_readers_keep_the_two_messages_apart(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        read_policy(tmp_path / "nowhere.pt")
    damaged = tmp_path / "policy.pt"
    damaged.write_bytes(b"\x00" * 64)
    with pytest.raises(PolicyLoadError, match="corrupt or unreadable"):
        read_policy(damaged)
    archive = tmp_path / "policy.zip"  # an SB3 archive whose policy.pth is damaged
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(META_NAME, "{}")
        z.writestr("policy.pth", b"garbage")
    with pytest.raises(PolicyLoadError, match="policy.zip: corrupt or unreadable"):
        read_policy(archive)
