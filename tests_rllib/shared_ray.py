"""The local Ray the RLlib tests share: starting one costs 4-10 s on two cores, most of
what a tiny RLlib run takes (``conftest.py``'s ``local_ray`` fixture)."""

from __future__ import annotations

import ray


def ensure_local_ray() -> str:
    """This session's local Ray (started on first use, 2 CPUs, no dashboard); its address,
    for a subprocess to join it (``train/rllib/ppo.py --address``)."""
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    return ray.get_runtime_context().gcs_address
