"""Type checking: mypy (standard mode, ``[tool.mypy]`` of pyproject.toml) finds no error in
``pis_env`` and the public API of ``agents``, and user code typed against them checks
clean with mypy and with basedpyright (its ``standard`` mode): every Python example of
README.md and docs/ (a page's examples in order, as one program: they build on each other),
and the README's env example with typed additions (``env().unwrapped`` a ``raw_env``, a
bot's ``act`` taking what ``env.last()`` returns). A snippet with deliberate mistakes
must fail, at exactly its marked lines, under both checkers, so the check cannot pass by
everything being ``Any``. Every package ships ``py.typed``.
"""

from __future__ import annotations

import json
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
env.reset(seed=1)
observation, reward, termination, truncation, info = env.last()
move: int = bot.act(observation)
state: np.ndarray = env.unwrapped.state()
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
pis_env.env(num_player=3)  # error
'''


def readme_env_example() -> str:
    """The README's first Python example that builds the env."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return next(b for b in blocks if "pis_env.env(" in b)


#: An example that is a file of its own starts with its name: ``"""mybot.py: ...``.
MODULE_BLOCK = re.compile(r'^"""(\w+)\.py\b')


def doc_examples() -> dict[str, str]:
    """``{file name: code}``: per page of README.md and docs/ with Python examples, those
    examples joined in order (``doc_<page>.py``), and each example that names itself a
    module (``MODULE_BLOCK``) as that file, which the page's others import."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    examples = {}
    for page in pages:
        blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"),
                            flags=re.S)
        program = []
        for block in blocks:
            module = MODULE_BLOCK.match(block)
            if module:
                examples[f"{module[1]}.py"] = block
            else:
                program.append(block)
        if program:
            stem = re.sub(r"\W", "_", page.stem).lower()
            examples[f"doc_{stem}.py"] = "\n".join(program)
    return examples


def write_user_code(folder: Path) -> list[Path]:
    """The files of user code both checkers read: the docs' examples, the typed README
    example and the snippet of mistakes."""
    folder.mkdir()
    files = []
    for name, code in doc_examples().items():
        files.append(folder / name)
        files[-1].write_text(code)
    files.append(folder / "readme_example.py")
    files[-1].write_text(readme_env_example() + TYPED_TAIL)
    files.append(folder / "wrong.py")
    files[-1].write_text(WRONG)
    return files


def reported_errors(text: str, pattern: str) -> list[tuple[str, int]]:
    return sorted({(Path(m[0]).name, int(m[1])) for m in re.findall(pattern, text, flags=re.M)})


#: What both checkers must report: the marked lines of the snippet of mistakes.
EXPECTED = sorted(("wrong.py", i + 1) for i, line in enumerate(WRONG.splitlines())
                  if line.endswith("# error"))


def mypy(*targets: str, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache),
                           "--no-error-summary", "--show-error-codes", *targets],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_mypy_passes_and_typed_user_code_checks(tmp_path):
    cache = tmp_path / "cache"
    project = mypy(cache=cache)  # the packages and modules of [tool.mypy]
    assert project.returncode == 0, project.stdout + project.stderr
    assert project.stdout.strip() == ""

    files = write_user_code(tmp_path / "user")
    users = mypy(*map(str, files), cache=cache)
    assert reported_errors(users.stdout, r"^(.*?\.py):(\d+): error:") == EXPECTED, users.stdout


def test_basedpyright_standard_mode_checks_the_users_code(tmp_path):
    files = write_user_code(tmp_path / "user")
    config = tmp_path / "pyrightconfig.json"
    config.write_text(json.dumps({"typeCheckingMode": "standard", "pythonVersion": "3.10",
                                  "extraPaths": [str(ROOT), str(tmp_path / "user")]}))
    out = subprocess.run([sys.executable, "-m", "basedpyright", "--pythonpath", sys.executable,
                          "-p", str(config), *map(str, files)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    errors = reported_errors(out.stdout, r"^\s*(\S+?\.py):(\d+):\d+ - error:")
    assert errors == EXPECTED, out.stdout + out.stderr
    assert {f.name for f in files} > {"doc_own_bot.py", "mybot.py", "doc_readme.py",
                                      "doc_bots.py", "doc_training.py"}


def test_every_package_is_marked_typed_and_the_code_has_no_type_ignore():
    for package in ("pis_env", "agents", "train"):
        assert (ROOT / package / "py.typed").is_file()
    ignores = [f"{p.relative_to(ROOT)}:{i}" for package in ("pis_env", "agents")
               for p in (ROOT / package).rglob("*.py")
               for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
               if "type: ignore" in line]
    assert ignores == []
