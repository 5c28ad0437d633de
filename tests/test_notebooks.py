"""Execute the research notebooks with the small budget (``PIS_NB_BUDGET=small``).

Each notebook reads its budget from the environment in its parameter cell; the kernel
inherits this process's environment, so setting the variable here is enough. The
committed notebooks (executed with the full budget by ``scripts/run_notebooks.sh``) must
carry their outputs, without errors, and stay small.
"""

from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat
import pytest

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))

CELL_TIMEOUT_S = 600
MAX_NOTEBOOK_BYTES = 1_000_000


def _ids(paths):
    return [p.stem for p in paths]


def test_notebooks_exist():
    assert [p.name[:3] for p in NOTEBOOKS] == ["01_", "02_", "03_"], NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs_with_small_budget(path: Path, monkeypatch):
    from jupyter_client.kernelspec import KernelSpecManager

    # ipykernel provides the "python3" kernel; jupyter_client starts it with this
    # interpreter (sys.executable), so the notebook sees the same installed packages.
    KernelSpecManager().get_kernel_spec("python3")

    monkeypatch.setenv("PIS_NB_BUDGET", "small")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},
    )
    client.execute()  # raises CellExecutionError (with the cell and traceback) on failure
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_committed_notebook_has_outputs(path: Path):
    size = path.stat().st_size
    assert size < MAX_NOTEBOOK_BYTES, f"{path.name} is {size} bytes; lower the figure dpi"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    unexecuted = [i for i, c in enumerate(code) if c.get("execution_count") is None]
    assert not unexecuted, (
        f"{path.name}: code cells {unexecuted} have no outputs; run scripts/run_notebooks.sh"
    )
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"], f"{path.name}: errors"
    assert any("image/png" in o.get("data", {}) for o in outputs), f"{path.name}: no plots"
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "budget=small" not in text, f"{path.name} was committed with the small budget"
