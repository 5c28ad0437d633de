"""Weights-only files that are verified when they are read.

Policies (``.pt`` exports), checkpoints and the training league are stored as plain
dicts of tensors, strings and numbers: ``torch.load(..., weights_only=True)`` reads them
without running code. That blocks code, not damage: a flipped byte inside a tensor loads
without complaint and the policy plays on with wrong weights. So every such file holds a
``"sha256"`` entry, the SHA-256 of everything else in it (``payload_digest``: each key,
string, number and tensor's dtype, shape and bytes, in key order), written by
``save_weights_file`` and compared by ``load_weights_file``. A mismatch is a
``WeightsFileError`` naming the file; a file written before digests existed loads with a
warning that it cannot be verified.

Files are written atomically (a temporary file renamed into place) with ordinary
permissions (``0644`` under the usual umask), not ``tempfile``'s private ``0600``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

DIGEST_KEY = "sha256"


class WeightsFileError(ValueError):
    """A weights file that is unreadable, damaged, or fails its digest."""


class WeightsFileNotFoundError(WeightsFileError, FileNotFoundError):
    """A weights file that does not exist: said as such (``PATH: not found``), never as
    damage, and caught by ``except FileNotFoundError`` as well as by
    ``except WeightsFileError``."""


class UnverifiedFileWarning(UserWarning):
    """A weights file written before digests: loaded, but its integrity is unknown."""


def payload_digest(payload: Any) -> str:
    """SHA-256 of a nested structure of dicts, lists, strings, numbers and tensors."""
    h = hashlib.sha256()
    _feed(h, payload)
    return h.hexdigest()


def _feed(h, obj: Any) -> None:
    if isinstance(obj, dict):
        h.update(b"d%d;" % len(obj))
        for key in sorted(obj, key=str):
            _feed(h, str(key))
            _feed(h, obj[key])
    elif isinstance(obj, (list, tuple)):
        h.update(b"l%d;" % len(obj))
        for item in obj:
            _feed(h, item)
    elif isinstance(obj, str):
        data = obj.encode("utf-8")
        h.update(b"s%d;" % len(data) + data)
    elif obj is None or isinstance(obj, (bool, int, float)):
        h.update(b"v" + repr(obj).encode("ascii") + b";")
    else:
        array = _as_array(obj)
        h.update(f"t{array.dtype.str}{array.shape};".encode("ascii"))
        h.update(np.ascontiguousarray(array).tobytes())


def _as_array(obj: Any) -> np.ndarray:
    if hasattr(obj, "detach"):  # a torch tensor
        return obj.detach().cpu().numpy()
    if isinstance(obj, (np.ndarray, np.generic)):
        return np.asarray(obj)
    raise TypeError(f"cannot digest a {type(obj).__name__}")


def save_weights_file(payload: dict, path: str | Path) -> Path:
    """``torch.save`` of ``payload`` plus its digest, atomically, mode 0644."""
    import torch

    if DIGEST_KEY in payload:
        raise ValueError(f"the payload may not hold a {DIGEST_KEY!r} entry of its own")
    data = dict(payload, **{DIGEST_KEY: payload_digest(payload)})
    return write_atomically(path, lambda tmp: torch.save(data, tmp))


def write_atomically(path: str | Path, write: Callable[[str], object],
                     suffix: str = ".tmp") -> Path:
    """``write(tmp)`` fills a temporary file beside ``path`` (named with ``suffix``),
    which then gets ordinary permissions (0666 minus the umask, where ``tempfile`` gives
    0600) and is renamed into place: an interruption leaves the old file or none, never
    half a file. The temporary file is removed on any error."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=suffix)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def read_weights(source, name: str | Path | None = None) -> Any:
    """``torch.load(source, weights_only=True)`` on the CPU: the one place the project
    reads torch weights, so that every reader says the same thing about a bad file.

    ``source`` is a path or a file object; ``name`` names it in errors (default:
    ``source``). A path that does not exist is a ``WeightsFileNotFoundError`` ("not
    found"); anything torch cannot read (torch raises many types for a damaged file) is
    a ``WeightsFileError`` ("corrupt or unreadable"). No code in the file is run."""
    try:
        import torch
    except ImportError as e:  # pragma: no cover - torch is in the [train] extra
        raise ImportError("reading weights needs torch: pip install 'pis-yedili[train]'") \
            from e

    name = str(name if name is not None else source)
    try:
        return torch.load(source, map_location="cpu", weights_only=True)
    except FileNotFoundError as e:
        raise WeightsFileNotFoundError(f"{name}: not found (no such file)") from e
    except Exception as e:
        raise WeightsFileError(
            f"{name}: corrupt or unreadable weights ({type(e).__name__}: {e})"
        ) from e


def load_weights_file(source, name: str | Path | None = None) -> dict:
    """The payload of a weights file (path or file object), its digest checked.

    ``name`` names the file in errors (default: ``source``). Raises
    ``WeightsFileNotFoundError`` for a missing file, ``WeightsFileError`` for an
    unreadable file or a digest mismatch; warns (``UnverifiedFileWarning``) for a file
    without a digest."""
    name = str(name if name is not None else source)
    data = read_weights(source, name)
    if not isinstance(data, dict):
        raise WeightsFileError(f"{name}: not a weights file (a {type(data).__name__})")
    stored = data.pop(DIGEST_KEY, None)
    if stored is None:
        warnings.warn(f"{name} holds no SHA-256 digest (written by an older version): its "
                      "integrity cannot be verified; re-export it to add one",
                      UnverifiedFileWarning, stacklevel=2)
        return data
    try:
        actual = payload_digest(data)
    except TypeError as e:
        raise WeightsFileError(f"{name}: unexpected content ({e})") from e
    if actual != stored:
        raise WeightsFileError(
            f"{name} is damaged: its content does not match the SHA-256 stored in it "
            f"({str(stored)[:12]}… expected, {actual[:12]}… found)"
        )
    return data


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
