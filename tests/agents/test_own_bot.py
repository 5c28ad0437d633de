"""Your own bot at every table (docs/own-bot.md): ``module:Class`` from the working folder
under every command (``pis-tournament``, ``pis-play``, ``pis-serve`` and its bot workers,
``agents.make``), installed or run with ``python -m``, alike, agent
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


@pytest.fixture(params=["installed", "python -m"])
def working_folder(request, tmp_path, monkeypatch):
    """A folder holding ``mybot.py``, the working directory, and ``sys.path`` as each form
    of a command starts it: an installed command (``pis-serve``) has its ``bin`` folder
    first and not the working directory, ``python -m`` the working directory first."""
    (tmp_path / "mybot.py").write_text(MYBOT)
    monkeypatch.chdir(tmp_path)
    rest = [p for p in sys.path if p not in ("", str(tmp_path))]
    first = str(BIN) if request.param == "installed" else str(tmp_path)
    monkeypatch.setattr(sys, "path", [first, *rest])
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    yield tmp_path
    sys.modules.pop("mybot", None)


def _tournament(spec, capsys):
    from agents.tournament.cli import main

    code = main(["--agents", f"{spec},heuristic", "--deals", "2", "--workers", "1",
                 "--no-save", "--no-progress"])
    out = capsys.readouterr()
    return code, out.out + out.err


def _play(spec, capsys):
    from agents.ui.play import main

    lines: list[str] = []
    code = main(["--opponents", spec, "--deals", "1", "--seed", "0"],
                input_fn=lambda _prompt: "q", output=lines.append)
    return code, "\n".join(lines) + capsys.readouterr().err


def _serve(spec, capsys):
    from agents.ui.web.server import build, build_parser

    try:
        _, bots = build(build_parser().parse_args(["--bots", spec, "--bot-workers", "0"]))
    except ValueError as e:
        return 2, str(e)
    return 0, type(bots[spec]).__name__


def _make(spec, capsys):
    try:
        return 0, type(agents.make(spec, num_players=3)).__name__
    except ValueError as e:
        return 2, str(e)


@pytest.mark.parametrize("command", [_tournament, _play, _serve, _make],
                         ids=["pis-tournament", "pis-play", "pis-serve", "agents.make"])
def test_every_command_seats_a_bot_from_the_working_folder_alike(command, working_folder,
                                                                 capsys):
    """``module:Class`` loads from the folder a command runs in, whichever command and
    however it is started (the one rule sits in ``agents.factory_of``)."""
    path = list(sys.path)
    code, text = command("nobot:Lowest", capsys)
    assert code == 2 and "cannot load 'nobot:Lowest': No module named 'nobot'" in text, text
    assert sys.path == path  # a module that is nowhere leaves no trace on the path
    code, text = command("mybot:Lowest", capsys)
    assert code == 0, text
    assert "mybot:Lowest" in text or text == "Lowest"
    assert sys.modules["mybot"].__file__ == str(working_folder / "mybot.py")


def test_the_installed_command_seats_a_bot_from_the_working_folder(tmp_path):
    """The real entry-point script, whose ``sys.path`` starts at its ``bin`` folder."""
    (tmp_path / "mybot.py").write_text(MYBOT)
    played = _run([str(BIN / "pis-play"), "--opponents", "mybot:Lowest", "--deals", "1",
                   "--seed", "0"], tmp_path)
    assert played.returncode == 0, played.stderr
    assert "mybot:Lowest" in played.stdout and "End of input" in played.stdout


def test_the_browser_tables_bot_workers_load_a_bot_from_the_working_folder(tmp_path,
                                                                          monkeypatch):
    """A spawned bot worker unpickles the bot ``pis-serve`` built: it imports ``mybot``
    with the ``sys.path`` the server's process had after loading it."""
    from agents.ui.web.bots import Lane

    (tmp_path / "mybot.py").write_text(MYBOT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(BIN), *(p for p in sys.path
                                                  if p not in ("", str(tmp_path)))])
    monkeypatch.delitem(sys.modules, "mybot", raising=False)
    prototype = agents.make_for_table("mybot:Lowest", Rules().to_dict(), seed=0)
    lane = Lane(0, {"mybot:Lowest": prototype}, process=True, time_limit=60.0, max_queued=4)
    try:
        lane.submit("open", "g", {1: ("mybot:Lowest", 5)}).result(timeout=120)
        env = __import__("pis_env").raw_env()
        env.reset(seed=0)
        observation = env.observe(env.agent_selection)
        action = lane.submit("act", "g", 1, observation).result(timeout=60)
        assert action == int(legal_actions(observation)[0])
    finally:
        lane.close()
        sys.modules.pop("mybot", None)


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
                  "    print(agents.REGISTRY['lowest'].factory,\n"
                  "          agents.REGISTRY['heuristic'].factory)\n"
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


