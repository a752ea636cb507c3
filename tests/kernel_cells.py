"""Cells run in a real IPython kernel (``jupyter_client``, ``ipykernel``), for the tests of what
a notebook shows (tests/test_startup.py, tests/test_pydantic_ai_tool_raised.py)."""

from __future__ import annotations

from typing import Any

import pytest


def kernel_cells(cells: list[str]) -> list[list[dict[str, Any]]]:
    """``cells`` run one after another in a fresh kernel: each cell's outputs, in order (the
    ``data`` of its results and displays, and its printed text as ``{"text": ...}``); a cell
    that raises fails the test with the kernel's traceback. Skipped where no kernel can start."""
    manager_module = pytest.importorskip("jupyter_client.manager")
    pytest.importorskip("ipykernel")
    manager, client = manager_module.start_new_kernel(kernel_name="python3")
    outputs: list[list[dict[str, Any]]] = []
    try:
        for code in cells:
            msg_id = client.execute(code)
            got: list[dict[str, Any]] = []
            while True:
                msg = client.get_iopub_msg(timeout=120)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                kind = msg["msg_type"]
                if kind in ("execute_result", "display_data"):
                    got.append(msg["content"]["data"])
                elif kind == "stream":
                    got.append({"text": msg["content"]["text"]})
                elif kind == "error":
                    pytest.fail("\n".join(msg["content"]["traceback"]))
                elif kind == "status" and msg["content"]["execution_state"] == "idle":
                    break
            outputs.append(got)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return outputs
