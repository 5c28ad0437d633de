"""Expert iteration: the search bot teaches the network, PPO polishes it, repeated.

    python train/expert_iteration.py                                    # 2 players
    python train/expert_iteration.py --config configs/expert_iteration_4p.yaml
    python train/expert_iteration.py --resume runs/ei_2p --save-to models/ppo_2p.zip
    python train/expert_iteration.py iterations=2 games=200 labeller.rollouts=256

Why: ``search`` (belief determinizations, heuristic rollouts) beats every network we
trained, but it costs tens of milliseconds a move. Expert iteration (Anthony et al. 2017;
the same loop as AlphaZero's, with a determinized search as the expert) moves what the
search knows into the network, which then plays alone in a fraction of a millisecond.

Each iteration ``k`` (``iter_<k>/`` in the run directory):

1. **label** -- ``games`` seeded games: the current network plays one seat (sampling its
   moves, so the data covers what it actually does), each other seat a bot drawn from
   ``opponents`` (``self``: the current network). The search bot (``labeller``; a
   cheaper budget than play) watches every observation of the network's seat and, at
   each decision with more than one legal action, says what it would play and what every
   legal action is worth (``SearchAgent.advise``). The label (``target``) is, by
   default, the search's move only where it beats the network's own choice by more than
   ``margin`` points, and the network's choice elsewhere: where the search is unsure it
   falls back on the heuristic, which the network already beats, so copying it there
   teaches nothing (docs/results.md has the measurements). ``label_games`` is a plain
   function over a chunk of games that returns numpy arrays, run in this process, on every local
   core or as Ray tasks (``backend``, as ``train.expert.search_data``); game ``g`` draws every
   random number from ``(seed, k, g)``, so the same seed gives the same ``data.npz`` on
   any number of workers.
2. **train** -- ``train/sb3/run.py`` in ``iter_<k>/ppo``: it starts from the current network
   (``init_policy``), imitates the labels in the data of the last ``window``
   iterations (``pretrain.data``: cross-entropy over the legal actions, the value head on
   the returns), then runs PPO (its config: ``ppo_config`` with the ``ppo`` overrides),
   and evaluates the result against its ``eval.opponents``.
3. The new policy is the current network of the next iteration.

``state.json`` records each finished stage and ``progress.jsonl`` one line per iteration
(positions, how often the network already agreed with the search, seconds, evaluation).
``--resume RUN_DIR`` continues where the run stopped (an interrupted PPO stage resumes
from its checkpoint; an interrupted labelling stage labels only the chunks of
``GAME_CHUNK`` games it had not written yet to ``iter_<k>/labels/``, which make the same
``data.npz`` as an uninterrupted stage). At the end
``policy.zip`` / ``policy.pt`` in the run directory are the last iteration's policy
(``--save-to PATH`` copies them). ``max_minutes`` stops starting new iterations once
that much time has been spent.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from agents.search import DEFAULT_DETERMINIZE, MODES
from pis_env.cards import NUM_CARDS
from pis_env.engine import NUM_ACTIONS
from pis_env.shipped import shipped_dir
from train.common import run_fields
from train.common.schema import (
    ConfigError,
    Schema,
    add_arguments,
    check_mix,
    dump,
    find_file,
    mapping,
    param,
    section,
    yaml_error,
)
from train.sb3.config import TRAIN, TrainConfig

DEFAULT_CONFIG = shipped_dir("config") / "expert_iteration_2p.yaml"
#: Games per labelling task.
GAME_CHUNK = 20
#: What the network is taught at a labelled position (``ExpertIterationConfig.target``).
TARGETS = ("improve", "search")


# ---------------------------------------------------------------------- config
@dataclass
class LabellerConfig:
    rollouts: int = param(512, "the search's rollouts per labelled decision", ge=1)
    determinize: str = param(DEFAULT_DETERMINIZE, "how the search deals the hidden cards "
                             "(agents.search)", choices=MODES)
    confidence: float = param(1.0, "agents.mc.choose_action's gate (standard errors)", ge=0)


@dataclass
class ExpertIterationConfig:
    """A run of ``train/expert/iteration.py`` (the module docstring explains the loop)."""

    name: str = run_fields.name("ei_2p")
    run_dir: str | None = run_fields.run_dir()
    seed: int = run_fields.seed("the labelled games")
    env_version: int = run_fields.env_version(
        "the env the network plays, pis_yedili_v<N> (its observation layout N): the "
        "labelled games, every train stage (it sets train/sb3/run.py's env_version) and "
        "init_policy use it; ppo:PATH opponents keep their own layout")
    ppo_config: str = param("configs/ppo_2p.yaml", "train/sb3/run.py's config of each "
                            "iteration's train stage", path=True)
    ppo: dict[str, Any] = mapping({}, "train/sb3/run.py overrides of each train stage, nested "
                                  "or dotted (ppo.max_minutes=2.5; python train/ppo.py "
                                  "--help-config lists its keys)")
    init_policy: str | None = param(None, "the first network, a policy file of "
                                       "train/sb3/run.py (null: ppo_config's own start)")
    init_widen: bool = param(False, "init_policy may be of an earlier observation layout "
                             "than env_version: the run starts from it widened (zero "
                             "weights on the new columns, so it first plays as before; "
                             "the copy is init/policy.pt in the run directory)")
    iterations: int = param(4, "label-then-train iterations", ge=1)
    games: int = param(1000, "labelled games per iteration", ge=1)
    opponents: dict[str, float] = param(
        {"heuristic": 1.0}, "the mix each other seat of a labelled game is drawn from: bot "
        "names, 'ppo:PATH', and 'self' for the current network")
    sample: bool = param(True, "the network samples its moves (false: its argmax)")
    labeller: LabellerConfig = section(LabellerConfig, "the search that labels the positions")
    target: str = param("improve", "improve: the network's own move unless the search's "
                        "beats it by more than margin; search: always the search's",
                        choices=TARGETS)
    margin: float = param(10.0, "points of the search's score (100 per unit of win) a "
                          "correction must gain", ge=0)
    window: int = param(2, "iterations of data the network imitates", ge=1)
    max_minutes: float | None = param(None, "no new iteration after this much time (null: "
                                         "no limit)", gt=0)
    backend: str = param("local", "where the labelling runs: local processes or Ray tasks",
                         choices=("local", "ray"))
    address: str | None = param(None, "Ray cluster (null: RAY_ADDRESS or a local Ray)")
    workers: int | None = param(None, "labelling processes / Ray tasks in flight (null: "
                                   "every core)", ge=1)


def _check(cfg: ExpertIterationConfig) -> ExpertIterationConfig:
    check_mix("opponents", cfg.opponents, also=("self", "ppo:"))
    try:  # the train stage's overrides: their keys now, their values with ppo_config
        keys = TRAIN.flatten(cfg.ppo, "ppo")
    except ConfigError as e:
        raise ConfigError(f"ppo (train/sb3/run.py overrides): {e}") from None
    if "env_version" in keys:
        raise ConfigError("ppo.env_version: the layout is the run's own key (env_version="
                          f"{keys['env_version']}), which every train stage gets")
    return cfg


#: The config of ``train/expert/iteration.py`` (``train.sb3.config.Schema``).
CONFIG = Schema(ExpertIterationConfig, check=_check)


def load_config(path: str | Path | None = None, overrides: list[str] | None = None,
                base: dict | None = None) -> ExpertIterationConfig:
    """Defaults, ``base`` (a run's saved config), the YAML file, then ``key=value``
    overrides: checked (``ConfigError`` naming the key) and returned typed."""
    return CONFIG.build(path, overrides, base)


def ppo_config(cfg: ExpertIterationConfig, iteration_dir: Path | None = None,
               policy: str | None = None, data: list[str] = ()) -> TrainConfig:
    """The resolved ``train/sb3/run.py`` config of an iteration's train stage."""
    overrides = dict(cfg.ppo)
    overrides["env_version"] = cfg.env_version
    overrides["init_widen"] = cfg.init_widen
    if iteration_dir is not None:
        overrides["run_dir"] = str(iteration_dir / "ppo")
    if policy is not None:
        overrides["init_policy"] = policy
    if data:
        overrides.update({"pretrain.teacher": None, "pretrain.data": list(data)})
    return TRAIN.build(find_file(cfg.ppo_config), overrides)


# ---------------------------------------------------------------------- stage 1: labels
@dataclass(frozen=True)
class LabelJob:
    """What every chunk of one labelling run shares (``label_games``'s settings): one
    picklable value that ``map_chunks`` sends to a worker with the chunk's game range.

    ``seed`` and ``iteration`` seed every game; ``rules`` the table (``pis_env`` options);
    ``policy`` the network's policy file (or a bot's spec); ``opponents`` the mix the
    other seats are drawn from (``self``: the network); ``labeller`` the search's
    keywords (``agents.search``); ``sample`` whether the network samples; ``win_bonus``
    and ``gamma`` shape ``returns``; ``target`` and ``margin`` the label; ``env_version``
    the table's observation layout."""

    seed: int
    iteration: int
    rules: dict
    policy: str
    opponents: dict
    labeller: dict
    sample: bool = True
    win_bonus: float = 0.0
    gamma: float = 1.0
    target: str = "improve"
    margin: float = 10.0
    env_version: int = 0

    def settings(self) -> dict:
        """The job as plain data (what a labels directory records, to refuse mixing)."""
        return json.loads(json.dumps(asdict(self)))


def policy_is_file(policy: str) -> bool:
    """Whether a labelling job's ``policy`` is a network's file (else a bot's spec)."""
    from agents.ppo import resolve_path

    return resolve_path(policy).is_file()


def label_games(job: LabelJob, start: int, stop: int) -> dict[str, np.ndarray]:
    """Games ``start..stop-1`` of ``job`` (its iteration), labelled by the search.

    Game ``g`` deals the tournament's duplicate deck ``(seed * 1000 + iteration, g)``;
    the network (``policy``, a saved policy file) sits in seat ``g % n`` and the other
    seats get bots drawn from ``opponents``, every seed drawn from ``(seed, iteration,
    g)``. A ``policy`` that names no file is a bot's spec (``heuristic``: the positions a
    bot reaches, for a table size without a network yet); it plays that seat as it
    always does (``sample`` aside) and is its own ``own``. Returns, per decision of the
    network with more than one legal action:
    ``obs``, ``mask``, ``privileged`` (the hidden cards, for a privileged critic),
    ``search`` (the search's move), ``own`` (the network's argmax), ``behaviour`` (the
    network's move that was played: a sample, or the argmax without ``sample``),
    ``action`` (the label: with ``target="search"`` the search's move; with
    ``"improve"`` the search's move where its score beats the network's argmax by more
    than ``margin``, else the argmax, so that the network keeps what it does no worse
    and learns only the search's clear corrections),
    ``values`` (float32 [N, 58]: the search's mean score of every action, NaN where
    illegal), ``stderr`` (float32 [N, 58]: each mean's standard error, its rollouts'
    sample standard deviation / sqrt(count); NaN where illegal, and where an action had a
    single rollout), ``value`` (float32 [N]: the search's value of the position, the mean
    score of the action it chose), ``belief`` (float32 [N, (n-1) * 52]: the search's
    card-location marginals, ``SearchAgent.belief`` flattened: column ``k * 52 + c`` is the
    probability that the opponent ``k + 1`` seats after the network holds card ``c``; with
    ``determinize="particles"`` the particle filter's, with the other modes the belief
    their determinizations are dealt from),
    ``returns`` (the seat's final reward plus ``win_bonus`` times its win share,
    discounted by ``gamma`` per later decision), ``game`` and ``seat``.

    **The unit of ``values``, ``stderr`` and ``value``** is the search's own
    (``agents.mc.scores_of``, as ``agents.mc.deal_score``): at a one-deal table
    ``v = d + B * w``, with ``d`` the deal's charge differential from the network's seat
    (the others' mean charge minus its own, in card points), ``w`` its win share (+1 for
    the winner, -1 for the loser at two players) and ``B`` the labeller's ``win_bonus``
    (``agents.search.DEFAULT_WIN_BONUS``, 1,000 points, unless ``labeller`` sets it); at
    a match table (``num_deals > 1``, ``match_aware``) 100 x the expected share of the
    match win instead. The charges are the tie-breaker (``|d|`` is a hand's card points,
    far below ``B``), so ``v / B`` is the expected win share to within ``|d| / B``: a value
    head in the learner's rewards (``returns``: the charge differential plus its own
    ``win_bonus`` x ``w``) reads ``v`` through that.

    The table is ``pis_yedili_v<env_version>``: ``obs`` has its layout, which the
    network must read (a ``PolicyLoadError`` otherwise); every other seat, and the
    search, is shown the layout its bot was built for (a v0 network opponent at a v1
    table; the particle filter's search the v1 event log at a v0 table)."""
    from agents import make, make_for_table
    from agents.ppo import check_layout
    from agents.tournament import deal_setup, env_seed
    from agents.tournament.worker import seat_observation
    from pis_env.privileged import privileged_features
    from train.common.league import table_env_class, win_share

    rules, n = job.rules, int(job.rules["num_players"])
    env = table_env_class(job.env_version)(**rules)
    names = env.possible_agents
    table = {k: v for k, v in rules.items() if k != "illegal_action"}
    is_network = policy_is_file(job.policy)

    def labelled_bot(seed: int | None = None):
        """The labelled seat's player (and ``self``'s): the network, or a bot (a table
        without a network yet), whose own moves are then its ``own``."""
        if is_network:
            return make("ppo", path=job.policy, num_players=n, seed=seed,
                        deterministic=not job.sample)
        return make_for_table(job.policy, table, seed=seed)

    network = labelled_bot()
    if is_network:
        check_layout(network.meta, n, int(rules.get("num_deals", 1)), source=str(job.policy),
                     layout_version=job.env_version)
    own_version = getattr(network, "layout_version", job.env_version)
    encoders: dict = {}
    search = make("search", num_players=n, rules=table, **job.labeller)
    searched = getattr(search, "layout_version", job.env_version)
    bot_names = list(job.opponents)
    weights = np.asarray([job.opponents[b] for b in bot_names], float)
    weights /= weights.sum()
    deal_seed = job.seed * 1000 + job.iteration
    rows: dict[str, list] = {k: [] for k in ("obs", "mask", "privileged", "search", "own",
                                             "behaviour", "values", "stderr", "belief",
                                             "returns", "game", "seat")}
    for g in range(start, stop):
        rng = np.random.default_rng([job.seed, job.iteration, g])
        seat = g % n
        seats = []
        for s in range(n):
            if s == seat:
                seats.append(network)
                continue
            name = bot_names[int(rng.choice(len(bot_names), p=weights))]
            bot_seed = int(rng.integers(2**31))
            if name == "self":
                seats.append(labelled_bot(bot_seed))
            else:
                seats.append(make_for_table(name, table, seed=bot_seed))
        network.reset(seed=int(rng.integers(2**31)))
        # a new game, new opponents: what the particle filter learnt of the last game's
        # opponents goes (it would also make a chunk's labels depend on the chunking)
        search.reset(seed=int(rng.integers(2**31)), opponents_changed=True)
        deck, dealer = deal_setup(deal_seed, g, n)
        env.reset(seed=env_seed(deal_seed, g), options={"deck": deck, "dealer": dealer})
        game = env.game
        first = len(rows["game"])
        reward = 0.0
        while not game.deal_over:
            s = game.current
            if s != seat:
                version = getattr(seats[s], "layout_version", job.env_version)
                env.step(seats[s].act(seat_observation(env, s, version, encoders)))
            else:
                o = env.observe(names[s])
                # the search sees the layout it was built for, as at a tournament (the
                # particle filter reads v1's exact public events)
                seen = seat_observation(env, s, searched, encoders)
                label = search.advise(seen)
                played = network.act(o if is_network else
                                     seat_observation(env, s, own_version, encoders))
                if int(o["action_mask"].sum()) > 1:
                    own = (network.policy.act(o["observation"], o["action_mask"])
                           if is_network else played)
                    values = np.full(NUM_ACTIONS, np.nan, np.float32)
                    stderr = np.full(NUM_ACTIONS, np.nan, np.float32)
                    for a, v in search.last_values.items():
                        values[a] = v
                        stderr[a] = search.last_stderr[a]
                    # the belief the search dealt its worlds from (before ``played``)
                    belief = search.belief(search.decode(seen)).astype(np.float32).ravel()
                    for key, value in (("obs", o["observation"]), ("mask", o["action_mask"]),
                                       ("privileged", privileged_features(game, seat)),
                                       ("search", label), ("own", own), ("behaviour", played),
                                       ("values", values), ("stderr", stderr),
                                       ("belief", belief), ("game", g), ("seat", seat)):
                        rows[key].append(value)
                search.played(played)
                env.step(played)
            reward += float(env.rewards[names[seat]])
        charges = [int(game.charges[(seat + k) % n]) for k in range(n)]
        final = reward + job.win_bonus * win_share(charges)
        count = len(rows["game"]) - first
        rows["returns"] += [final * job.gamma ** (count - 1 - i) for i in range(count)]
    size = env.observation_space(names[0])["observation"].shape[0]
    values = np.asarray(rows["values"], np.float32).reshape(-1, NUM_ACTIONS)
    chosen, own = (np.asarray(rows[k], np.int16) for k in ("search", "own"))
    index = np.arange(len(own))
    better = values[index, chosen] - values[index, own] > job.margin
    return {
        "obs": np.asarray(rows["obs"], np.float32).reshape(-1, size),
        "mask": np.asarray(rows["mask"], np.int8).reshape(-1, NUM_ACTIONS),
        "privileged": np.asarray(rows["privileged"], np.float32).reshape(len(own), -1),
        "action": chosen if job.target == "search" else np.where(better, chosen, own),
        "search": chosen,
        "own": own,
        "behaviour": np.asarray(rows["behaviour"], np.int16),
        "values": values,
        "stderr": np.asarray(rows["stderr"], np.float32).reshape(-1, NUM_ACTIONS),
        "value": values[index, chosen],
        "belief": np.asarray(rows["belief"], np.float32).reshape(-1, (n - 1) * NUM_CARDS),
        "returns": np.asarray(rows["returns"], np.float32),
        "game": np.asarray(rows["game"], np.int32),
        "seat": np.asarray(rows["seat"], np.int8),
    }


def _label_chunk(unit: tuple[LabelJob, int, int]) -> tuple[int, dict[str, np.ndarray]]:
    job, start, stop = unit
    return start, label_games(job, start, stop)


def chunk_path(directory: Path, start: int, stop: int) -> Path:
    """The file of games ``start..stop-1`` in a labels directory."""
    return Path(directory) / f"games_{start:07d}-{stop:07d}.npz"


def label_chunks(job: LabelJob, games: int, directory: str | Path, backend: str = "local",
                 workers: int | None = None, address: str | None = None, threads: int = 1,
                 say=None) -> list[Path]:
    """Labels games ``0..games-1`` of ``job`` in chunks of ``GAME_CHUNK``, each written to
    its own file in ``directory`` (``chunk_path``; atomically: a temp name, then a rename)
    as soon as it is done, and returns the chunk files in game order.

    Why: a labelling run takes hours and a job may be killed at any time; a rerun skips
    the chunks already on disk and labels only the missing ones, and as every game draws
    its random numbers from ``(seed, iteration, g)`` the result is the one an
    uninterrupted run gives. ``directory/job.json`` records the job; a rerun with other
    settings (more ``games`` aside) is a ``ConfigError``, so two jobs' labels never mix.
    ``say`` (e.g. ``print``) gets a progress line per chunk: labels so far and the rate."""
    from train.common.checkpoint import atomic_write_text
    from train.expert.search_data import map_chunks

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    record = directory / "job.json"
    settings = job.settings()
    if record.is_file():
        before = json.loads(record.read_text(encoding="utf-8"))
        changed = sorted(k for k in set(before) | set(settings)
                         if before.get(k) != settings.get(k))
        if changed:
            raise ConfigError(f"{directory} holds labels of another job ({', '.join(changed)}"
                              f" differ: {before.get(changed[0])!r} there, "
                              f"{settings.get(changed[0])!r} now); use another directory")
    else:
        atomic_write_text(record, json.dumps(settings, indent=1) + "\n")
    ranges = [(s, min(s + GAME_CHUNK, games)) for s in range(0, games, GAME_CHUNK)]
    paths = [chunk_path(directory, a, b) for a, b in ranges]
    todo = [(job, a, b) for (a, b), path in zip(ranges, paths) if not path.is_file()]
    done = {"labels": 0, "new": 0, "chunks": len(ranges) - len(todo)}
    if say is not None and done["chunks"]:
        for path in paths:
            if path.is_file():
                with np.load(path) as data:
                    done["labels"] += len(data["action"])
        say(f"{directory}: {done['chunks']} of {len(ranges)} chunks ({done['labels']:,} "
            f"labels) already there; labelling the other {len(todo)}")
    t0 = time.perf_counter()

    def write(out: tuple[int, dict[str, np.ndarray]]) -> int:
        start, data = out
        path = chunk_path(directory, start, min(start + GAME_CHUNK, games))
        tmp = path.with_name(path.stem + ".tmp")
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **data)
        tmp.replace(path)
        count = len(data["action"])
        done["new"] += count
        done["labels"] += count
        done["chunks"] += 1
        if say is not None:
            rate = done["new"] / max(time.perf_counter() - t0, 1e-9)
            say(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {path.name}: {count} labels; "
                f"{done['chunks']}/{len(ranges)} chunks, {done['labels']:,} labels so far, "
                f"{rate:.2f} labels/s this run")
        return count

    if todo:
        map_chunks(_label_chunk, todo, backend, workers, address, threads, each=write)
    return paths


