"""Data only: the run configs (``*.yaml``) and rules variants (``rules/*.yaml``), installed
as the package ``pis_yedili_configs`` and found by ``pis_env.shipped``. This file makes the
folder a regular package, which ``importlib.resources`` needs in an editable install."""
