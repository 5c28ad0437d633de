"""The shipped SB3 archives still load with SB3 itself: their pickled ``data`` names the
policy class by its import path (``train.policy.PrivilegedCriticPolicy``), which must stay
importable wherever the code moves."""

from __future__ import annotations

import base64
import json
import pickletools
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARCHIVES = sorted((ROOT / "models").glob("*.zip"))


def pickled_class_path(archive: Path) -> str:
    """``module.Class`` of the policy class as the archive pickled it (read by
    disassembling the pickle, not by running it)."""
    with zipfile.ZipFile(archive) as z:
        raw = base64.b64decode(json.loads(z.read("data"))["policy_class"][":serialized:"])
    strings = [arg for op, arg, _ in pickletools.genops(raw)
               if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE")]
    return ".".join(strings[:2])


def test_the_archives_pickle_the_policy_at_train_policy():
    assert len(ARCHIVES) >= 4
    assert {pickled_class_path(a) for a in ARCHIVES} == {"train.policy.PrivilegedCriticPolicy"}


def test_a_shipped_archive_loads_with_sb3():
    """One load (they all pickle the same path, above): SB3 unpickles the class there."""
    from sb3_contrib import MaskablePPO

    import train.policy

    # our own file: unpickling it is trusted
    model = MaskablePPO.load(ROOT / "models" / "ppo_2p.zip", device="cpu")
    assert type(model.policy) is train.policy.PrivilegedCriticPolicy
    assert model.policy.action_space.n == 58