def load_chunks(paths: list[Path]) -> dict[str, np.ndarray]:
    """The chunk files' arrays concatenated in order."""
    parts = []
    for path in paths:
        with np.load(path) as data:
            parts.append({k: data[k] for k in data.files})
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def label_job(cfg: ExpertIterationConfig, ppo_cfg: TrainConfig, iteration: int,
              policy: str) -> LabelJob:
    """The ``LabelJob`` of an expert-iteration run's iteration."""
    return LabelJob(seed=cfg.seed, iteration=iteration, rules=ppo_cfg.rules,
                    policy=policy, opponents=cfg.opponents, labeller=asdict(cfg.labeller),
                    sample=cfg.sample, win_bonus=float(ppo_cfg.win_bonus),
                    gamma=float(ppo_cfg.ppo.gamma), target=cfg.target,
                    margin=float(cfg.margin), env_version=int(ppo_cfg.env_version))


def label_iteration(cfg: ExpertIterationConfig, ppo_cfg: TrainConfig, iteration: int,
                    policy: str,
                    directory: str | Path, threads: int = 1,
                    say=None) -> dict[str, np.ndarray]:
    """Every game of one iteration, in chunks of ``GAME_CHUNK`` on ``cfg``'s backend,
    each chunk a file in ``directory`` (``label_chunks``: a rerun labels only the missing
    ones), concatenated."""
    job = label_job(cfg, ppo_cfg, iteration, policy)
    return load_chunks(label_chunks(job, cfg.games, directory, cfg.backend,
                                    cfg.workers, cfg.address, threads, say))


