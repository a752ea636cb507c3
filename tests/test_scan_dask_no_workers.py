"""A scan on a Dask cluster that has no workers (C-5): it lost every one mid-scan, or never had
one. Dask keeps the scan's tasks until a worker comes, rightly (an adaptive cluster adds
workers), so the scan waits; but not without a word: it warns once, naming the cluster's
scheduler, and goes on when a worker comes; an interrupt (Ctrl-C, a kernel's interrupt) stops
it and cancels its tasks on the cluster, which would otherwise wait there for a worker."""

from __future__ import annotations

import _thread
import json
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.dask_waits import Meanwhile
from turnfold.corpus import Item, scan
from turnfold.corpus import engine as engine_module

TREE = Path(__file__).parent / "fixtures" / "corpus"
#: What the warning of a cluster without workers says, after the scheduler's address.
NO_WORKERS = "has had no workers for 1 s: the scan waits for one"

pytestmark = [pytest.mark.usefixtures("cache_dir"), pytest.mark.slow]


@pytest.fixture
def quick_looks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan looks at its cluster every fifth of a second and warns of one a second without
    workers; a file a chunk, so a scan is many tasks."""
    monkeypatch.setattr(engine_module, "DASK_LOOK_SECONDS", 0.2)
    monkeypatch.setattr(engine_module, "DASK_NO_WORKERS_SECONDS", 1.0)
    monkeypatch.setattr(engine_module, "CHUNK_ITEMS", 1)


def _rows(corpus: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(json.dumps(corpus.rows, default=str))
    return rows


def _no_workers_said(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if NO_WORKERS in str(w.message)]


def _gate_plugin(marks: Path) -> Any:
    """A worker plugin (pickled by value: a Dask worker imports no test module) whose worker
    holds its third file until ``marks/open`` exists, having made ``marks/reached``: the scan
    is then under way, two files read, the third's task on the worker."""
    import distributed

    reached, opened = str(marks / "reached"), str(marks / "open")

    class Gate(distributed.WorkerPlugin):  # type: ignore[misc]
        def setup(self, worker: Any) -> None:
            import importlib
            import os
            import time

            summarize = importlib.import_module("turnfold.corpus.summarize")
            real = summarize.examine
            reads: list[str] = []

            def reading(item: Any, *args: Any, **kwargs: Any) -> Any:
                reads.append(item.key)
                if len(reads) == 3 and not os.path.exists(opened):
                    with open(reached, "w"):
                        pass
                    while not os.path.exists(opened):  # this worker is closed meanwhile
                        time.sleep(0.05)
                return real(item, *args, **kwargs)

            summarize.examine = reading

    return Gate()


def test_C5_a_scan_whose_cluster_loses_every_worker_warns_once_and_goes_on_with_a_new_one(
    tmp_path: Path, quick_looks: None
) -> None:
    pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    marks = tmp_path / "marks"
    marks.mkdir()
    expected = _rows(scan(tree, workers=1, cache=False))
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=None)  # fmt: skip
    with cluster, distributed.Client(cluster) as client:
        client.register_plugin(_gate_plugin(marks), name="gate")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            steps = Meanwhile(
                # Mid-scan, every worker goes: the cluster is scaled to none.
                ("the worker reached its third file", (marks / "reached").exists,
                 lambda: cluster.scale(0)),
                # Warned of, the cluster gets a worker again, which reads the third file on.
                ("the scan warned of a cluster without workers",
                 lambda: bool(_no_workers_said(caught)),
                 lambda: ((marks / "open").touch(), cluster.scale(1))),
            )  # fmt: skip
            with steps:
                there = scan(tree, client=client, cache=False)
        said = _no_workers_said(caught)
    assert _rows(there) == expected
    assert said == [
        f"the Dask cluster at {cluster.scheduler_address} {NO_WORKERS} (a cluster that adds "
        "workers goes on by itself; interrupt the scan to stop it)"
    ]


def _isolated(tree: Path, client: Any) -> Any:
    """The work ``isolated`` does away from this process (a search's part read again to its
    end): here, reading a file; its tasks are the ones a chunk Dask gave up on is read in."""
    from turnfold.corpus import _examine_chunk

    files = sorted(path for path in tree.rglob("*.jsonl"))
    items = [Item(key=str(path), path=str(path), size=path.stat().st_size) for path in files]
    return engine_module.isolated(_examine_chunk, items, client=client)


@pytest.mark.parametrize("work", ["scan", "isolated"])
def test_C5_an_interrupt_stops_a_scan_waiting_for_workers_and_cancels_its_tasks(
    tmp_path: Path, quick_looks: None, work: str
) -> None:
    """A cluster that never had a worker: the scan (or the work read again item by item,
    :func:`~turnfold.corpus.engine.isolated`) warns, and an interrupt while it waits stops it;
    none of its tasks is left on the cluster to run when a worker comes."""
    pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    cluster = distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warned = ("the scan warned of a cluster without workers",
                      lambda: bool(_no_workers_said(caught)), _thread.interrupt_main)  # fmt: skip
            waiting = {"scan": lambda: scan(tree, client=client, cache=False),
                       "isolated": lambda: _isolated(tree, client)}[work]  # fmt: skip
            with pytest.raises(KeyboardInterrupt), Meanwhile(warned):
                waiting()
        assert len(_no_workers_said(caught)) == 1
        assert not client.futures
        # The cancel reaches the scheduler as a message of its own: it forgets the tasks.
        deadline = time.monotonic() + 30
        while _scheduler_tasks(client) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _scheduler_tasks(client) == 0


def _scheduler_tasks(client: Any) -> int:
    def count(dask_scheduler: Any) -> int:
        return len(dask_scheduler.tasks)

    tasks: int = client.run_on_scheduler(count)
    return tasks
