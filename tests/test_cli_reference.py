"""docs/cli.md is what the commands' ``--help`` prints today (``scripts/cli_reference.py``
writes it from their parsers)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _reference():
    spec = importlib.util.spec_from_file_location("cli_reference",
                                                  ROOT / "scripts" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_command_line_reference_is_what_the_commands_print():
    ref = _reference()
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for command, factory in ref.COMMANDS:
        block = f"## `{command}`\n\n```text\n{ref.help_text(command, factory)}```\n"
        assert block in page, f"docs/cli.md: {command} is out of date: run python " \
            "scripts/cli_reference.py"
    assert page == ref.render()


def test_the_help_is_wrapped_at_the_pages_width_whatever_the_terminal(monkeypatch):
    ref = _reference()
    monkeypatch.setenv("COLUMNS", "40")
    text = ref.help_text("pis-tournament", "agents.tournament.cli:build_parser")
    assert max(len(line) for line in text.splitlines()) > 40
    assert max(len(line) for line in text.splitlines()) <= ref.WIDTH
    import os

    assert os.environ["COLUMNS"] == "40"