# ---------------------------------------------------------------------- the run
def _saved(run_dir: str | Path) -> dict:
    """The saved config of a run directory (a ``ConfigError`` when there is none)."""
    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise ConfigError(f"--resume {run_dir}: no config.yaml there (not a run of "
                          "train/expert/iteration.py)")
    try:
        saved = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ConfigError(yaml_error(path, e)) from None
    if not isinstance(saved, dict):
        raise ConfigError(f"{path}: corrupt config (not a mapping of keys)")
    return saved


class Run:
    """A run directory: ``config.yaml``, ``state.json``, ``progress.jsonl``, ``iter_<k>/``."""

    def __init__(self, run_dir: Path, cfg: ExpertIterationConfig, state: dict | None = None):
        self.dir, self.cfg = run_dir, cfg
        self.state = state or {"iteration": 0, "stage": "label", "policy": None,
                               "seconds": 0.0}

    @classmethod
    def create(cls, cfg: ExpertIterationConfig) -> Run:
        from train.common.checkpoint import atomic_write_text

        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_dir = Path(cfg.run_dir or f"runs/{cfg.name}-{stamp}")
        if (run_dir / "state.json").exists():
            raise ConfigError(f"{run_dir} already holds a run; use --resume {run_dir} or "
                              "another run_dir")
        run_dir.mkdir(parents=True, exist_ok=True)
        cfg = replace(cfg, run_dir=str(run_dir))
        atomic_write_text(run_dir / "config.yaml", dump(cfg))
        return cls(run_dir, cfg)

    @classmethod
    def open(cls, run_dir: Path, overrides: list[str] | None = None) -> Run:
        from train.common.checkpoint import atomic_write_text

        saved = _saved(run_dir)
        cfg = load_config(None, overrides, base=saved)
        before = load_config(None, None, base=saved).env_version
        if cfg.env_version != before:
            raise ConfigError(f"--resume cannot change env_version of a run ({before} in "
                              f"{run_dir}): its labels and policies have layout {before}")
        if overrides:
            atomic_write_text(run_dir / "config.yaml", dump(cfg))
        state_path = run_dir / "state.json"
        state = json.loads(state_path.read_text(encoding="utf-8")) if state_path.is_file() \
            else None
        return cls(run_dir, cfg, state)

    def iteration_dir(self, k: int) -> Path:
        return self.dir / f"iter_{k}"

    def save_state(self, **changes) -> None:
        from train.common.checkpoint import atomic_write_text

        self.state.update(changes)
        atomic_write_text(self.dir / "state.json", json.dumps(self.state, indent=1) + "\n")

    def log(self, row: dict) -> None:
        with open(self.dir / "progress.jsonl", "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")


