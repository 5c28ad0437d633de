#!/usr/bin/env bash
# Execute the research notebooks in place with the full budget, so that their committed
# outputs (the plots shown on the repository page) are regenerated:
#
#   scripts/run_notebooks.sh                     # every notebooks/*.ipynb
#   scripts/run_notebooks.sh notebooks/02_*.ipynb
#   PIS_NB_BUDGET=small scripts/run_notebooks.sh # quick check (do not commit the result)
#
# Uses .venv/bin/python (override with PY=...), which needs nbclient and ipykernel
# (the `dev` extra). Cells run with the notebooks/ folder as working directory.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
export PIS_NB_BUDGET="${PIS_NB_BUDGET:-full}"
export MPLBACKEND=Agg
export PYDEVD_DISABLE_FILE_VALIDATION=1
if [ "$#" -eq 0 ]; then
    set -- notebooks/*.ipynb
fi
"$PY" - "$@" <<'PYEOF'
import sys
import time

import nbformat
from nbclient import NotebookClient

for path in sys.argv[1:]:
    start = time.time()
    nb = nbformat.read(path, as_version=4)
    print(f"executing {path} ...", flush=True)
    NotebookClient(nb, timeout=3600, kernel_name="python3",
                   resources={"metadata": {"path": "notebooks"}}).execute()
    for cell in nb.cells:  # keep diffs small: drop per-run execution timestamps
        cell.get("metadata", {}).pop("execution", None)
    nbformat.write(nb, path)
    print(f"  done in {time.time() - start:.0f} s", flush=True)
PYEOF
