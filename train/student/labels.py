"""The student's data: positions the shipped network reaches, labelled by the default search.

    python -m train.student.labels --config configs/student_2p.yaml
    python -m train.student.labels --config configs/student_2p.yaml workers=1 games=400
    python -m train.student.labels --help-config

Why: the student (issue 61) learns the search's judgement, not its moves alone: every
label carries the search's value of every legal action with its standard error, its value
of the position and the particle filter's belief over the hidden cards, which the student
reads as input (``train.expert.iteration.label_games`` documents the columns and their
unit). The positions are the ones a network reaches: ``models/ppo_2p.zip`` plays one seat,
sampling its moves, and the other seat is drawn from ``opponents`` (the heuristic, greedy,
the network itself and styles of the opponent panel's model set; never its evaluation set,
which is kept for judging the student). At a table size without a network, ``policy``
names a bot (``heuristic``) and the positions are the ones it reaches.

The run is ``games`` games in chunks of ``GAME_CHUNK``, each chunk a file in ``out_dir``
(written atomically as soon as it is done; ``label_chunks``). A job may be killed at any
time: the same command labels only the chunks that are missing, and the chunks are the
ones an uninterrupted run writes (every game draws its random numbers from ``(seed, g)``),
so raising ``games`` later adds chunks. ``out_dir/job.json`` records the labelling
settings, and a rerun with others is refused. A progress line per chunk gives the labels
so far and the rate. The deals are the tournament's duplicate decks of seed
``seed * 1000``: evaluate the student with another seed.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.search import DEFAULT_DETERMINIZE
from agents.search import DEFAULT_ROLLOUTS as SEARCH_ROLLOUTS
from pis_env import LAYOUT_VERSIONS, Rules
from pis_env.shipped import shipped_dir
from train.common.schema import (
    MAX_SEED,
    ConfigError,
    Schema,
    add_arguments,
    check_mix,
    mapping,
    param,
    section,
)
from train.expert.iteration import LabelJob, LabellerConfig, label_chunks, policy_is_file

DEFAULT_CONFIG = shipped_dir("config") / "student_2p.yaml"
#: The labelling budget: the default search's own (docs/results.md, "A network taught by
#: the search: the labels": 25 labels per CPU second at 4,096 rollouts, 46 at 1,024, whose
#: choice is the default's at 74% of positions against 78% for the default under another
#: seed), so 300,000 labels take about 3.3 core-hours.
DEFAULT_ROLLOUTS = SEARCH_ROLLOUTS
#: The mix the other seat is drawn from: mostly the heuristic, some greedy and the network
#: itself, and a little of every cheap style of the panel's model set.
DEFAULT_OPPONENTS = {
    "heuristic": 0.5, "greedy": 0.1, "self": 0.2, "ppo_v2": 0.04, "greedy_eps": 0.02,
    "high_shedder": 0.02, "hoarder": 0.02, "sevens": 0.02, "cautious": 0.02, "miser": 0.02,
    "suit_keeper": 0.02, "drawer": 0.02, "jack_happy": 0.02,
}


@dataclass
class StudentLabelsConfig:
    """A labelling run of ``python -m train.student.labels`` (the module docstring)."""

    out_dir: str = param("data/student_2p/labels", "the labels directory: one file per "
                         "chunk of games; a rerun resumes it")
    seed: int = param(61, "seed of the labelled games (their decks: the tournament's of "
                      "seed * 1000)", ge=0, le=MAX_SEED // 1000)
    games: int = param(24000, "labelled games in all (about 13 labels each at 2 players); "
                       "raise it to add chunks", ge=1)
    num_players: int = param(2, "players at the table", ge=2, le=7)
    rules: dict[str, Any] = mapping({}, "rules options beyond num_players (pis_env "
                                    "keywords)", keys=Rules.keys)
    policy: str = param("models/ppo_2p.zip", "the network that plays one seat (a policy "
                        "file of env_version's layout), or a bot's spec (heuristic: at a "
                        "table size without a network)")
    env_version: int = param(0, "the table's observation layout (the network's; the search "
                             "is shown its own)", choices=LAYOUT_VERSIONS)
    opponents: dict[str, float] = param(DEFAULT_OPPONENTS, "the mix the other seats are drawn "
                                        "from: bot names of the model set, 'ppo:PATH', and "
                                        "'self' for the network")
    sample: bool = param(True, "the network samples its moves (false: its argmax)")
    labeller: LabellerConfig = section(LabellerConfig, "the search that labels the positions",
                                       rollouts=DEFAULT_ROLLOUTS,
                                       determinize=DEFAULT_DETERMINIZE)
    win_bonus: float = param(0.5, "the returns' win bonus (train/sb3/run.py's win_bonus)",
                             ge=0)
    gamma: float = param(1.0, "the returns' discount per later decision", gt=0, le=1)
    backend: str = param("local", "where the labelling runs: local processes or Ray tasks",
                         choices=("local", "ray"))
    address: str | None = param(None, "Ray cluster (null: RAY_ADDRESS or a local Ray)")
    workers: int | None = param(None, "labelling processes / Ray tasks in flight (null: "
                                   "every core)", ge=1)


def _check(cfg: StudentLabelsConfig) -> StudentLabelsConfig:
    from agents.panel import EVALUATION_SET, spec_names

    check_mix("opponents", cfg.opponents, also=("self", "ppo:"))
    held_out = [name for name in cfg.opponents
                if set(spec_names(name)) & set(EVALUATION_SET)]
    if held_out:
        raise ConfigError(f"opponents: {', '.join(held_out)} is in the opponent panel's "
                          "evaluation set, which is held out for judging the student")
    try:
        cfg.rules = Rules.from_options(**{**cfg.rules,
                                          "num_players": cfg.num_players}).to_dict()
    except (TypeError, ValueError) as e:
        raise ConfigError(f"rules: {e}") from None
    return cfg


#: The config of ``python -m train.student.labels``.
CONFIG = Schema(StudentLabelsConfig, check=_check)


def load_config(path: str | Path | None = None,
                overrides: list[str] | None = None) -> StudentLabelsConfig:
    """Defaults, the YAML file, then ``key=value`` overrides, checked (typed)."""
    return CONFIG.build(path, overrides)


def job(cfg: StudentLabelsConfig) -> LabelJob:
    """The ``LabelJob`` of a config: the search's moves are the labels (``target``)."""
    return LabelJob(seed=cfg.seed, iteration=0, rules=cfg.rules, policy=cfg.policy,
                    opponents=cfg.opponents, labeller=asdict(cfg.labeller),
                    sample=cfg.sample, win_bonus=float(cfg.win_bonus),
                    gamma=float(cfg.gamma), target="search",
                    env_version=int(cfg.env_version))