def run(cfg: ExpertIterationConfig | None = None, resume: str | Path | None = None,
        overrides: list[str] | None = None, verbose: bool = True) -> dict:
    """Runs (or resumes) expert iteration; returns a summary dict (``status``,
    ``run_dir``, ``policy``, ``iterations``). Ctrl-C or SIGTERM stops it with
    ``status="interrupted"`` and everything finished so far saved."""
    say = print if verbose else (lambda *a, **k: None)
    if resume is not None:
        r = Run.open(Path(resume), overrides)
    else:
        cfg = cfg if cfg is not None else load_config(DEFAULT_CONFIG, overrides)
        base = ppo_config(cfg, policy=cfg.init_policy)  # checks it before any work
        from train.common.preflight import check_run

        check_run(base)
        r = Run.create(cfg)
    cfg = r.cfg
    t_start = time.time() - float(r.state.get("seconds", 0.0))
    try:
        return _iterate(r, t_start, say)
    except KeyboardInterrupt:
        r.save_state(seconds=time.time() - t_start)
        say(f"\ninterrupted; resume with: python train/expert_iteration.py --resume {r.dir}")
        return {"status": "interrupted", "run_dir": str(r.dir)}


def widened_start(cfg: ExpertIterationConfig, path: Path) -> str:
    """``init_policy`` as a policy file of the run's layout (``path``), widened when it
    is of an earlier one (``train.common.checkpoint.widen_to_layout``); the labelling stage
    plays the network at the run's table, so it needs the file, not only the weights."""
    import torch

    from agents.ppo import read_policy
    from train.common.checkpoint import export_weights, widen_to_layout

    meta, arrays = read_policy(cfg.init_policy)
    if meta["layout_version"] < cfg.env_version:
        meta, arrays = widen_to_layout(meta, arrays, cfg.env_version, cfg.init_policy)
    path.parent.mkdir(parents=True, exist_ok=True)
    export_weights({k: torch.as_tensor(v) for k, v in arrays.items()}, meta, path)
    return str(path)


