"""Drift report: the newest release of each agent, played through every scenario.

``python -m tests.agents.drift`` installs the newest version of each CLI into a scratch folder
(``npm install``, never touching the pinned install), plays every scenario on it, and prints per
agent: the version (and the pinned one), the record types its files hold that the loader's
catalogue (``turnfold.formats.<loader>.RECORDS``) does not list or that the load warned about or
left unaccounted, the fields of known record types not seen with the pinned version
(``fields.json``), and every truth check that fails. ``--pinned`` reports on the pinned install
instead; ``--write-fields`` records its fields as the new baseline (after a change of pin).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.agents.clis import AGENTS, Agent
from tests.agents.install import (
    HERE,
    PINNED_BIN,
    install_latest,
    installed_version,
    missing_cli,
    pinned_versions,
)
from tests.agents.netns import loopback_namespace, unavailable
from tests.agents.play import Play, play_again
from tests.agents.scenarios import SCENARIOS
from tests.agents.truth import check, load, records_catalogue
from turnfold import Transcript

FIELDS = HERE / "fields.json"
#: Nested objects whose keys count as fields of their record (``payload.status``).
NESTED = ("payload", "message", "toolUseResult", "item")


def fields_of(record: dict[str, Any]) -> set[str]:
    """A record's field names: its own keys and those of its main nested object."""
    names = set(record)
    for key in NESTED:
        inner = record.get(key)
        if isinstance(inner, dict):
            names |= {f"{key}.{k}" for k in inner}
    return names


def scan(agent: Agent, files: Iterable[Path]) -> dict[str, set[str]]:
    """Record type → field names, over every record of ``files``."""
    seen: dict[str, set[str]] = defaultdict(set)
    for path in files:
        for record in agent.records(path):
            seen[agent.record_type(record)] |= fields_of(record)
    return dict(seen)


def _transcripts(transcript: Transcript) -> Iterable[Transcript]:
    yield transcript
    for call in transcript.tool_calls():
        if call.subagent is not None and call.subagent.transcript is not None:
            yield from _transcripts(call.subagent.transcript)


def loader_view(plays: list[Play]) -> tuple[set[str], set[str], set[str]]:
    """Record types the loads accounted for, warned about, and left unaccounted."""
    counted: set[str] = set()
    warned: set[str] = set()
    lost: set[str] = set()
    for played in plays:
        for path in played.files:
            try:
                loaded = load(path)
            except Exception:
                continue
            for each in _transcripts(loaded):
                accounting = getattr(each, "accounting", None)
                if accounting is None:
                    continue
                counted |= set(accounting.counts)
                warned |= {k for k, v in accounting.counts.items() if v.get("warned")}
                lost |= {name for _, name in accounting.unaccounted}
    return counted, warned, lost


def report(
    agent: Agent, bin_dir: Path, baseline: dict[str, dict[str, list[str]]]
) -> dict[str, Any]:
    """Play every scenario on one agent and collect what changed."""
    version = installed_version(agent.name, bin_dir)
    out: dict[str, Any] = {"agent": agent.name, "version": version}
    reason = missing_cli(agent.name, bin_dir)
    if reason is not None:
        out["skipped"] = reason
        return out
    plays = []
    scratch = Path(tempfile.mkdtemp(prefix=f"turnfold-drift-{agent.name}-"))
    failures: list[str] = []
    begin = time.monotonic()
    with loopback_namespace() as namespace:
        for scenario in SCENARIOS.values():
            if not agent.plays(scenario):
                continue
            played = play_again(agent, scenario, bin_dir, scratch / scenario.name, namespace)
            plays.append(played)
            failures += [f"{scenario.name}: harness: {p}" for p in played.problems()]
            failures += [f"{scenario.name}: first attempt: {p}" for p in played.retried]
            failures += [f"{scenario.name}: {f}" for f in check(played)]
    out["seconds"] = round(time.monotonic() - begin, 1)
    out["scratch"] = str(scratch)
    seen = scan(agent, (f for p in plays for f in p.all_files))
    out["fields"] = {k: sorted(v) for k, v in sorted(seen.items())}
    catalogue = records_catalogue(agent.loader)
    counted, warned, lost = loader_view(plays)
    known = baseline.get(agent.name, {})
    new_types = sorted(
        t for t in set(seen) | counted if (catalogue is not None and t not in catalogue)
    )
    out["new_types"] = new_types if catalogue is not None else None
    out["warned_types"] = sorted(warned)
    out["unaccounted_types"] = sorted(lost)
    out["new_fields"] = {
        t: sorted(f - set(known[t]))
        for t, f in sorted(seen.items())
        if t in known and f - set(known[t])
    }
    out["types_without_baseline"] = sorted(t for t in seen if t not in known) if known else None
    out["failures"] = failures
    return out


