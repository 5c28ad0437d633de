"""Work units as Ray tasks: the tournament's ``--backend ray`` (and the search data's).

``RaySession(address)`` connects to a cluster (``address``, else ``RAY_ADDRESS``, else a
local Ray started for the session and shut down by ``close``); when this process is
already connected (``ray.init`` was called), it uses that connection and leaves it open.
``run_unordered`` submits one Ray task per work unit, keeps at most ``workers`` of them in
flight, and hands each result to a callback as soon as it arrives (the tournament's
progress bar moves per chunk, as with the local pool).

**Failures.** A task whose worker process dies (killed, out of memory, a node lost) is
resubmitted by Ray itself (``max_retries``); an ``ObjectRef`` resolves to one result only,
and every unit writes its own slice of the results, so a retried unit is never counted
twice. An exception raised by the unit's own code is not retried: it is raised here, as a
``RuntimeError`` naming the unit, like the local backend's.

Every worker process keeps per-job state (``agents.tournament.worker.WORKER_STATE``: rules, agents,
the env) between the tasks it runs: ``init`` runs once per worker and job, keyed by a
token, so a cached env or policy is built once per process as in the local pool.

Ray is imported inside the functions: ``import agents`` never imports it.
"""

from __future__ import annotations

import importlib
import os
import sys
import uuid
from collections.abc import Callable, Iterable
from typing import Any

#: Resubmissions of a unit whose worker died before the unit is given up.
MAX_RETRIES = 3
#: What ``backend=`` accepts.
BACKENDS = ("local", "ray")


class RayUnavailableError(RuntimeError):
    """``--backend ray`` without Ray installed."""


def check_backend(backend: str, address: str | None = None) -> None:
    """A clear error for an unknown backend, or an address given to the local one."""
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}: allowed values are {', '.join(BACKENDS)}")
    if address is not None and backend != "ray":
        raise ValueError("address= is only used with backend='ray'")


def _import_ray():
    try:
        import ray
    except ImportError as e:
        raise RayUnavailableError(
            "the ray backend needs Ray: pip install 'pis-yedili[scale]'") from e
    return ray


_STATE: dict[str, Any] = {"token": None}


def _importable(fn: Callable) -> Callable:
    """``fn`` as its importable module's attribute. Under ``python -m agents.tournament``
    the tournament's functions live in ``__main__``, which cloudpickle ships by value, each
    with its own copy of the module globals: the worker state that ``init`` fills would not
    be the one ``fn`` reads."""
    if getattr(fn, "__module__", None) == "__main__":
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        if spec is not None and spec.name:
            return getattr(importlib.import_module(spec.name), fn.__name__, fn)
    return fn


def _run_unit(token: str, init: Callable, init_args: tuple, fn: Callable, unit):
    """The body of every task: ``init(*init_args)`` once per worker process and job."""
    if _STATE["token"] != token:
        init(*init_args)
        _STATE["token"] = token
    return fn(unit)


class RaySession:
    """A connection to a Ray cluster for the length of one job (see the module docstring)."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None):
        ray = _import_ray()
        self.ray = ray
        self.owned = not ray.is_initialized()
        if self.owned:
            address = address or os.environ.get("RAY_ADDRESS") or None
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address is None and num_cpus is not None:
                kwargs["num_cpus"] = num_cpus
            try:
                ray.init(address=address, **kwargs)
            except ConnectionError as e:
                raise RuntimeError(f"cannot connect to the Ray cluster at {address!r}: {e}") \
                    from e
        self._remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_run_unit)

    @property
    def cpus(self) -> int:
        """The cluster's CPUs (the default number of units in flight)."""
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def run_unordered(self, units: Iterable, fn: Callable, on_result: Callable[[Any], None],
                      workers: int | None = None, init: Callable = lambda: None,
                      init_args: tuple = ()) -> None:
        """``on_result(fn(unit))`` for every unit, in completion order, at most ``workers``
        units in flight. ``fn``, ``init`` and the units must be picklable (module-level)."""
        ray = self.ray
        fn, init = _importable(fn), _importable(init)
        token = uuid.uuid4().hex
        args_ref = ray.put(init_args)
        limit = max(1, workers or self.cpus)
        pending: dict[Any, Any] = {}
        todo = iter(units)
        try:
            while True:
                while len(pending) < limit:
                    unit = next(todo, _END)
                    if unit is _END:
                        break
                    pending[self._remote.remote(token, init, args_ref, fn, unit)] = unit
                if not pending:
                    return
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    unit = pending.pop(ref)
                    try:
                        out = ray.get(ref)
                    except ray.exceptions.RayTaskError as e:
                        cause = e.cause if getattr(e, "cause", None) is not None else e
                        raise RuntimeError(
                            f"work unit {unit!r} failed: {type(cause).__name__}: {cause}") \
                            from cause
                    except ray.exceptions.WorkerCrashedError as e:
                        raise RuntimeError(
                            f"work unit {unit!r}: its worker died {MAX_RETRIES + 1} times") \
                            from e
                    on_result(out)
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def map(self, fn: Callable, units: list, workers: int | None = None,
            init: Callable = lambda: None, init_args: tuple = (),
            on_result: Callable[[Any], None] | None = None) -> list:
        """``[fn(u) for u in units]`` as Ray tasks, in the order of ``units``."""
        results: dict[int, Any] = {}

        def keep(out):
            i, value = out
            results[i] = value
            if on_result is not None:
                on_result(value)

        self.run_unordered(list(enumerate(units)), _Indexed(fn), keep, workers, init, init_args)
        return [results[i] for i in range(len(units))]

    def close(self) -> None:
        """Shuts Ray down if this session started it."""
        if self.owned and self.ray.is_initialized():
            self.ray.shutdown()
        self.owned = False

    def __enter__(self) -> RaySession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Indexed:
    """``(i, unit) -> (i, fn(unit))``, picklable."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def __call__(self, item):
        i, unit = item
        return i, self.fn(unit)


_END = object()
