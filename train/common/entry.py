"""What every training entry point's ``main()`` does first: ``--help-config``, ``--resume``
without ``--config``, the config loaded (a ``ConfigError`` ends the command with its
message) and ``--print-config``. Written once so that the commands answer alike.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, NamedTuple

from train.common.schema import ConfigError, Schema, dump

#: What ``--resume`` with ``--config`` says: a run keeps the config it was started with.
RESUME_WITH_CONFIG = "--resume uses the run's saved config: drop --config"


class Start(NamedTuple):
    """The preamble's outcome: ``exit`` is the command's exit code when it is done
    (``--help-config``, ``--print-config``, a bad config), else None and ``cfg`` is the
    resolved config."""

    exit: int | None
    cfg: Any = None


def preamble(parser: argparse.ArgumentParser, args: argparse.Namespace, schema: Schema,
             load: Callable[[], Any], resume_error: str = RESUME_WITH_CONFIG) -> Start:
    """``--help-config`` prints ``schema``'s keys; ``--resume`` (where the command has it)
    with ``--config`` is a usage error (``resume_error``); ``load()`` gives the resolved
    config (of the run to resume, or of ``--config`` and the overrides);
    ``--print-config`` prints it."""
    from agents.common.cli import error_exit

    if args.help_config:
        print(schema.help_text())
        return Start(0)
    if getattr(args, "resume", None) and args.config:
        parser.error(resume_error)
    try:
        cfg = load()
    except ConfigError as e:
        return Start(error_exit(parser.prog, str(e)))
    if args.print_config:
        print(dump(cfg), end="")
        return Start(0)
    return Start(None, cfg)