def run(cfg: StudentLabelsConfig, say=print) -> list[Path]:
    """Labels (or resumes labelling) ``cfg``'s games; returns the chunk files."""
    if not policy_is_file(cfg.policy):
        from agents import make_for_table

        try:  # a bot's spec: the positions that bot reaches
            make_for_table(cfg.policy, cfg.rules)
        except (ValueError, TypeError, ImportError) as e:
            raise ConfigError(f"policy={cfg.policy}: no such policy file, nor a bot ({e})") \
                from None
    t0 = time.perf_counter()
    say(f"labelling {cfg.games:,} games with search ({cfg.labeller.rollouts} "
        f"rollouts, {cfg.labeller.determinize}) into {cfg.out_dir}")
    paths = label_chunks(job(cfg), cfg.games, cfg.out_dir, cfg.backend,
                         cfg.workers, cfg.address, 1, say)
    total = 0
    for path in paths:
        with np.load(path) as data:
            total += len(data["action"])
    say(f"done: {total:,} labels in {len(paths)} chunks in {cfg.out_dir} "
        f"({time.perf_counter() - t0:.0f} s this run)")
    return paths


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    from agents.common.cli import error_exit
    from train.common.entry import preamble

    p = argparse.ArgumentParser(prog="python -m train.student.labels",
                                description=__doc__.split("\n\n")[0])
    add_arguments(p, DEFAULT_CONFIG)
    args = p.parse_args(argv)
    start = preamble(p, args, CONFIG,
                     lambda: load_config(args.config or DEFAULT_CONFIG, args.overrides))
    if start.exit is not None:
        return start.exit
    cfg = start.cfg
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)  # a kill stops it cleanly
    try:
        run(cfg, say=lambda line: print(line, flush=True))
    except ConfigError as e:
        return error_exit(p.prog, str(e))
    except KeyboardInterrupt:
        print("interrupted: the finished chunks are kept; the same command resumes",
              flush=True)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


__all__ = ["CONFIG", "StudentLabelsConfig", "job", "load_config", "main", "run"]

if __name__ == "__main__":
    sys.exit(main())
