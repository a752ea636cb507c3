"""Re-execute notebooks in place so their stored outputs are deterministic (nbval compares them).

    python notebooks/execute.py notebooks/quickstart.ipynb notebooks/formats.ipynb

Execution counts become 1..n; no timing metadata and no widget state are stored (both change on
every run); the widget-view output, whose model id is random, is dropped, so a saved notebook
shows the widget's deterministic text/plain and text/html (spec W-4). Run it with an empty
``JUPYTER_CONFIG_DIR`` so saved display defaults do not leak into the outputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def clean(notebook: nbformat.NotebookNode) -> None:
    notebook.metadata.pop("widgets", None)
    notebook.metadata.get("language_info", {}).pop("version", None)
    count = 0
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        count += 1
        cell.execution_count = count
        for output in cell.outputs:
            if "execution_count" in output:
                output["execution_count"] = count
            output.get("data", {}).pop(WIDGET_VIEW, None)


def execute(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        store_widget_state=False,
    ).execute()
    clean(notebook)
    nbformat.validate(notebook)
    nbformat.write(notebook, path)
    print("executed", path)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        execute(Path(name))
