"""The tournament's Ray backend (agents.tournament.ray_backend): the same results as the local
backend, on one local Ray and on a two-node cluster simulated on this machine, and a
chunk whose worker is killed mid-run is retried without counting anything twice.

Each test starts Ray (2 CPUs, no dashboard) and shuts it down, leaving no Ray process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import ray

from agents.greedy import GreedyAgent
from agents.tournament import main, run_tournament
from agents.tournament.ray_backend import RaySession, RayUnavailableError, check_backend

ROOT = Path(__file__).resolve().parents[3]


def _ray_children() -> list:
    import psutil

    return [p for p in psutil.Process().children(recursive=True)
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


@pytest.fixture
def no_ray_left():
    """After the test: Ray is shut down and no process it started is still alive.
    Children that were there before the test (an earlier test's multiprocessing
    forkserver or resource tracker) are not the test's."""
    before = {p.pid for p in _ray_children()}

    def left() -> list:
        return [p for p in _ray_children() if p.pid not in before]

    yield
    if ray.is_initialized():
        ray.shutdown()
    deadline = time.monotonic() + 20
    while left() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left(), f"Ray processes left behind: {left()}"


@pytest.fixture
def local_ray(no_ray_left, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT)] + sys.path))
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _arrays(result) -> list[np.ndarray]:
    out = []
    for tr in result.table_results:
        out += [tr.charges, tr.winners, tr.reasons, tr.decisions]
    return out


def assert_same(a, b) -> None:
    for x, y in zip(_arrays(a), _arrays(b), strict=True):
        np.testing.assert_array_equal(x, y)
    assert a.table() == b.table()
    assert {k: v.win_rate for k, v in a.stats.items()} == \
        {k: v.win_rate for k, v in b.stats.items()}


AGENTS = ["heuristic", "greedy", "random"]


def test_ray_backend_matches_local(local_ray):
    local = run_tournament(AGENTS, deals=12, seed=5, workers=1, progress=False)
    remote = run_tournament(AGENTS, deals=12, seed=5, workers=2, progress=False, backend="ray")
    assert remote.workers == 2
    assert_same(local, remote)
    assert ray.is_initialized()  # a connection made by the caller is left open
    # the match mode too: whole three-deal matches as Ray tasks, the same results
    rules = {"num_deals": 3}
    local = run_tournament(AGENTS, deals=4, seed=5, workers=1, progress=False, rules=rules)
    remote = run_tournament(AGENTS, deals=4, seed=5, workers=2, progress=False, rules=rules,
                            backend="ray")
    assert remote.num_deals == 3 and "duplicate matches of 3 deals" in remote.table()
    assert_same(local, remote)


def test_two_node_cluster_matches_local(no_ray_left, monkeypatch):
    from ray.cluster_utils import Cluster

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT)] + sys.path))
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        local = run_tournament(["heuristic", "greedy"], num_players=3, deals=8, seed=2,
                               workers=1, progress=False)
        remote = run_tournament(["heuristic", "greedy"], num_players=3, deals=8, seed=2,
                                progress=False, backend="ray", address=cluster.address)
        assert remote.workers == 2  # the cluster's CPUs: one on each node
        assert not ray.is_initialized()  # the backend's own connection is closed
        assert_same(local, remote)
    finally:
        cluster.shutdown()


class DieOnce(GreedyAgent):
    """Greedy, but the first one to act while ``marker`` does not exist writes its pid
    there and kills its own process (SIGKILL: no cleanup, like a lost machine)."""

    def __init__(self, marker: str, **kwargs):
        super().__init__(**kwargs)
        self.marker = marker

    def act(self, observation: dict) -> int:
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return super().act(observation)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


def test_killed_worker_chunk_is_retried(local_ray, tmp_path):
    marker = tmp_path / "killed.pid"
    spec = f"tests.agents.tournament.test_ray_backend:DieOnce?marker={marker}"
    remote = run_tournament([spec, "heuristic"], deals=20, seed=9, workers=2, progress=False,
                            backend="ray")
    pid = int(marker.read_text())
    assert pid != os.getpid()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # that worker is gone: its chunk was played again elsewhere
    local = run_tournament([spec, "heuristic"], deals=20, seed=9, workers=1, progress=False)
    assert_same(local, remote)
    assert sum(s.games for s in remote.stats.values()) == 2 * 2 * 20  # nothing twice


def test_session_map_order_and_unit_errors(local_ray):
    with RaySession() as session:
        assert session.map(_inverse, [1, 2, 4, 5], workers=2) == [1, 0.5, 0.25, 0.2]
        with pytest.raises(RuntimeError, match="work unit 0 failed: ZeroDivisionError"):
            session.run_unordered([1, 0], _inverse, lambda out: None)


def _inverse(x):
    return 1 / x


def test_bad_backend_and_address():
    with pytest.raises(ValueError, match="backend='spark'"):
        check_backend("spark")
    with pytest.raises(ValueError, match="address"):
        run_tournament(["greedy", "random"], deals=2, address="auto", progress=False)
    assert main(["--agents", "greedy,random", "--deals", "2", "--no-save",
                 "--address", "auto"]) == 2


def test_ray_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(RayUnavailableError, match=r"pis-yedili\[scale\]"):
        RaySession()


def test_imports_do_not_load_ray():
    code = ("import sys; import pis_env, agents, agents.tournament, agents.tournament.ray_backend, "
            "train.expert.search_data, train.sb3.run; "
            "assert 'ray' not in sys.modules, 'ray imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)
