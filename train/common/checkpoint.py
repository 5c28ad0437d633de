"""Checkpoints and saved policies: weights only, verified, written atomically.

A run directory holds::

    config.yaml                  the full resolved config (overrides given with --resume
                                 are written into it at once)
    checkpoints/step_<N>/        policy.pt (the policy, as ``python -m train.export``
                                 writes it), optimizer.pt (the optimizer's state),
                                 league.pt (the snapshot pool and results),
                                 state.json (step counter, layout, rules, wall time, ...)
    checkpoints/latest           the name of the newest complete checkpoint
    policy.zip, policy.pt        the final policy (SB3 archive / weights-only export)
    tb/                          TensorBoard logs

Nothing in a checkpoint is pickled: the ``.pt`` members are plain dicts of tensors,
strings and numbers read with ``torch.load(weights_only=True)``, each with a SHA-256 of
its content checked on load (``agents.common.weights_file``), so a run directory from elsewhere
cannot run code and a damaged one is refused. Resuming rebuilds the model from the config
and loads these state dicts into it. Checkpoints written before this format (an SB3
``model.zip``) still resume: only the archive's ``policy.pth`` and
``policy.optimizer.pth`` members are read, weights-only; its pickled ``data`` is not.

A checkpoint is written into a temporary directory and renamed into place
(``os.replace``); ``latest`` is replaced the same way, so an interruption at any moment
leaves the previous checkpoint intact. ``find_checkpoint`` resumes from the newest intact
checkpoint and warns about every damaged one it skips.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.common.weights_file import (
    WeightsFileError,
    current_umask,
    load_weights_file,
    read_weights,
    save_weights_file,
    write_atomically,
)
from agents.ppo import (
    FORMAT_VERSION,
    META_NAME,
    POLICY_FORMAT,
    PolicyLoadError,
    check_layout,
    check_metadata,
    input_size_of,
    make_metadata,
)
from pis_env.observation import Layout, deal_view_indices

CHECKPOINTS = "checkpoints"
LATEST = "latest"
STATE_FORMAT = "pis-yedili-ppo-checkpoint"


class CheckpointError(ValueError):
    """A missing, corrupt or incompatible checkpoint."""


class IncompatibleCheckpointError(CheckpointError):
    """An intact checkpoint made for another table or observation layout."""


class SkippedCheckpointWarning(UserWarning):
    """A damaged checkpoint that resuming passed over for an older, intact one."""


def atomic_write_text(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` through a renamed temporary file, mode 0644."""
    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    write_atomically(path, write)


def policy_metadata(cfg: Any, model, obs_norm: dict | None = None, step: int | None = None,
                    **extra) -> dict:
    net_arch = model.policy.net_arch
    if isinstance(net_arch, list):
        net_arch = {"pi": list(net_arch), "vf": list(net_arch)}
    info = {"num_timesteps": int(model.num_timesteps if step is None else step),
            "run_name": cfg.name}
    if cfg.policy.oracle_actor:
        info["oracle_actor"] = True  # its actor reads the hidden cards: agents.ppo refuses it
    info.update(extra)
    return make_metadata(
        rules=cfg.rules,
        net_arch=net_arch,
        activation=cfg.policy.activation,
        features=cfg.policy.features,
        obs_norm=obs_norm,
        extra=info,
        layout_version=layout_version_of(cfg),
    )


def layout_version_of(cfg: Any) -> int:
    """The observation layout a ``train/sb3/run.py`` config trains on: its ``env_version``
    (a saved config from before that key existed resolves to 0)."""
    return int(cfg.env_version)


def add_metadata(zip_path: Path, meta: dict) -> None:
    with zipfile.ZipFile(zip_path, mode="a") as archive:
        archive.writestr(META_NAME, json.dumps(meta, indent=1))


def save_model_zip(model, path: Path, meta: dict) -> None:
    """``model.save`` plus the metadata member, atomically at ``path`` (mode 0644)."""
    def write(tmp: str) -> None:
        model.save(tmp)  # SB3 would append ".zip" to a name without a suffix
        add_metadata(Path(tmp), meta)

    write_atomically(path, write, suffix=".zip")


def export_weights(state_dict: dict, meta: dict, path: Path) -> None:
    """The weights-only policy file: ``{"format", "format_version", "meta" (JSON),
    "state_dict", "sha256"}`` (``agents.make("ppo", path=...)`` reads it)."""
    save_weights_file({
        "format": POLICY_FORMAT,
        "format_version": FORMAT_VERSION,
        "meta": json.dumps(meta),
        "state_dict": {k: v.detach().cpu().clone() for k, v in state_dict.items()},
    }, path)


