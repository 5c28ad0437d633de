"""Type checking: mypy (standard mode, ``[tool.mypy]`` of pyproject.toml) finds no error in
``pis_env`` and the public API of ``agents``, and user code typed against them checks
clean: the README's env example, with ``env().unwrapped`` a ``raw_env``. A snippet with
deliberate mistakes must fail, at exactly its marked lines, so the check cannot pass by
everything being ``Any``. Every package ships ``py.typed``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: What a user's typed code adds to the README's env example.
TYPED_TAIL = '''
from typing_extensions import assert_type

import agents
from pis_env import raw_env
from pis_env.engine import GameState

assert_type(env.unwrapped, raw_env)
assert_type(env.unwrapped.game, GameState)
charges: list[int] | None = env.unwrapped.game.charges
history: str = env.unwrapped.export_history()
bot: agents.Agent = agents.make("heuristic", num_players=3)
seen: dict[str, np.ndarray] = env.unwrapped.observe(env.agent_selection)
action: int = bot.act(seen)
'''

#: Mistakes a type checker must report, one per line marked ``# error``.
WRONG = '''
import agents
import pis_env
from pis_env import raw_env

env = pis_env.env(num_players=2)
table: int = env.unwrapped  # error
name: int = env.unwrapped.possible_agents[0]  # error
size: str = env.unwrapped.game.num_players  # error
move: str = agents.make("random").act({})  # error
pis_env.env().unwrapped.reset(seed="zero")  # error
raw: raw_env = pis_env.env()  # error
'''


def readme_env_example() -> str:
    """The README's first Python example that builds the env."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return next(b for b in blocks if "pis_env.env(" in b)


def mypy(*targets: str, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache),
                           "--no-error-summary", "--show-error-codes", *targets],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_mypy_passes_and_typed_user_code_checks(tmp_path):
    cache = tmp_path / "cache"
    project = mypy(cache=cache)  # the packages and modules of [tool.mypy]
    assert project.returncode == 0, project.stdout + project.stderr
    assert project.stdout.strip() == ""

    example = tmp_path / "readme_example.py"
    example.write_text(readme_env_example() + TYPED_TAIL)
    wrong = tmp_path / "wrong.py"
    wrong.write_text(WRONG)
    users = mypy(str(example), str(wrong), cache=cache)
    reported = sorted({(Path(m[0]).name, int(m[1])) for m in
                       re.findall(r"^(.*?\.py):(\d+): error:", users.stdout, flags=re.M)})
    expected = sorted(("wrong.py", i + 1) for i, line in enumerate(WRONG.splitlines())
                      if line.endswith("# error"))
    assert reported == expected, users.stdout


def test_every_package_is_marked_typed_and_the_code_has_no_type_ignore():
    for package in ("pis_env", "agents", "train"):
        assert (ROOT / package / "py.typed").is_file()
    ignores = [f"{p.relative_to(ROOT)}:{i}" for package in ("pis_env", "agents")
               for p in (ROOT / package).rglob("*.py")
               for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
               if "type: ignore" in line]
    assert ignores == []