def _iterate(r: Run, t_start: float, say) -> dict:
    from train.common.checkpoint import atomic_write_text
    from train.sb3 import run as ppo_train

    cfg = r.cfg
    while r.state["iteration"] < cfg.iterations:
        k = r.state["iteration"]
        spent = (time.time() - t_start) / 60
        if r.state["stage"] == "label" and cfg.max_minutes is not None \
                and spent >= cfg.max_minutes:
            say(f"stopping before iteration {k}: {spent:.1f} min spent "
                f"(max_minutes={cfg.max_minutes})")
            break
        it_dir = r.iteration_dir(k)
        it_dir.mkdir(exist_ok=True)
        if r.state["policy"] is None and cfg.init_policy and cfg.init_widen:
            r.save_state(policy=widened_start(cfg, r.dir / "init" / "policy.pt"))
        policy = r.state["policy"] or cfg.init_policy
        if r.state["stage"] == "label":
            if policy is None:  # no network yet: train.sb3.run's own start, no labelled data
                r.save_state(stage="train")
                continue
            t0 = time.time()
            say(f"iteration {k}: labelling {cfg.games} games with search "
                f"({cfg.labeller.rollouts} rollouts) at {policy}")
            chunks = it_dir / "labels"
            data = label_iteration(cfg, ppo_config(cfg), k, policy, chunks, say=say)
            tmp = it_dir / "data.tmp.npz"
            np.savez_compressed(tmp, **data)
            tmp.replace(it_dir / "data.npz")
            count = len(data["action"])
            agree = float((data["search"] == data["own"]).mean()) if count else float("nan")
            changed = float((data["action"] != data["own"]).mean()) if count else float("nan")
            r.state.setdefault("labels", {})[str(k)] = {
                "positions": count, "agreement": agree, "corrections": changed,
                "seconds": round(time.time() - t0, 1)}
            say(f"iteration {k}: {count:,} positions in {time.time() - t0:.0f} s; the "
                f"network's move was the search's at {agree:.1%} of them, the label differs "
                f"from it at {changed:.1%}")
            r.save_state(stage="train", seconds=time.time() - t_start)
            shutil.rmtree(chunks, ignore_errors=True)  # data.npz holds them all
        if r.state["stage"] == "train":
            data = [str(r.iteration_dir(j) / "data.npz")
                    for j in range(max(0, k - cfg.window + 1), k + 1)
                    if (r.iteration_dir(j) / "data.npz").is_file()]
            t0 = time.time()
            ppo_dir = it_dir / "ppo"
            if (ppo_dir / "checkpoints").exists():
                summary = ppo_train.run(resume=ppo_dir, verbose=say is print)
            else:
                summary = ppo_train.run(ppo_config(cfg, it_dir, policy, data),
                                        verbose=say is print)
            if summary["status"] != "finished":
                raise KeyboardInterrupt  # train.sb3.run saved its checkpoint
            labels = r.state.get("labels", {}).get(str(k), {})
            r.log({"iteration": k, **{f"label_{a}": b for a, b in labels.items()},
                   "train_seconds": round(time.time() - t0, 1),
                   "ppo_steps": summary["num_timesteps"],
                   "eval": {row["opponent"]: [row["win_rate"], row["win_low"], row["win_high"]]
                            for row in summary.get("eval", [])},
                   "minutes": round((time.time() - t_start) / 60, 2)})
            r.save_state(iteration=k + 1, stage="label", policy=summary["policy"],
                         seconds=time.time() - t_start)
    final = r.state["policy"]
    out = {"status": "finished", "run_dir": str(r.dir), "policy": final,
           "iterations": r.state["iteration"]}
    if final:
        for suffix in (".zip", ".pt"):
            src = Path(final).with_suffix(suffix)
            if src.is_file():
                shutil.copyfile(src, r.dir / f"policy{suffix}")
                out["policy" if suffix == ".zip" else "policy_pt"] = str(r.dir / f"policy{suffix}")
    atomic_write_text(r.dir / "summary.json", json.dumps(out, indent=2) + "\n")
    say(f"expert iteration: {r.state['iteration']} iteration(s) in "
        f"{(time.time() - t_start) / 60:.1f} min; policy {out['policy']}")
    return out