def widen_to_layout(meta: dict, arrays: dict, version: int, source: str = "policy",
                    num_deals: int | None = None) -> tuple[dict, dict]:
    """A policy of an earlier observation layout as one of layout ``version``, or a policy
    of single deals as one of ``num_deals``-deal matches (the same layout version): the
    first layer of the actor and of the critic keep their weights on the columns the
    policy read and get zero weights on the columns it did not see (a later layout's
    additions after the earlier one, which every later layout begins with unchanged; a
    match's ``deal`` and ``scores`` segments, the deal's own columns found by
    ``pis_env.observation.deal_view_indices``). So the widened network computes exactly
    what the old one did until training moves those weights (Net2Net's function-preserving
    growth, on the input). Why: a v1 network can start from the v0 bots, and a match
    network from the deal-level bot, instead of from scratch."""
    players, deals = int(meta["num_players"]), int(meta["num_deals"])
    num_deals = deals if num_deals is None else int(num_deals)
    old = int(meta["layout_size"])
    new = Layout.of(players, num_deals, version).size
    if list(meta["features"])[:1] != ["obs"] or meta.get("obs_norm"):
        raise CheckpointError(f"init_policy {source}: init_widen needs a policy whose input "
                              "starts with the observation and is not normalised")
    if num_deals == deals:
        columns = np.arange(old)
    elif deals == 1 and int(meta["layout_version"]) == version:
        columns = deal_view_indices(players, num_deals, version)
    else:
        raise CheckpointError(
            f"init_policy {source}: init_widen widens a single-deal policy to a match of "
            "its own layout version, or a policy to a later layout version for its own "
            f"table, not both at once (it has layout version {meta['layout_version']} and "
            f"{deals} deal(s); the run has {version} and {num_deals})")
    out = dict(arrays)
    for key in ("mlp_extractor.policy_net.0.weight", "mlp_extractor.value_net.0.weight"):
        if key in out:
            w = out[key]
            wide = np.zeros((w.shape[0], new + w.shape[1] - old), w.dtype)
            wide[:, columns] = w[:, :old]
            wide[:, new:] = w[:, old:]
            out[key] = wide
    widened = dict(meta, layout_version=version, layout_size=new, num_deals=num_deals,
                   input_size=input_size_of(new, meta["features"]))
    return widened, out


# ---------------------------------------------------------------------- checkpoints
@dataclass
class Checkpoint:
    """A checkpoint read back and verified: everything resuming needs."""

    path: Path
    state: dict            # state.json
    policy: dict           # the policy's state_dict (tensors)
    optimizer: dict        # the optimizer's state_dict
    league: dict           # League.state_dict()


def save_checkpoint(run_dir: Path, model, league, cfg: Any, state: dict[str, Any],
                    obs_norm: dict | None = None, keep: int = 2) -> Path:
    """Writes ``checkpoints/step_<N>`` and points ``latest`` at it."""
    root = Path(run_dir) / CHECKPOINTS
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob(".tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    step = int(model.num_timesteps)
    name = f"step_{step:012d}"
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=".tmp-"))
    try:
        meta = policy_metadata(cfg, model, obs_norm)
        export_weights(model.policy.state_dict(), meta, tmp / "policy.pt")
        save_weights_file({"optimizer": model.policy.optimizer.state_dict()},
                          tmp / "optimizer.pt")
        save_weights_file(league.state_dict(), tmp / "league.pt")
        full_state = {
            "format": STATE_FORMAT,
            "format_version": FORMAT_VERSION,
            "num_timesteps": step,
            "n_updates": int(getattr(model, "_n_updates", 0)),
            "layout_version": meta["layout_version"],  # the policy's, its env's version
            "layout_size": meta["layout_size"],
            "rules": cfg.rules,
            "obs_norm": obs_norm,
            **state,
        }
        atomic_write_text(tmp / "state.json", json.dumps(full_state, indent=1))
        os.chmod(tmp, 0o777 & ~current_umask())
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


