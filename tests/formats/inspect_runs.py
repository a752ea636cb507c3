"""Two runs of one Inspect task, written by the real ``inspect_ai``, to compare (spec B-3).

A baseline and a candidate run the same task (``arithmetic``: four sums, scored by ``match``)
against Inspect's ``mockllm/model``, each with a scripted model, so the runs differ the way two
agents do after a prompt change:

========  ====================================  =============================================
sample    baseline                              candidate
========  ====================================  =============================================
1         ``add``, answers right                the same
2         ``add``, answers right                ``add``, answers wrong: a regression
3         ``add``, answers right                ``lookup`` (fails), then ``add``, right
4         ``lookup`` (fails), answers wrong     ``add``, answers right: an improvement
========  ====================================  =============================================

Run as a script to regenerate the committed logs (``tests/fixtures/compare``):
``.venv/bin/python -m tests.formats.inspect_runs``.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import match
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import Tool, ToolError, tool

from tests.formats.inspect_logs import _offline_tokens, add

FIXTURES = Path(__file__).parents[1] / "fixtures" / "compare"
MODEL = "mockllm/model"

Run = Literal["baseline", "candidate"]
#: Each sample's sum, by id.
SUMS = {1: (3, 4), 2: (12, 30), 3: (7, 8), 4: (21, 21)}


def _task() -> Task:
    @tool
    def lookup() -> Tool:
        async def execute(key: str) -> str:
            """Look a remembered answer up.

            Args:
                key: The question.
            """
            raise ToolError(f"nothing remembered for {key}")

        return execute

    dataset = [
        Sample(input=f"What is {x} + {y}? Answer with the number only.", target=str(x + y), id=n)
        for n, (x, y) in SUMS.items()
    ]
    return Task(
        dataset=dataset,
        solver=[use_tools([add(), lookup()]), generate()],
        scorer=match(),
        name="arithmetic",
    )


#: What each run does, by sample: the tools it calls in order, then whether it answers right.
PLANS: dict[Run, dict[int, tuple[tuple[str, ...], bool]]] = {
    "baseline": {1: (("add",), True), 2: (("add",), True), 3: (("add",), True),
                 4: (("lookup",), False)},
    "candidate": {1: (("add",), True), 2: (("add",), False), 3: (("lookup", "add"), True),
                  4: (("add",), True)},
}  # fmt: skip


def _script(run: Run) -> Callable[..., ModelOutput]:
    def answer(input: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
        prompt = next(m.text for m in input if m.role == "user")
        number = next(n for n, (x, y) in SUMS.items() if prompt.startswith(f"What is {x} + {y}?"))
        x, y = SUMS[number]
        calls, right = PLANS[run][number]
        done = sum(1 for m in input if m.role == "tool")
        if done < len(calls):
            name = calls[done]
            args = {"x": x, "y": y} if name == "add" else {"key": f"{x} + {y}"}
            return ModelOutput.for_tool_call(MODEL, name, args, tool_call_id=f"call-{done}")
        return ModelOutput.from_content(MODEL, str(x + y if right else x + y + 1))

    return answer


def write_run(directory: Path, run: Run) -> Path:
    """Run the task as ``run`` and return the ``.eval`` log it wrote in ``directory`` (on a
    thread of its own: Inspect starts an event loop, see ``inspect_logs.write_log``)."""

    def work() -> Path:
        with _offline_tokens():
            [log] = inspect_eval(
                _task(),
                model=MODEL,
                model_args={"custom_outputs": _script(run)},
                log_dir=str(directory),
                display="none",
            )
        return Path(log.location)

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(work).result()


def main() -> None:
    import tempfile

    FIXTURES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for run in ("baseline", "candidate"):
            shutil.copy(write_run(Path(tmp) / run, run), FIXTURES / f"arithmetic_{run}.eval")
    print(f"wrote the two runs to {FIXTURES}", file=sys.stderr)


if __name__ == "__main__":
    main()
