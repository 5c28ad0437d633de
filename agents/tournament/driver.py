"""``run_tournament``: schedule the deals, play them on a pool (or Ray), summarise."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.tournament.deals import make_tables, resolve_rules, rotations
from agents.tournament.matches import build_seat
from agents.tournament.progress import progress_bar
from agents.tournament.results import TournamentResult, summarize
from agents.tournament.specs import agent_labels, spec_text
from agents.tournament.worker import (
    WORKER_STATE,
    TableResult,
    init_pool_worker,
    init_worker,
    play_chunk,
)

#: The most deals per work unit (fewer for short runs, so that every worker has work).
CHUNK_DEALS = 25


def run_tournament(
    agents: Sequence[Any],
    num_players: int | None = None,
    deals: int = 1000,
    seed: int = 0,
    rules: dict | Any | str | Path | None = None,
    workers: int | None = None,
    progress: bool = True,
    tables: Sequence[Sequence[str]] | None = None,
    backend: str = "local",
    address: str | None = None,
    on_table: Callable[[int, TableResult], None] | None = None,
) -> TournamentResult:
    """Play a duplicate-deal tournament; see the module docstring.

    Args:
        agents: agent spec strings (``"heuristic"``, ``"ppo:models/x.zip"``,
            ``"mypkg.bots:MyBot"``, ``"mc?samples=8"``), agent classes (built as
            ``Class(num_players=n, seed=s)``) or agent instances (a fresh copy for every
            seat and deal, reseeded with ``reset(seed=...)``; the copies must be
            picklable with ``backend="ray"``). A class or instance is labelled
            ``module:Class``. May be empty when ``tables`` names them.
        num_players: seats per table; default the rules' ``num_players`` (2 by default).
        deals: distinct decks; each is played under every seat rotation at every table.
            With the rules' ``num_deals > 1``, distinct matches of that many stacked decks
            (the match mode, ``agents.tournament.matches``).
        seed: a non-negative int; the same seed gives the same results.
        rules: rules options (dict), a ``pis_env.Rules``, or a rules YAML path.
        workers: processes, an int >= 1 (default ``None``: every core); 1 plays in this
            process.
        progress: show the progress on stderr (a tqdm bar on a terminal, else a line now
            and then).
        tables: explicit lineups (lists of ``num_players`` agent specs or labels).
        backend: ``"local"`` (processes on this machine) or ``"ray"`` (chunks as Ray tasks,
            ``agents.tournament.ray_backend``; the same results). With ``"ray"``, ``workers``
            caps the tasks in flight (default: the cluster's CPUs).
        address: the Ray cluster (default ``RAY_ADDRESS``, else a local Ray).
        on_table: called with a table's index (in ``tables``' order) and its
            ``TableResult`` as soon as every deal of that table is played, in the calling
            process: a run of hours can keep each finished table (``pis-bench`` resumes a
            killed card from them).
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be an int >= 1, got {deals!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError(f"workers must be an int >= 1 (or None for every core), got {workers!r}")
    from agents.tournament.ray_backend import check_backend

    check_backend(backend, address)
    rules_dict = resolve_rules(rules, num_players)
    n = rules_dict["num_players"]
    if isinstance(agents, (str, type)) or hasattr(agents, "act"):
        agents = [agents]  # one entry, not a sequence of them
    entries = [a.strip() if isinstance(a, str) else a for a in agents]
    if not entries and tables:
        for lineup in tables:
            for a in lineup:
                if a not in entries:
                    entries.append(a)
    specs_list = [spec_text(a) for a in entries]
    labels = agent_labels(specs_list)
    specs = dict(zip(labels, specs_list))
    built: dict[str, Any] = dict(zip(labels, entries))  # what the workers build agents from
    checked: list[Any] = []
    for s, entry in zip(specs_list, entries):  # fail early, in this process, on a bad spec
        if any(entry is c for c in checked):
            continue
        checked.append(entry)
        try:
            build_seat(entry, n, None, rules_dict.get("num_deals", 1))
        except (ValueError, TypeError, ImportError) as e:
            raise ValueError(f"agent spec {s!r}: {e}") from e
    if tables:
        lineups = []
        for lineup in tables:
            lineup = [_resolve_label(spec_text(a), labels, specs_list) for a in lineup]
            if len(lineup) != n:
                raise ValueError(f"table {lineup} has {len(lineup)} seats, expected {n}")
            lineups.append(lineup)
    else:
        lineups = make_tables(labels, n)
    seatings = [rotations(lineup) for lineup in lineups]
    config = {"rules": rules_dict, "seed": seed, "seatings": seatings, "specs": built}

    session = None
    if backend == "ray":  # connected before the clock starts: ray.init is not play time
        from agents.tournament.ray_backend import RaySession

        session = RaySession(address)
    if workers is None:
        workers = session.cpus if session is not None else _cpu_count()
    # Work units of up to CHUNK_DEALS deals, small enough to keep every worker busy. The
    # split never changes the results: each deal is seeded on its own.
    chunk = max(1, min(CHUNK_DEALS, -(-deals * len(lineups) // (8 * workers))))
    tasks = [
        (t, start, min(start + chunk, deals))
        for t in range(len(lineups))
        for start in range(0, deals, chunk)
    ]
    workers = min(workers, len(tasks))
    chunks_left = [0] * len(lineups)
    for t, _, _ in tasks:
        chunks_left[t] += 1
    charges = [np.zeros((deals, n, n), np.int32) for _ in lineups]
    winners = [np.zeros((deals, n, n), bool) for _ in lineups]
    reasons = [np.zeros((deals, n), np.uint8) for _ in lineups]
    decisions = [np.zeros((deals, n), np.int32) for _ in lineups]

    bar = progress_bar(deals * len(lineups), progress,
                       "match" if rules_dict.get("num_deals", 1) > 1 else "deal")
    start_time = time.perf_counter()

    def table_result(t: int) -> TableResult:
        return TableResult(lineup=lineups[t], seating=seatings[t], charges=charges[t],
                           winners=winners[t], reasons=reasons[t], decisions=decisions[t])

    def store(out) -> None:
        t, start, c, w, rs, dc = out
        stop = start + c.shape[0]
        charges[t][start:stop] = c
        winners[t][start:stop] = w
        reasons[t][start:stop] = rs
        decisions[t][start:stop] = dc
        bar.update(c.shape[0])
        chunks_left[t] -= 1
        if on_table is not None and chunks_left[t] == 0:
            on_table(t, table_result(t))

    try:
        if session is not None:
            session.run_unordered(tasks, play_chunk, store, workers, init_worker, (config,))
        elif workers == 1:
            saved = dict(WORKER_STATE)
            init_worker(config)
            try:
                for task in tasks:
                    store(play_chunk(task))
            finally:
                WORKER_STATE.clear()
                WORKER_STATE.update(saved)
        else:
            import multiprocessing as mp

            with mp.get_context().Pool(workers, init_pool_worker, (config,)) as pool:
                for out in pool.imap_unordered(play_chunk, tasks):
                    store(out)
    finally:
        bar.close()
        if session is not None:
            session.close()
    elapsed = time.perf_counter() - start_time

    results = [table_result(t) for t in range(len(lineups))]
    stats, h2h, ratings, truncated = summarize(labels, specs, results, deals)
    played = [lab for lab in labels if any(lab in lineup for lineup in lineups)]
    all_decisions = np.concatenate([d.ravel() for d in decisions])
    return TournamentResult(
        agents=played, specs={a: specs[a] for a in played}, num_players=n, deals=deals,
        seed=seed, rules=rules_dict, tables=lineups,
        stats={a: stats[a] for a in played}, head_to_head=h2h,
        ratings={a: ratings[a] for a in played}, table_results=results, truncated=truncated,
        mean_decisions=float(all_decisions.mean()), elapsed_s=elapsed, workers=workers,
    )


def _resolve_label(entry: str, labels: list[str], specs: list[str]) -> str:
    """The label a ``--table`` entry names. A spec given once is its own label, so an
    entry that is a spec but no label is one given several times (``spec#1``, ...)."""
    if entry in labels:
        return entry
    matches = [lab for lab, s in zip(labels, specs) if s == entry]
    if matches:
        raise ValueError(f"table entry {entry!r} is ambiguous: use one of {matches}")
    raise ValueError(f"table entry {entry!r} is not one of the agents {labels}")



def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1
