"""Command-line input for the tournament and terminal-play CLIs, read into values or one
clear line of error.

A bad rules file or ``--option`` value must end a command with one line that names the
file and line (exit code 2), never a YAML traceback: both CLIs read their rules through
``read_rules`` and their ``KEY=VALUE`` options through ``parse_options``, and turn the
``ValueError`` they raise into ``error_exit``'s message.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def yaml_error_text(error: Exception, source: str) -> str:
    """A PyYAML error as one line: ``source, line L, column C: problem``."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None) or str(error).strip().splitlines()[0]
    where = source if mark is None else f"{source}, line {mark.line + 1}, column {mark.column + 1}"
    return f"{where}: malformed YAML: {problem}"


def parse_options(items: Sequence[str]) -> dict[str, Any]:
    """``["seven_penalty=double", "max_turns=500"]`` -> options (values read as YAML
    scalars with ``yaml.safe_load``); a malformed item or value is a ``ValueError``."""
    import yaml

    options: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--option expects key=value, got {item!r}")
        try:
            options[key.strip()] = yaml.safe_load(value) if value.strip() else None
        except yaml.YAMLError as e:
            raise ValueError(yaml_error_text(e, f"--option {item}")) from None
    return options


def read_rules(path: str | Path, **overrides: Any):
    """``Rules.from_yaml(path, **overrides)`` with every way a file can be bad (missing,
    unreadable, malformed YAML, bad values) as a one-line ``ValueError`` naming the file."""
    import yaml

    from pis_env import Rules

    try:
        return Rules.from_yaml(path, **overrides)
    except yaml.YAMLError as e:
        raise ValueError(yaml_error_text(e, str(path))) from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not a UTF-8 text file ({e.reason})") from None
    except OSError as e:
        raise ValueError(f"{path}: cannot read the rules file: {e.strerror or e}") from None


def positive_int(text: str) -> int:
    """An argparse ``type`` for counts such as ``--workers``: an int >= 1."""
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an int >= 1, got {text!r}")
    return value


def check_out_dir(path: str | Path, flag: str = "--out") -> Path:
    """Refuse an output folder that cannot be written, before any work is done: ``path``
    must be a writable folder, or be creatable (its nearest existing ancestor a writable
    folder). Nothing is created here."""
    out = Path(path)
    probe = out
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        what = "is" if probe == out else f"cannot be created: {probe} is"
        raise ValueError(f"{flag} {path}: {what} not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        what = "is not writable" if probe == out else f"cannot be created in {probe}"
        raise ValueError(f"{flag} {path}: {what} (permission denied)")
    return out


def program_name(default: str) -> str:
    """The program name a CLI's usage and error lines start with: the installed command
    when run as one (``pis-tournament``, ``pis-train``: ``sys.argv[0]``'s name), else
    ``default``, how the module is run from a checkout (``python -m agents.tournament``)."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return name if name.startswith("pis-") else default


def error_exit(prog: str, message: str) -> int:
    """Print ``prog: error: message`` on one line to stderr (argparse's style) and return
    the exit code of a usage error, 2."""
    text = " ".join(str(message).split())
    print(f"{prog}: error: {text}", file=sys.stderr)
    return 2


__all__ = ["check_out_dir", "error_exit", "parse_options", "positive_int", "program_name",
           "read_rules", "yaml_error_text"]
