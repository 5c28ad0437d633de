"""Files that ship inside the package: trained policies, belief models and configs.

The repository keeps them where people look for them, ``models/`` (``*.pt`` exports of the
policies, ``belief_*.pt``) and ``configs/`` (run configs, ``configs/rules/*.yaml`` rules
variants). The wheel carries the same files as two data-only packages,
``pis_yedili_models`` and ``pis_yedili_configs`` (``pyproject.toml`` maps the folders onto
them), so they are found with ``importlib.resources`` whether the project is a checkout
installed with ``pip install -e .`` or a wheel in ``site-packages`` — one way, no
repository-root arithmetic.

A name is resolved in this order (``resolve``):

1. a path that exists as given (relative to the working directory, or absolute) wins, so
   your own files and the repository's folders work as before;
2. otherwise, a shipped file of that kind by the name as the docs spell it, the folder
   prefix optional: ``models/ppo_2p.zip``, ``ppo_2p.pt`` or just ``ppo_2p`` for policies,
   ``configs/rules/strict.yaml`` or ``strict`` for rules, ``configs/ppo_4p.yaml`` or
   ``ppo_4p`` for run configs. The wheel holds the policies' weights-only ``.pt`` exports
   only (they play exactly as the SB3 ``.zip`` archives, at a quarter of the size), so a
   ``.zip`` name that is not shipped resolves to its ``.pt``;
3. otherwise the path as given, unchanged: the caller reports it as *not found*.

This module imports nothing outside the standard library (``pis_env`` stays light).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Literal

#: What a shipped file is: a policy or belief model, a run config, a rules variant.
Kind = Literal["model", "config", "rules"]

#: The data-only package of each kind, the sub-folder inside it, the repository folder the
#: docs name (an optional prefix of a shipped name) and the suffix a bare name gets.
_PLACES: dict[str, tuple[str, str, str, str]] = {
    "model": ("pis_yedili_models", "", "models/", ".pt"),
    "config": ("pis_yedili_configs", "", "configs/", ".yaml"),
    "rules": ("pis_yedili_configs", "rules", "configs/rules/", ".yaml"),
}


def shipped_dir(kind: Kind) -> Path:
    """The directory that holds the shipped files of ``kind``.

    A real directory: pip installs wheels unpacked, and an editable install maps the
    repository's folder (the package cannot be used from a zip file)."""
    package, sub, _, _ = _place(kind)
    root = resources.files(package)
    if not isinstance(root, Path):  # pragma: no cover - only a zipped install does this
        raise RuntimeError(f"{package} is not installed as files on disk ({root!r}); "
                           "install pis-yedili with pip (a wheel or pip install -e .)")
    return root / sub if sub else root


def shipped_names(kind: Kind) -> list[str]:
    """The names of the shipped files of ``kind`` without their suffix, sorted
    (``["ppo_2p", "ppo_4p", ...]``): what error messages and ``--help`` list."""
    _, _, _, suffix = _place(kind)
    return sorted(p.stem for p in shipped_dir(kind).glob(f"*{suffix}")
                  if not p.name.startswith("_"))


def resolve(name: str | Path, kind: Kind) -> Path:
    """The file ``name`` refers to (see the module docstring for the order); the path
    as given when neither it nor a shipped file of that name exists."""
    given = Path(name).expanduser()
    if given.exists() or given.is_absolute():
        return given
    shipped = find_shipped(str(name), kind)
    return shipped if shipped is not None else given


def find_shipped(name: str, kind: Kind) -> Path | None:
    """The shipped file of ``kind`` called ``name`` (folder prefix and suffix optional,
    a ``.zip`` policy answered by its ``.pt`` export), or None."""
    _, _, prefix, suffix = _place(kind)
    text = PurePosixPath(name.replace("\\", "/")).as_posix()
    if text.startswith(prefix):
        text = text[len(prefix):]
    if not text or "/" in text or text.startswith("."):
        return None  # a path into some other folder is never a shipped file
    folder = shipped_dir(kind)
    stem, dot, ext = text.rpartition(".")
    candidates = [text] if dot else [text + suffix]
    if kind == "model" and dot and ext == "zip":
        candidates.append(stem + ".pt")
    for candidate in candidates:
        path = folder / candidate
        if path.is_file():
            return path
    return None


def _place(kind: str) -> tuple[str, str, str, str]:
    try:
        return _PLACES[kind]
    except KeyError:
        raise ValueError(f"unknown kind of shipped file {kind!r}; allowed: "
                         f"{', '.join(_PLACES)}") from None
