"""Data only: the shipped policies and belief models (``*.pt``), installed as the package
``pis_yedili_models`` and found by ``pis_env.shipped``. This file makes the folder a
regular package, which ``importlib.resources`` needs in an editable install."""
