"""Your own bot at every table (docs/own-bot.md): ``module:Class`` from the working folder
under the installed ``pis-tournament`` and ``python -m agents.tournament`` alike, agent
classes and instances in ``run_tournament``, ``agents.register`` and the entry-point group
``pis_yedili.agents`` (tournaments, the terminal game, the browser table)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.base import Agent, legal_actions
from agents.random_agent import RandomAgent
from agents.tournament import run_tournament
from pis_env import Rules

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

MYBOT = textwrap.dedent('''
    from agents import Agent, legal_actions

    class Lowest(Agent):
        """The lowest legal action id."""

        name = "lowest"

        def act(self, observation):
            self.check_observation(observation["observation"])
            return int(legal_actions(observation)[0])
''')


class Counting(Agent):
    """The lowest legal action, counting its decisions (state a copy must not share)."""

    def __init__(self, num_players=2, num_deals=1, seed=None):
        super().__init__(num_players=num_players, num_deals=num_deals, seed=seed)
        self.decisions = 0

    def act(self, observation):
        self.decisions += 1
        return int(legal_actions(observation)[0])


def _charges(result):
    return [t.charges.tolist() for t in result.table_results]


def _run(args, cwd, env=None):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def test_both_commands_seat_a_bot_from_the_working_folder_alike(tmp_path):
    (tmp_path / "mybot.py").write_text(MYBOT)
    argv = ["--agents", "mybot:Lowest,heuristic", "--deals", "3", "--workers", "1",
            "--no-save", "--no-progress"]
    installed = _run([str(BIN / "pis-tournament"), *argv], tmp_path)
    module = _run([sys.executable, "-m", "agents.tournament", *argv], tmp_path)
    assert installed.returncode == 0, installed.stderr
    assert module.returncode == 0, module.stderr
    table = [line for line in installed.stdout.splitlines() if "mybot:Lowest" in line]
    assert table and table == [line for line in module.stdout.splitlines()
                                if "mybot:Lowest" in line]

    missing = _run([str(BIN / "pis-tournament"), "--agents", "nobot:Lowest,heuristic",
                    "--no-save"], tmp_path)
    assert missing.returncode == 2
    assert missing.stderr.startswith("pis-tournament: error: agent spec 'nobot:Lowest': ")
    assert missing.stderr.count("agent spec") == 1, missing.stderr
    assert "No module named 'nobot'" in missing.stderr


def test_run_tournament_takes_agent_classes_and_instances():
    by_name = run_tournament(["random", "greedy"], deals=4, workers=1, progress=False)
    by_class = run_tournament([RandomAgent, "greedy"], deals=4, workers=1, progress=False)
    instance = RandomAgent(num_players=2, seed=123)  # reseeded for every seat and deal
    by_instance = run_tournament([instance, "greedy"], deals=4, workers=1, progress=False)
    assert _charges(by_class) == _charges(by_name) == _charges(by_instance)
    assert by_class.agents == ["agents.random_agent:RandomAgent", "greedy"]
    assert by_instance.specs["agents.random_agent:RandomAgent"] == \
        "agents.random_agent:RandomAgent"

    counting = Counting(num_players=3)
    result = run_tournament([counting, "greedy"], num_players=3, deals=2, workers=1,
                            progress=False)
    assert counting.decisions == 0  # each seat played a copy: the instance was not shared
    assert result.tables[0][0].endswith(":Counting")
    with pytest.raises(ValueError, match="built for 3 players; this table has 2"):
        run_tournament([counting, "greedy"], deals=1, workers=1, progress=False)
    with pytest.raises(TypeError, match="act\\(observation\\)"):
        run_tournament([object(), "greedy"], deals=1, workers=1, progress=False)


@pytest.fixture
def registered():
    names = []

    def register(name, factory, **kwargs):
        agents.register(name, factory, **kwargs)
        names.append(name)

    yield register
    for name in names:
        agents.REGISTRY.pop(name, None)


def test_a_registered_name_plays_at_every_table(registered, capsys):
    registered("counting", Counting)
    bot = agents.make("counting", num_players=3, seed=1)
    assert isinstance(bot, Counting) and bot.num_players == 3
    result = run_tournament(["counting", "heuristic"], deals=2, workers=2, progress=False)
    assert result.agents == ["counting", "heuristic"] and result.stats["counting"].games == 4

    from agents.ui.play import play_match

    totals = play_match(["counting", "greedy"], deals=1, seed=0,
                        input_fn=lambda _prompt: "q", output=lambda *_: None)
    assert totals is not None

    from agents.ui.web.server import build, build_parser

    config, prototypes = build(build_parser().parse_args(["--bots", "counting"]))
    assert isinstance(prototypes["counting"], Counting) and config.bots == ("counting",)

    with pytest.raises(ValueError, match="already registered"):
        agents.register("counting", RandomAgent)
    agents.register("counting", RandomAgent, replace=True)
    assert isinstance(agents.make("counting"), RandomAgent)
    with pytest.raises(ValueError, match="shipped bot"):
        agents.register("heuristic", RandomAgent, replace=True)
    with pytest.raises(ValueError, match="no ':', '\\?'"):
        agents.register("my:bot", RandomAgent)
    with pytest.raises(TypeError, match="callable"):
        agents.register("thing", 3)


def test_a_factory_function_gets_only_what_it_takes(registered):
    registered("lowest_fn", lambda num_players=2, seed=None: Counting(num_players, seed=seed))
    bot = agents.make_for_table("lowest_fn", Rules(num_players=4).to_dict(), seed=3)
    assert isinstance(bot, Counting) and bot.num_players == 4 and bot.seed == 3


def test_an_installed_packages_entry_point_names_its_bot(tmp_path):
    """A package's ``[project.entry-points."pis_yedili.agents"]``: a dist-info folder on the
    path is what pip installs; the name then works in make, tournaments and the CLIs."""
    site = tmp_path / "site"
    (site / "mybots-0.1.dist-info").mkdir(parents=True)
    (site / "mybots-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: mybots\nVersion: 0.1\n")
    (site / "mybots-0.1.dist-info" / "entry_points.txt").write_text(
        "[pis_yedili.agents]\nlowest = mybot:Lowest\nheuristic = mybot:Lowest\n")
    (site / "mybot.py").write_text(MYBOT)
    env = {"PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    check = _run([sys.executable, "-W", "error::UserWarning", "-c",
                  "import warnings\n"
                  "import agents\n"
                  "print(agents.REGISTRY._loaded)\n"  # read at the first look-up
                  "with warnings.catch_warnings(record=True) as w:\n"
                  "    warnings.simplefilter('always')\n"
                  "    print(agents.REGISTRY['lowest'], agents.REGISTRY['heuristic'])\n"
                  "print(type(agents.make_for_table('lowest', {'num_players': 3})).__name__)\n"
                  "print(len(w), 'taken' in str(w[0].message))\n"], tmp_path, env)
    assert check.returncode == 0, check.stderr
    assert check.stdout.split() == ["False", "mybot:Lowest", "agents.heuristic:HeuristicAgent",
                                    "Lowest", "1", "True"]
    played = _run([str(BIN / "pis-tournament"), "--agents", "lowest,greedy", "--deals", "2",
                   "--workers", "1", "--no-save", "--no-progress"], ROOT, env)
    assert played.returncode == 0, played.stderr
    assert any(line.lstrip().startswith("lowest") for line in played.stdout.splitlines())


def test_cli_errors_name_the_installed_command(tmp_path):
    bad = _run([str(BIN / "pis-tournament"), "--agents", "heuristic,random", "--option",
                "bogus=1", "--no-save"], tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("pis-tournament: error: "), bad.stderr
    module = _run([sys.executable, "-m", "agents.tournament", "--agents", "heuristic",
                   "--deals", "0", "--no-save"], tmp_path)
    assert module.stderr.startswith("python -m agents.tournament: error: "), module.stderr
    np.testing.assert_equal(module.returncode, 2)


@pytest.mark.parametrize("command, module, argv", [
    ("pis-train", "train.sb3.run", ["no_such_key=1"]),
    ("pis-play", "agents.ui.play", ["--deals", "0"]),
])
def test_every_cli_names_the_installed_command_it_runs_as(command, module, argv, monkeypatch,
                                                           capsys):
    import importlib

    main = importlib.import_module(module).main
    monkeypatch.setattr(sys, "argv", [str(BIN / command), *argv])
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(f"{command}: error: ")
