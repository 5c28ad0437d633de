"""Every command-line entry point answers bad input the same way: argparse's one line
``prog: error: message`` on stderr and exit code 2, before any work and without a
traceback (the console scripts ``pis-tournament``, ``pis-play`` and ``pis-serve`` are the
``main`` functions of these modules)."""

from __future__ import annotations

import importlib

import pytest

#: (module with ``main``, its prog, arguments that are wrong before any work is done).
CASES = [
    ("agents.tournament.cli", "python -m agents.tournament",
     ["--agents", "greedy,random", "--option", "bogus=1", "--no-save", "--no-progress"]),
    ("agents.tournament.cli", "python -m agents.tournament compare",
     ["compare", "nowhere/a.csv", "nowhere/b.csv"]),
    ("agents.ui.play", "python -m agents.ui.play", ["--rules", "nowhere.yaml"]),
    ("agents.ui.web.server", "pis-serve", ["--option", "bogus=1"]),
    ("train.sb3.run", "python train/ppo.py", ["bogus=1"]),
    ("train.expert.iteration", "python train/expert_iteration.py", ["bogus=1"]),
    ("train.rllib.ppo", "python train/rllib_ppo.py", ["bogus=1"]),
    ("train.common.export", "python -m train.export", ["nowhere.zip", "out.pt"]),
    ("train.expert.search_data", "python -m train.expert.search_data", ["--games", "0"]),
    ("train.belief_model.training", "python -m train.belief", ["--players", "9"]),
    ("train.sb3.ablations", "python -m train.sb3.ablations", ["--only", "nothing"]),
    ("train.sb3.curves", "python -m train.sb3.curves", ["nowhere"]),
    ("benchmarks.search", "python -m benchmarks.search", ["--decks", "0"]),
    ("benchmarks.search", "python -m benchmarks.search", ["--players", "2,8"]),
    ("benchmarks.belief", "python -m benchmarks.belief", ["--positions", "0"]),
    ("benchmarks.engine", "python -m benchmarks.engine", ["--seconds", "0"]),
    ("benchmarks.batched", "python -m benchmarks.batched", ["--players", "9"]),
    ("benchmarks.training", "python -m benchmarks.training", ["--players", "9"]),
    ("benchmarks.tournament_backends", "python -m benchmarks.tournament_backends",
     ["--deals", "0"]),
    ("benchmarks.web_load", "python -m benchmarks.web_load", ["--seconds", "0"]),
]


@pytest.mark.parametrize("module, prog, argv", CASES, ids=[f"{c[0]}:{c[2][0]}" for c in CASES])
def test_a_bad_argument_is_one_line_in_argparse_format_and_exit_2(module, prog, argv, capsys,
                                                                 tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the relative paths above do not exist; nothing is written
    main = importlib.import_module(module).main
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own errors
        code = e.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"{prog}: error: ") and len(last) > len(prog) + 12, err
    assert list(tmp_path.iterdir()) == []
