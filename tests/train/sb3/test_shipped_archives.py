"""The shipped SB3 archives still load with SB3 itself: their pickled ``data`` names the
policy class by its import path (``train.policy.PrivilegedCriticPolicy`` for the archives
trained before the code moved, ``train.sb3.policy.PrivilegedCriticPolicy`` after), which
must stay importable wherever the code moves."""

from __future__ import annotations

import base64
import json
import pickletools
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
ARCHIVES = sorted((ROOT / "models").glob("*.zip"))


def pickled_class_path(archive: Path) -> str:
    """``module.Class`` of the policy class as the archive pickled it (read by
    disassembling the pickle, not by running it)."""
    with zipfile.ZipFile(archive) as z:
        raw = base64.b64decode(json.loads(z.read("data"))["policy_class"][":serialized:"])
    strings = [arg for op, arg, _ in pickletools.genops(raw)
               if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE")]
    return ".".join(strings[:2])


PATHS = {"train.policy.PrivilegedCriticPolicy", "train.sb3.policy.PrivilegedCriticPolicy"}


def test_the_archives_pickle_the_policy_at_one_of_its_paths():
    assert len(ARCHIVES) >= 4
    assert {pickled_class_path(a) for a in ARCHIVES} <= PATHS
    assert pickled_class_path(ROOT / "models" / "ppo_2p.zip") == "train.policy." \
        "PrivilegedCriticPolicy"


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_shipped_archive_loads_with_sb3(path):
    """One load per pickled path (above): SB3 unpickles the class there."""
    import importlib

    from sb3_contrib import MaskablePPO

    module, name = path.rsplit(".", 1)
    archive = next((a for a in ARCHIVES if pickled_class_path(a) == path), None)
    if archive is None:
        pytest.fail(f"no shipped archive pickles {path}: drop it from PATHS")
    # our own file: unpickling it is trusted
    model = MaskablePPO.load(archive, device="cpu")
    assert type(model.policy) is getattr(importlib.import_module(module), name)
    assert model.policy.action_space.n == 58
