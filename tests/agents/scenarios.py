"""The scenarios, written once in abstract actions and played on every agent its tools allow.

Several scenarios share one CLI run where they can (a CLI start costs seconds, a model turn
costs milliseconds): ``work`` reads, searches and lists in one parallel turn after some
thinking, runs a command that succeeds and one that fails, edits a file and writes a new one,
prints a very long output, delegates to a sub-agent, and is then resumed with a second prompt.
``interrupt`` starts a slow command and is interrupted (SIGINT) while it runs. ``trouble``
meets the model API failing: its first request is overloaded (a transient error the agent
retries, after which the turn goes on), and a later one is invalid (an error no retry mends,
which ends the agent's turn).

Every string a check looks for starts with ``TF-`` so that nothing the agent adds by itself
(system prompts, reminders) can match it by chance.
"""

from __future__ import annotations

from tests.agents.script import Call, Prompt, Scenario, Turn

NOTES = "A file for the agents to read.\nTF-NOTE-LINE: the line the edit replaces.\n"
APP = "def main() -> None:\n    print('TF-NEEDLE')  # what the search finds\n"

#: A command printing more than an agent keeps of it: the check looks for its first line. An
#: agent that keeps the tail instead looks for its last (:data:`LONG_OUTPUT_LAST`, in ``adapt``).
LONG_LINES = 6000
LONG_OUTPUT = Call("shell", {"command": f"seq -f 'TF-LINE-%g' 1 {LONG_LINES}"}, token="TF-LINE-1")
LONG_OUTPUT_LAST = f"TF-LINE-{LONG_LINES}"

SUBAGENT = Prompt(
    marker="TF-SUBTASK",
    text="TF-SUBTASK: echo a word and report back.",
    turns=(
        Turn(calls=(Call("shell", {"command": "echo TF-SUB-OK"}, token="TF-SUB-OK"),)),
        Turn(text="TF-SUB-DONE: the sub-agent echoed its word."),
    ),
)

FIRST = Prompt(
    marker="TF-FIRST",
    text="TF-FIRST: look around this folder, run the checks, fix the notes and delegate a step.",
    turns=(
        Turn(
            thinking="TF-THINK: read, search and list at once.",
            calls=(
                Call("read", {"path": "notes.txt"}, token="TF-NOTE-LINE"),
                Call("search", {"pattern": "TF-NEEDLE"}, token="app.py"),
                Call("list", {"path": "."}, token="notes.txt"),
            ),
        ),
        Turn(calls=(Call("shell", {"command": "printf 'TF-OK-%s\\n' 23"}, token="TF-OK-23"),)),
        Turn(
            calls=(
                Call(
                    "shell",
                    {"command": "echo TF-FAIL-OUT; ls /tf-missing; exit 3"},
                    outcome="fail",
                    token="TF-FAIL-OUT",
                ),
            )
        ),
        Turn(
            text="TF-FIX: editing the notes and adding a file.",
            calls=(
                Call("edit", {"path": "notes.txt", "old": "TF-NOTE-LINE", "new": "TF-EDITED"}),
                Call("write", {"path": "new.txt", "content": "TF-NEW-FILE\n"}),
            ),
        ),
        Turn(calls=(LONG_OUTPUT,)),
        Turn(calls=(Call("spawn", {"task": SUBAGENT.text}),)),
        Turn(calls=(Call("wait"),)),
        Turn(text="TF-DONE-1: read, searched, listed, ran, edited, wrote and delegated."),
    ),
)

SECOND = Prompt(
    marker="TF-SECOND",
    text="TF-SECOND: one more check after the resume, please.",
    turns=(
        Turn(calls=(Call("shell", {"command": "echo TF-AGAIN"}, token="TF-AGAIN"),)),
        Turn(text="TF-DONE-2: still fine after the resume."),
    ),
)

WORK = Scenario(
    name="work",
    prompts=(FIRST, SECOND),
    subagent=SUBAGENT,
    files={"notes.txt": NOTES, "src/app.py": APP},
)

INTERRUPT = Scenario(
    name="interrupt",
    prompts=(
        Prompt(
            marker="TF-SLOW",
            text="TF-SLOW: run the slow job.",
            turns=(
                Turn(
                    calls=(
                        Call(
                            "shell",
                            {"command": "echo TF-SLOW-START; sleep 45"},
                            outcome="cancelled",
                        ),
                    )
                ),
                Turn(text="TF-NEVER: this turn is never reached."),
            ),
        ),
    ),
    interrupt=True,
)

TROUBLE = Scenario(
    name="trouble",
    prompts=(
        Prompt(
            marker="TF-TROUBLE",
            text="TF-TROUBLE: run the check, then carry on.",
            turns=(
                Turn(
                    failure="retry",
                    text="TF-RETRIED: the check, once the model answered.",
                    calls=(Call("shell", {"command": "echo TF-CHECKED"}, token="TF-CHECKED"),),
                ),
                Turn(failure="fatal"),
            ),
        ),
    ),
    fails=True,
)

SCENARIOS = {s.name: s for s in (WORK, INTERRUPT, TROUBLE)}