def _print(result: dict[str, Any], pinned: str | None) -> None:
    name, version = result["agent"], result["version"]
    pin = f" (pinned {pinned})" if pinned and pinned != version else " (the pinned version)"
    print(f"\n== {name} {version}{pin if pinned else ''}")
    if "skipped" in result:
        print(f"   skipped: {result['skipped']}")
        return
    print(f"   played in {result['seconds']} s; files kept in {result['scratch']}")
    if result["new_types"] is None:
        print("   the loader declares no RECORDS catalogue; record types seen:")
        print("     " + ", ".join(result["fields"]))
    else:
        print(f"   record types not in the loader's catalogue: {result['new_types'] or 'none'}")
    print(f"   record types the load warned about: {result['warned_types'] or 'none'}")
    print(f"   records left unaccounted: {result['unaccounted_types'] or 'none'}")
    if result["types_without_baseline"] is None:
        print("   no field baseline (python -m tests.agents.drift --pinned --write-fields)")
    else:
        print(f"   record types new since the pin: {result['types_without_baseline'] or 'none'}")
        for kind, fields in result["new_fields"].items():
            print(f"   new fields of {kind}: {', '.join(fields)}")
        if not result["new_fields"]:
            print("   new fields of known record types: none")
    print(f"   failing truth checks: {len(result['failures']) or 'none'}")
    for failure in result["failures"]:
        print(f"     {failure[:400]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.agents.drift", description=__doc__)
    parser.add_argument("--pinned", action="store_true", help="report on the pinned install")
    parser.add_argument("--scratch", type=Path, help="where to install the newest versions")
    parser.add_argument("--write-fields", action="store_true", help="save fields.json (--pinned)")
    parser.add_argument("--json", type=Path, help="also write the whole report as JSON here")
    parser.add_argument("agents", nargs="*", choices=[*AGENTS, []], help="default: all of them")
    args = parser.parse_args(argv)
    if args.write_fields and not args.pinned:
        parser.error("--write-fields records the pinned versions' fields: use it with --pinned")
    if args.pinned:
        bin_dir = PINNED_BIN
    else:
        scratch = args.scratch or Path(tempfile.gettempdir()) / "turnfold-agents-latest"
        print(f"installing the newest releases into {scratch} ...", flush=True)
        bin_dir = install_latest(scratch)
    isolation = unavailable()
    print(
        "network: "
        + ("loopback-only namespace" if isolation is None else f"NOT isolated ({isolation})")
    )
    baseline = json.loads(FIELDS.read_text()) if FIELDS.exists() else {}
    pins = pinned_versions()
    results = []
    for name in args.agents or list(AGENTS):
        agent = AGENTS[name]
        result = report(agent, bin_dir.resolve(), baseline)
        results.append(result)
        _print(result, pins.get(agent.package))
    if args.write_fields:
        fields = {r["agent"]: r["fields"] for r in results if "fields" in r}
        FIELDS.write_text(json.dumps({**baseline, **fields}, indent=1, sort_keys=True) + "\n")
        print(f"\nfields of {', '.join(fields)} written to {FIELDS}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 1 if any(r.get("failures") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