def _candidates(run_dir: Path) -> tuple[list[Path], list[str]]:
    """Checkpoint directories, newest first (``latest`` first), and problems found."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CheckpointError(f"run directory not found: {run_dir}")
    root = run_dir / CHECKPOINTS
    found = sorted((p for p in root.glob("step_*") if p.is_dir()), reverse=True) \
        if root.is_dir() else []
    problems = []
    pointer = root / LATEST
    if pointer.exists():
        name = pointer.read_text(encoding="utf-8", errors="replace").strip()
        target = root / name
        if not name or "/" in name or not target.is_dir():
            problems.append(f"{pointer} is corrupt (it names {name!r}, not a checkpoint)")
        else:
            found = [target] + [p for p in found if p != target]
    if not found:
        detail = f" ({problems[0]})" if problems else ""
        raise CheckpointError(f"{run_dir} holds no checkpoint (no {CHECKPOINTS}/step_*)"
                              f"{detail}")
    return found, problems


def latest_checkpoint(run_dir: Path) -> Path:
    """The newest checkpoint directory (``latest``'s, else the highest step)."""
    return _candidates(run_dir)[0][0]


def find_checkpoint(run_dir: Path, num_players: int, num_deals: int,
                    layout_version: int = 0) -> Checkpoint:
    """The newest intact checkpoint of a run at observation layout ``layout_version``,
    each damaged newer one skipped with a ``SkippedCheckpointWarning`` that names it and
    says why; one of another table or layout is an ``IncompatibleCheckpointError``."""
    candidates, problems = _candidates(run_dir)
    for path in candidates:
        try:
            ckpt = load_checkpoint(path, num_players, num_deals, layout_version)
        except IncompatibleCheckpointError:
            raise  # not damaged: an older checkpoint of the same run is no better
        except CheckpointError as e:
            problems.append(str(e))
            continue
        for problem in problems:
            warnings.warn(f"skipped: {problem}; resuming from {path.name}",
                          SkippedCheckpointWarning, stacklevel=2)
        return ckpt
    raise CheckpointError(f"{run_dir}: no intact checkpoint to resume from:\n  "
                          + "\n  ".join(problems))


def load_checkpoint(path: Path, num_players: int, num_deals: int,
                    layout_version: int = 0) -> Checkpoint:
    """Reads and verifies every member of a checkpoint directory (made for this table
    and observation layout)."""
    path = Path(path)
    state = read_state(path, num_players, num_deals, layout_version)
    if (path / "policy.pt").is_file() or not (path / "model.zip").is_file():
        for member in ("policy.pt", "optimizer.pt", "league.pt"):
            if not (path / member).is_file():
                raise CheckpointError(f"checkpoint {path} is incomplete: {member} is missing")
        policy_file = _verified(path / "policy.pt")
        try:
            meta = json.loads(policy_file["meta"])
            policy = policy_file["state_dict"]
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(f"checkpoint {path}: corrupt policy.pt ({e})") from e
        _check_policy_meta(meta, path / "policy.pt", num_players, num_deals, layout_version)
        optimizer = _verified(path / "optimizer.pt").get("optimizer")
    else:
        policy, optimizer = _read_sb3_archive(path / "model.zip", num_players, num_deals,
                                              layout_version)
    if not isinstance(policy, dict) or not isinstance(optimizer, dict):
        raise CheckpointError(f"checkpoint {path}: the weights are not state dicts")
    if not (path / "league.pt").is_file():
        raise CheckpointError(f"checkpoint {path} is incomplete: league.pt is missing")
    return Checkpoint(path, state, policy, optimizer, _verified(path / "league.pt"))


def read_state(path: Path, num_players: int, num_deals: int, layout_version: int = 0) -> dict:
    """A checkpoint's ``state.json``, checked against the table's observation layout
    (``layout_version``: the run's ``env_version``)."""
    path = Path(path)
    if not (path / "state.json").is_file():
        raise CheckpointError(f"checkpoint {path} is incomplete: state.json is missing")
    try:
        state = json.loads((path / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise CheckpointError(f"checkpoint {path}: corrupt state.json ({e})") from e
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise CheckpointError(f"checkpoint {path}: corrupt state.json (not a pis-yedili "
                              "checkpoint)")
    size = Layout.of(num_players, num_deals, layout_version).size
    saved = state.get("layout_version")
    if saved != layout_version or state.get("layout_size") != size:
        raise IncompatibleCheckpointError(
            f"checkpoint {path} was saved at observation layout version {saved!r} "
            f"(pis_yedili_v{saved}, size {state.get('layout_size')}); this run trains at "
            f"layout version {layout_version} (env_version={layout_version}, size {size} "
            f"for {num_players} players): it cannot be resumed (a run keeps its "
            "env_version; train the other layout in a new run directory)"
        )
    return state


def _verified(path: Path) -> dict:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # checkpoints older than digests still resume
            return load_weights_file(path)
    except WeightsFileError as e:
        raise CheckpointError(f"checkpoint {path.parent}: {e}") from e


def _check_policy_meta(meta: Any, source: Path, num_players: int, num_deals: int,
                       layout_version: int) -> None:
    try:
        check_metadata(meta, str(source))
        check_layout(meta, num_players, num_deals, source=str(source),
                     layout_version=layout_version)
    except PolicyLoadError as e:
        raise IncompatibleCheckpointError(
            f"checkpoint {source.parent}: incompatible policy ({e})") from e


def _read_sb3_archive(zip_path: Path, num_players: int, num_deals: int,
                      layout_version: int) -> tuple[dict, dict]:
    """The policy and optimizer state dicts of an older checkpoint's SB3 ``model.zip``,
    read weights-only from its ``.pth`` members (the pickled ``data`` is never read)."""
    try:
        with zipfile.ZipFile(zip_path) as archive:
            meta = json.loads(archive.read(META_NAME).decode("utf-8"))
            raw = {m: archive.read(m) for m in ("policy.pth", "policy.optimizer.pth")}
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as e:
        raise CheckpointError(f"checkpoint {zip_path.parent}: corrupt model.zip ({e})") from e
    _check_policy_meta(meta, zip_path, num_players, num_deals, layout_version)
    try:
        return tuple(read_weights(io.BytesIO(raw[m]), f"{zip_path}:{m}")
                     for m in ("policy.pth", "policy.optimizer.pth"))
    except WeightsFileError as e:
        raise CheckpointError(f"checkpoint {zip_path.parent}: corrupt model.zip ({e})") from e


def policy_file_of(path: Path) -> Path:
    """The policy file inside a checkpoint directory (either format)."""
    path = Path(path)
    return path / "policy.pt" if (path / "policy.pt").is_file() else path / "model.zip"


def read_initial_policy(path: str, cfg: Any) -> tuple[dict, dict | None]:
    """``(state dict of tensors, obs_norm)`` of ``init_policy``: a saved policy of
    ``train/sb3/run.py`` (``.zip`` or ``.pt``, read weights-only) for the config's table,
    observation layout (``env_version``), input features and activation, or with
    ``init_widen`` one of an earlier layout, widened (``widen_to_layout``). Anything else
    is a ``CheckpointError`` naming the file."""
    import torch

    from agents.ppo import read_policy

    rules, policy = cfg.rules, cfg.policy
    version = layout_version_of(cfg)
    widen = False  # known once the file's layout is read
    try:
        meta, arrays = read_policy(path)
        have = meta["layout_version"]
        to_match = (meta["num_deals"] == 1 < rules["num_deals"]
                    and meta["num_players"] == rules["num_players"])
        widen = (have in (0, 1) and have < version) or to_match
        own = widen and cfg.init_widen
        check_layout(meta, rules["num_players"], 1 if own and to_match else rules["num_deals"],
                     source=str(path), layout_version=have if own else version)
    except (OSError, PolicyLoadError) as e:
        hint = ("; init_widen=true starts from it with zero weights on the columns the "
                "run's layout adds" if widen and not cfg.init_widen else "")
        raise CheckpointError(f"init_policy: {e}{hint}") from e
    if widen and cfg.init_widen:
        meta, arrays = widen_to_layout(meta, arrays, version, str(path), rules["num_deals"])
    arch = list(policy.net_arch)
    for key, have, want in (("features", meta["features"], list(policy.features)),
                            ("activation", meta["activation"], policy.activation),
                            ("net_arch", meta["net_arch"], {"pi": arch, "vf": arch})):
        if have != want:
            raise CheckpointError(f"init_policy {path}: its {key} is {have!r}, the "
                                  f"config's policy.{key} is {want!r}")
    critic = arrays.get("mlp_extractor.value_net.0.weight")
    if critic is not None and policy.privileged_critic != (critic.shape[1] > meta["input_size"]):
        raise CheckpointError(f"init_policy {path}: its critic "
                              + ("sees" if critic.shape[1] > meta["input_size"] else
                                 "does not see") + " the hidden cards, policy.privileged_critic "
                              f"is {policy.privileged_critic}")
    norm = meta.get("obs_norm")
    if bool(norm) != bool(policy.normalize_obs):
        raise CheckpointError(f"init_policy {path}: "
                              + ("it normalises its input and policy.normalize_obs is false"
                                 if norm else "policy.normalize_obs is true and it was "
                                 "trained without input normalisation"))
    return {k: torch.as_tensor(v) for k, v in arrays.items()}, norm