def test_the_sb3_example_prints_its_progress_and_plays_its_model(tmp_path):
    """docs/own-bot.md's MaskablePPO example, run as written but for a tenth of its steps
    and deals: SB3 prints a table of figures after each update (no silent minutes), the
    model file is written and the tournament's table printed."""
    text = (ROOT / "docs" / "own-bot.md").read_text(encoding="utf-8")
    block = next(b.split("\n", 1)[1] for b in text.split("```python")[1:]
                 if "MaskablePPO(" in b).split("```")[0]
    for full, short in (("total_timesteps=20_000", "total_timesteps=2_048"),
                        ("deals=500", "deals=20")):
        assert full in block
        block = block.replace(full, short)
    run = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.count("total_timesteps") == 2  # a table after each of the 2 updates
    assert (tmp_path / "my_model.zip").is_file()
    assert "ppo:my_model.zip" in run.stdout and "heuristic" in run.stdout


def test_a_dotted_module_of_the_working_folder_loads_by_its_top_package(working_folder):
    """``mypkg.bots:Lowest`` is found as ``mybot:Lowest`` is: the missing name is the top
    package's, so the working folder is tried, and a dotted attribute is followed."""
    from agents.spec import load

    (working_folder / "mypkg").mkdir()
    (working_folder / "mypkg" / "__init__.py").write_text("")
    (working_folder / "mypkg" / "bots.py").write_text(MYBOT)
    sys.modules.pop("mypkg", None)
    sys.modules.pop("mypkg.bots", None)
    try:
        assert load("mypkg.bots:Lowest").__name__ == "Lowest"
        assert load("mypkg:bots.Lowest").__name__ == "Lowest"
    finally:
        sys.modules.pop("mypkg", None)
        sys.modules.pop("mypkg.bots", None)


@pytest.mark.parametrize("first", ["", "cwd"])
def test_a_module_the_path_already_covers_is_not_looked_for_twice(first, tmp_path,
                                                                  monkeypatch):
    """With the working folder on ``sys.path`` already (as ``""`` or by its name), a missing
    module is missing: it is raised as it is and the path is left alone."""
    from agents.spec import load

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["" if first == "" else str(tmp_path),
                                      *(p for p in sys.path if p not in ("", str(tmp_path)))])
    path = list(sys.path)
    with pytest.raises(ValueError, match="cannot load 'nobot:X': No module named 'nobot'"):
        load("nobot:X")
    assert sys.path == path


def test_a_missing_import_inside_the_module_is_raised_as_it_is(tmp_path, monkeypatch):
    """A module found on ``sys.path`` that itself imports a module that is nowhere: its own
    error, and the working folder is not tried for it."""
    from agents.spec import load

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "broken.py").write_text("import not_a_module_anywhere\n")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "lib"), *(
        p for p in sys.path if p not in ("", str(tmp_path / "work")))])
    path = list(sys.path)
    try:
        with pytest.raises(ValueError, match="No module named 'not_a_module_anywhere'"):
            load("broken:X")
        assert sys.path == path
    finally:
        sys.modules.pop("broken", None)
