"""docs/cli.md: the ``--help`` of every installed command, written from the commands' own
argparse parsers, so the page cannot drift from what they accept.

    python scripts/cli_reference.py            # rewrite docs/cli.md
    python scripts/cli_reference.py --check    # exit 1 when docs/cli.md is out of date

``tests/test_cli_reference.py`` runs the check: a changed option or help line fails the
suite until the page is rewritten (and reviewed with the change).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "cli.md"
#: (the command as a user types it, ``module:function`` returning its parser).
COMMANDS = [
    ("pis-train", "train.sb3.run:build_parser"),
    ("pis-tournament", "agents.tournament.cli:build_parser"),
    ("pis-tournament compare", "agents.tournament.compare:build_parser"),
    ("pis-bench", "agents.bench.cli:build_parser"),
    ("pis-play", "agents.ui.play:build_parser"),
    ("pis-serve", "agents.ui.web.server:build_parser"),
]
#: The terminal width the help is wrapped at (argparse reads ``COLUMNS``).
WIDTH = 100
HEADER = """# Command-line reference

The installed commands and their options, as `--help` prints them (`pis-train` is
`python train/ppo.py` in a checkout, `pis-tournament` is `python -m agents.tournament`,
`pis-bench` is `python -m agents.bench`, `pis-play` is `python -m agents.ui.play`). Every
key of `pis-train`'s config is in the [API reference](api/train.md#train.sb3.config) and in
`pis-train --help-config`.
"""


def help_text(command: str, factory: str) -> str:
    """``command --help``, wrapped at ``WIDTH`` whatever the terminal."""
    module, function = factory.split(":")
    parser: argparse.ArgumentParser = getattr(importlib.import_module(module), function)()
    parser.prog = command
    with mock.patch.dict(os.environ, {"COLUMNS": str(WIDTH)}):
        return parser.format_help()


def render() -> str:
    parts = [HEADER]
    for command, factory in COMMANDS:
        parts.append(f"## `{command}`\n\n```text\n{help_text(command, factory)}```\n")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/cli_reference.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare docs/cli.md with the commands instead of writing it")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python "
                  "scripts/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
