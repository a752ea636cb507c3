"""The live MLflow recipe (``tests/fixtures/traces/mlflow/mlflow_recipe.py``) plays its session
the same way every time: about one run in six failed, or recorded a failed model call in the
trace it leaves, with ``partially initialized module 'httpx' has no attribute 'Response'``.

MLflow's export thread imports LiteLLM (for a span's cost), which imports httpx; meanwhile the
recipe's thread makes its next call with openai, which speaks httpx2 and on each call looks
httpx up in ``sys.modules`` (to accept an httpx object as well), where a module another thread
is still importing already is. The recipe imported openai first, once enough when openai
imported httpx itself; openai 3 no longer does, so httpx was first imported by MLflow's thread.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: The repository: the probe imports the recipe as ``tests.fixtures…``, as the tests do.
REPOSITORY = Path(__file__).parents[2]
#: Long enough that a recipe that hangs is one, however slow the machine.
HANG = 600

#: The recipe played in a fresh interpreter, the thread that first imports httpx said: an
#: import finder is asked for a module only while it is not in ``sys.modules``.
PROBE = """\
import sys
import tempfile
import threading
from pathlib import Path


class FirstImport:
    def find_spec(self, name, path=None, target=None):
        if name == "httpx":
            print("httpx imported by", threading.current_thread().name, flush=True)
        return None


sys.meta_path.insert(0, FirstImport())
from tests.fixtures.traces.mlflow import mlflow_recipe

with tempfile.TemporaryDirectory() as folder:
    played = mlflow_recipe.run(Path(folder))
print("traces", len(played.trace_ids), flush=True)
"""


def test_the_mlflow_recipe_imports_httpx_whole_before_mlflow_s_export_thread_can() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPOSITORY, capture_output=True, timeout=HANG,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()[-4000:]
    said = [
        line for line in result.stdout.decode().splitlines() if line.startswith(("httpx", "traces"))
    ]
    assert said == ["httpx imported by MainThread", "traces 2"]
