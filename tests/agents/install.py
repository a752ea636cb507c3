"""Where the CLIs are: the pinned install of this folder, or a scratch install of other versions.

``npm install --no-save`` here installs the versions ``package.json`` pins exactly (and
``package-lock.json`` below them) into ``node_modules`` (``.ci/run`` does it; npm keeps its cache in
``~/.npm`` between runs). ``TURNFOLD_AGENTS_BIN`` points the tests
at another ``node_modules/.bin``: the drift report sets it to its scratch install of the newest
releases.

``.ci/run`` starts the tests while npm still installs the CLIs (on a clean machine that takes
its first minutes), with ``TURNFOLD_AGENTS_INSTALLING`` naming the file the install writes its
exit status to when it ends: the pinned install's CLIs are waited for where they are asked for,
so that a test never finds them missing (a skip) only because npm has not finished.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from tests.agents.clis import AGENTS

HERE = Path(__file__).parent
PINNED_BIN = HERE / "node_modules" / ".bin"
#: The file ``.ci/run``'s install of the pinned CLIs writes its exit status to when it ends.
INSTALLING = "TURNFOLD_AGENTS_INSTALLING"
#: Longer than the install takes on a clean machine (two to four minutes), however slow.
INSTALL_WAIT = 1200.0


def bin_dir() -> Path:
    """The ``.bin`` folder the tests run the CLIs from, once it is installed."""
    other = os.environ.get("TURNFOLD_AGENTS_BIN")
    if other:
        return Path(other).resolve()
    wait_for_install()
    return PINNED_BIN.resolve()


def wait_for_install() -> None:
    """Wait for the install ``.ci/run`` started (see :data:`INSTALLING`), if one is under way;
    raise if it failed or never ended."""
    status = os.environ.get(INSTALLING)
    if not status:
        return
    path, deadline = Path(status), time.monotonic() + INSTALL_WAIT
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the agents' CLIs were not installed in {INSTALL_WAIT:.0f} s")
        time.sleep(1)
    said = path.read_text().strip()
    if said != "0":
        raise RuntimeError(
            f"the install of the agents' CLIs failed (npm's exit status {said}); "
            "CI prints its log at the end"
        )


def missing_cli(name: str, where: Path | None = None) -> str | None:
    """Why agent ``name`` cannot run from ``where`` (default :func:`bin_dir`), or None."""
    agent = AGENTS[name]
    if not agent.executable(where or bin_dir()).exists():
        return f"{agent.package} is not installed (cd tests/agents && npm install --no-save)"
    return None


def pinned_versions() -> dict[str, str]:
    """Package → the exact version ``package.json`` pins."""
    manifest = json.loads((HERE / "package.json").read_text())
    return dict(manifest["dependencies"])


def installed_version(name: str, where: Path) -> str | None:
    """The version of agent ``name`` installed in the ``node_modules`` above ``where``."""
    package = where.parent / AGENTS[name].package / "package.json"
    try:
        return str(json.loads(package.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def install_latest(scratch: Path) -> Path:
    """Install the newest release of every agent into ``scratch``; its ``.bin`` folder.

    A plain ``npm install`` from the registry (the npm client, nothing else), into a folder of
    its own so that the pinned install is never touched."""
    scratch.mkdir(parents=True, exist_ok=True)
    pinned = pinned_versions()
    companions = {c: pinned[c] for a in AGENTS.values() for c in a.companions}
    manifest = {
        "name": "turnfold-agents-drift",
        "private": True,
        "dependencies": {**companions, **{a.package: "latest" for a in AGENTS.values()}},
    }
    (scratch / "package.json").write_text(json.dumps(manifest, indent=2))
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=scratch,
        check=True,
        timeout=900,
    )
    return scratch / "node_modules" / ".bin"
