"""Checkpoints and saved policies, written atomically.

A run directory holds::

    config.yaml                  the full resolved config
    checkpoints/step_<N>/        model.zip (SB3, with optimizer state and pis_yedili.json),
                                 league.pt (the snapshot pool and results, weights only),
                                 state.json (step counter, layout, rules, wall time, ...)
    checkpoints/latest           the name of the newest complete checkpoint
    policy.zip, policy.pt        the final policy (SB3 archive / weights-only export)
    tb/                          TensorBoard logs

A checkpoint is written into a temporary directory and renamed into place
(``os.replace``); ``latest`` is replaced the same way, so an interruption at any moment
leaves the previous checkpoint intact.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from agents.ppo import (
    FORMAT_VERSION,
    META_NAME,
    POLICY_FORMAT,
    PolicyLoadError,
    check_layout,
    check_metadata,
    make_metadata,
)
from pis_env import LAYOUT_VERSION
from pis_env.observation import Layout

CHECKPOINTS = "checkpoints"
LATEST = "latest"


class CheckpointError(ValueError):
    """A missing, corrupt or incompatible checkpoint."""


def atomic_write_text(path: Path, text: str) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def policy_metadata(cfg: dict, model, obs_norm: dict | None = None, step: int | None = None,
                    **extra) -> dict:
    net_arch = model.policy.net_arch
    if isinstance(net_arch, list):
        net_arch = {"pi": list(net_arch), "vf": list(net_arch)}
    info = {"num_timesteps": int(model.num_timesteps if step is None else step),
            "run_name": cfg.get("name")}
    info.update(extra)
    return make_metadata(
        rules=cfg["rules"],
        net_arch=net_arch,
        activation=cfg["policy"]["activation"],
        features=cfg["policy"]["features"],
        obs_norm=obs_norm,
        extra=info,
    )


def add_metadata(zip_path: Path, meta: dict) -> None:
    with zipfile.ZipFile(zip_path, mode="a") as archive:
        archive.writestr(META_NAME, json.dumps(meta, indent=1))


def save_model_zip(model, path: Path, meta: dict) -> None:
    """``model.save`` plus the metadata member, atomically at ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".zip")
    os.close(fd)
    try:
        model.save(tmp)
        add_metadata(Path(tmp), meta)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def export_weights(state_dict: dict, meta: dict, path: Path) -> None:
    """The weights-only policy file: ``{"format", "meta" (JSON), "state_dict"}``."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "format": POLICY_FORMAT,
        "format_version": FORMAT_VERSION,
        "meta": json.dumps(meta),
        "state_dict": {k: v.detach().cpu().clone() for k, v in state_dict.items()},
    }
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".pt")
    os.close(fd)
    try:
        torch.save(data, tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------------- checkpoints
def save_checkpoint(run_dir: Path, model, league, cfg: dict, state: dict[str, Any],
                    obs_norm: dict | None = None, keep: int = 2) -> Path:
    """Writes ``checkpoints/step_<N>`` and points ``latest`` at it."""
    import torch

    root = Path(run_dir) / CHECKPOINTS
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob(".tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    step = int(model.num_timesteps)
    name = f"step_{step:012d}"
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=".tmp-"))
    try:
        meta = policy_metadata(cfg, model, obs_norm)
        model.save(tmp / "model.zip")
        add_metadata(tmp / "model.zip", meta)
        torch.save(league.state_dict(), tmp / "league.pt")
        full_state = {
            "format": "pis-yedili-ppo-checkpoint",
            "format_version": FORMAT_VERSION,
            "num_timesteps": step,
            "layout_version": LAYOUT_VERSION,
            "layout_size": meta["layout_size"],
            "rules": cfg["rules"],
            "obs_norm": obs_norm,
            **state,
        }
        (tmp / "state.json").write_text(json.dumps(full_state, indent=1), encoding="utf-8")
        final = root / name
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    atomic_write_text(root / LATEST, name + "\n")
    if keep > 0:
        done = sorted(p for p in root.glob("step_*") if p.is_dir())
        for old in done[:-keep]:
            if old.name != name:
                shutil.rmtree(old, ignore_errors=True)
    return root / name


def latest_checkpoint(run_dir: Path) -> Path:
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CheckpointError(f"run directory not found: {run_dir}")
    root = run_dir / CHECKPOINTS
    pointer = root / LATEST
    if pointer.exists():
        path = root / pointer.read_text(encoding="utf-8").strip()
        if path.is_dir():
            return path
    found = sorted(p for p in root.glob("step_*") if p.is_dir()) if root.is_dir() else []
    if not found:
        raise CheckpointError(f"{run_dir} holds no checkpoint (no {CHECKPOINTS}/step_*)")
    return found[-1]


def read_checkpoint(path: Path, num_players: int, num_deals: int) -> dict:
    """Validates a checkpoint directory; returns its ``state.json``."""
    path = Path(path)
    for member in ("model.zip", "league.pt", "state.json"):
        if not (path / member).is_file():
            raise CheckpointError(f"checkpoint {path} is incomplete: {member} is missing")
    try:
        state = json.loads((path / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise CheckpointError(f"checkpoint {path}: corrupt state.json ({e})") from e
    if not isinstance(state, dict) or state.get("format") != "pis-yedili-ppo-checkpoint":
        raise CheckpointError(f"checkpoint {path}: state.json is not a pis-yedili checkpoint")
    if state.get("layout_version") != LAYOUT_VERSION or \
            state.get("layout_size") != Layout.of(num_players, num_deals).size:
        raise CheckpointError(
            f"checkpoint {path} was saved with observation layout version "
            f"{state.get('layout_version')} (size {state.get('layout_size')}); this pis_env "
            f"has layout version {LAYOUT_VERSION} (size {Layout.of(num_players, num_deals).size}"
            f" for {num_players} players): it cannot be resumed"
        )
    try:
        with zipfile.ZipFile(path / "model.zip") as archive:
            meta = json.loads(archive.read(META_NAME).decode("utf-8"))
            bad = archive.testzip()
        if bad is not None:
            raise CheckpointError(f"checkpoint {path}: model.zip is corrupt (member {bad})")
        check_metadata(meta, str(path / "model.zip"))
        check_layout(meta, num_players, num_deals, source=str(path / "model.zip"))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as e:
        if isinstance(e, CheckpointError):
            raise
        kind = "incompatible" if isinstance(e, PolicyLoadError) else "corrupt"
        raise CheckpointError(f"checkpoint {path}: {kind} model.zip ({e})") from e
    return state


def load_league_state(path: Path) -> dict:
    import torch

    try:
        return torch.load(Path(path) / "league.pt", map_location="cpu", weights_only=True)
    except Exception as e:
        raise CheckpointError(f"checkpoint {path}: corrupt league.pt ({e})") from e