# ---------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    from train.common.entry import preamble

    p = argparse.ArgumentParser(prog="python train/expert_iteration.py",
                                description=__doc__.split("\n\n")[0])
    add_arguments(p, DEFAULT_CONFIG)
    p.add_argument("--resume", default=None, metavar="RUN_DIR",
                   help="continue the run in RUN_DIR (with its saved config)")
    p.add_argument("--save-to", default=None, help="copy the final policy.zip (and .pt) here")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    args = p.parse_args(argv)
    start = preamble(p, args, CONFIG, lambda: load_config(
        None if args.resume else args.config or DEFAULT_CONFIG, args.overrides,
        base=_saved(args.resume) if args.resume else None))
    if start.exit is not None:
        return start.exit
    from train.sb3.run import _raise_interrupt

    previous = signal.signal(signal.SIGTERM, _raise_interrupt)  # a kill saves the run
    try:
        return _main(args, p.prog, start.cfg)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(args: argparse.Namespace, prog: str, cfg: ExpertIterationConfig) -> int:
    from agents.common.cli import error_exit
    from train.common.checkpoint import CheckpointError
    from train.sb3.run import copy_policy

    try:
        if args.resume:
            summary = run(resume=args.resume, overrides=args.overrides, verbose=not args.quiet)
        else:
            summary = run(cfg, verbose=not args.quiet)
    except (ConfigError, CheckpointError, FileNotFoundError) as e:
        return error_exit(prog, str(e))
    if summary["status"] != "finished":
        return 130
    if args.save_to and summary.get("policy"):
        copy_policy(summary, args.save_to)
    return 0


__all__ = ["ExpertIterationConfig", "LabelJob", "chunk_path", "label_chunks", "label_games",
           "label_iteration", "label_job", "load_chunks", "load_config", "run"]

if __name__ == "__main__":
    sys.exit(main())
