"""The scripted model server: plays a scenario to a real CLI and records what comes back.

Requests carry the whole conversation, so the server needs no memory of its own to know where
it is: the last user message holding one of the scenario's markers names the conversation (a
prompt, or the sub-agent's task), and the number of model turns after it is the step. Retries
and the CLIs' side requests (titles, routing checks) therefore never shift the script. Past the
end of a script the server answers with plain text, which ends the turn. A turn scripted to
fail (``Turn.failure``) is answered with the wire's API error instead: a ``retry`` one for the
step's first request only, a ``fatal`` one for every request of the step.

The record (:class:`Record`) is the truth of the run: every call the server issued, in order,
every tool result the agent sent back, as the wire carried it, and every response's token
counts, each response's its own (:meth:`~tests.agents.script.SentUsage.numbered`); an error
answer is recorded as an exchange whose reply has an ``error`` and no counts.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.agents.script import Call, ConcreteCall, Prompt, Reply, Scenario, SentUsage, Turn
from tests.agents.wire import Request, SeenResult

if TYPE_CHECKING:
    from tests.agents.clis import Agent

#: The text the server sends when a conversation asks past the end of its script.
EXTRA_TEXT = "Nothing more to do."
#: A bound on the requests of one play, so that a CLI stuck in a retry loop ends the test.
MAX_REQUESTS = 150


@dataclass(frozen=True)
class Issued:
    """A call the server sent: in which conversation, at which step, as what."""

    thread: str
    step: int
    call: Call
    concrete: ConcreteCall


@dataclass(frozen=True)
class Context:
    """What an agent may look at to write a concrete call: the request being answered, the
    calls issued earlier in the same conversation, the work folder."""

    request: Request
    earlier: list[Issued]
    work: Path

    def result_of(self, action: str) -> SeenResult | None:
        """The result the agent sent for the last earlier call of ``action``."""
        results = {r.call_id: r for m in self.request.messages for r in m.results}
        for issued in reversed(self.earlier):
            if issued.call.action == action:
                return results.get(issued.concrete.call_id)
        return None


@dataclass
class Exchange:
    """One model request and the server's answer (its token counts in ``reply.usage``), for
    the record and for debugging. ``side`` marks a request beside the conversation (a title, a
    routing check), ``thread`` None one of no scenario's conversations."""

    path: str
    thread: str | None
    step: int | None
    reply: Reply
    side: bool = False
    at: float = field(default_factory=time.time)
    #: Its place in the record, from 1: what its token counts are numbered by.
    number: int = 0


@dataclass
class Record:
    """Everything the server saw and did during one play."""

    issued: list[Issued] = field(default_factory=list)
    results: dict[str, SeenResult] = field(default_factory=dict)
    exchanges: list[Exchange] = field(default_factory=list)
    other_requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    #: Every user-side text the agent sent (prompts, and the context it injects itself).
    user_texts: set[str] = field(default_factory=set)

    def calls(self, thread: str) -> list[Issued]:
        """The calls issued in one conversation, in order (each once, though a retried request
        may have asked for it twice)."""
        seen: dict[str, Issued] = {}
        for issued in self.issued:
            if issued.thread == thread:
                seen.setdefault(issued.concrete.call_id, issued)
        return list(seen.values())

    def replies(self, thread: str) -> list[Reply]:
        return [e.reply for e in self.conversation([thread])]

    def conversation(self, threads: Iterable[str]) -> list[Exchange]:
        """The answers of the conversations ``threads``, side requests and API errors left out,
        in order."""
        wanted = set(threads)
        return [
            e for e in self.exchanges if e.thread in wanted and not e.side and not e.reply.error
        ]

    def failures(self, threads: Iterable[str]) -> list[Exchange]:
        """The requests of the conversations ``threads`` answered with an API error, in order."""
        wanted = set(threads)
        return [e for e in self.exchanges if e.thread in wanted and e.reply.error]


class ScriptedServer:
    """Serves one scenario to one agent on a socket given by the caller (see :mod:`netns`)."""

    def __init__(self, scenario: Scenario, agent: Agent, sock: socket.socket, work: Path) -> None:
        self.scenario = scenario
        self.work = work
        self.agent = agent
        self.record = Record()
        self.on_issue: Callable[[Issued], None] | None = None
        self._threads = scenario.markers()
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self), bind_and_activate=False)
        self._http.socket.close()
        self._http.socket = sock
        self._http.server_address = sock.getsockname()
        self._http.daemon_threads = True
        self._serving: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    def start(self) -> None:
        self._serving = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._serving.start()

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()
        if self._serving is not None:
            self._serving.join(timeout=5)

    # --- one request ---------------------------------------------------------------------

    def answer(self, path: str, body: dict[str, Any]) -> Reply | None:
        """The reply to a model request (None when it is not one the wire knows)."""
        wire = self.agent.wire
        if not wire.is_model_request(path):
            self.record.other_requests.append(path)
            return None
        request = wire.parse(body, path)
        with self._lock:
            self.record.bodies.append(body)
            if len(self.record.exchanges) >= MAX_REQUESTS:
                self.record.errors.append(f"more than {MAX_REQUESTS} model requests")
                return self._exchange(Exchange(path, None, None, Reply(text=EXTRA_TEXT), True))
            for message in request.messages:
                if message.role == "user" and message.text:
                    self.record.user_texts.add(message.text)
                for result in message.results:
                    self.record.results[result.call_id] = result
            thread, step = self._position(request)
            if thread is None or self.agent.is_side_request(request):
                side = Exchange(path, thread, step, wire.side_reply(request), side=True)
                return self._exchange(side)
            reply = self._play(request, self._threads[thread], thread, step)
            return self._exchange(Exchange(path, thread, step, reply))

    def _exchange(self, exchange: Exchange) -> Reply:
        """Record ``exchange`` with the token counts of the play's next response (under the
        lock: the numbers are the record's order); an API error carries none."""
        exchange.number = len(self.record.exchanges) + 1
        if exchange.reply.error is None:
            usage = SentUsage.numbered(exchange.number, self.agent.wire.COUNTS)
            exchange.reply = replace(exchange.reply, usage=usage)
        self.record.exchanges.append(exchange)
        return exchange.reply

    def _position(self, request: Request) -> tuple[str | None, int]:
        for index in range(len(request.messages) - 1, -1, -1):
            message = request.messages[index]
            if message.role != "user" or not message.text:
                continue
            found = [m for m in self._threads if m in message.text]
            if found:
                later = request.messages[index + 1 :]
                turns = sum(
                    m.role == "assistant" and (i == 0 or later[i - 1].role != "assistant")
                    for i, m in enumerate(later)
                )
                return found[0], turns
        return None, 0

    def _play(self, request: Request, prompt: Prompt, thread: str, step: int) -> Reply:
        if step >= len(prompt.turns):
            return Reply(text=EXTRA_TEXT)
        turn: Turn = prompt.turns[step]
        if turn.failure == "fatal" or (turn.failure == "retry" and not self._failed(thread, step)):
            return Reply(error=turn.failure)
        if thread == (self.scenario.subagent and self.scenario.subagent.marker):
            turn = self.agent.subagent_turn(turn, last=step == len(prompt.turns) - 1)
        calls = []
        for j, call in enumerate(turn.calls):
            call_id = self.agent.call_id(thread, step, j)
            try:
                context = Context(request, self.record.calls(thread), self.work)
                concrete = self.agent.concrete(call, call_id, context)
            except Exception as exc:  # a script the agent cannot play: the test reports it
                self.record.errors.append(f"{thread} step {step}: {call.action}: {exc!r}")
                continue
            self._check_schema(concrete, request)
            issued = Issued(thread, step, call, concrete)
            self.record.issued.append(issued)
            calls.append(concrete)
            if self.on_issue is not None:
                self.on_issue(issued)
        return Reply(thinking=turn.thinking, text=turn.text, calls=tuple(calls))

    def _failed(self, thread: str, step: int) -> bool:
        """Whether a request of this step was answered with an API error already."""
        return any(
            e.thread == thread and e.step == step and e.reply.error for e in self.record.exchanges
        )

    def _check_schema(self, call: ConcreteCall, request: Request) -> None:
        """The arguments fit the tool's declared schema (else the run tests the harness)."""
        schema = request.tools.get(call.name)
        if schema is None:
            self.record.errors.append(f"{call.name} is not among the tools {sorted(request.tools)}")
            return
        properties = schema.get("properties") or {}
        missing = set(schema.get("required") or []) - set(call.args)
        unknown = set(call.args) - set(properties) if properties else set()
        if missing or unknown:
            self.record.errors.append(
                f"{call.name} args {sorted(call.args)}: missing {sorted(missing)},"
                f" unknown {sorted(unknown)}"
            )


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the record is the log."""

        def do_GET(self) -> None:
            server.record.other_requests.append(f"GET {self.path}")
            self._send(server.agent.wire.other(self.path))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw or b"{}")
                reply = server.answer(self.path, body)
                wire = server.agent.wire
                if reply is None:
                    self._send(wire.other(self.path))
                elif reply.error is not None:
                    self._send(wire.failure(reply.error))
                else:
                    self._send(wire.respond(reply, wire.parse(body, self.path), self.path))
            except Exception:
                server.record.errors.append(f"POST {self.path}: {traceback.format_exc()}")
                with contextlib.suppress(OSError):
                    self.send_error(500)

        def _send(self, response: Any) -> None:
            self.send_response(response.status)
            self.send_header("content-type", response.content_type)
            self.end_headers()
            for chunk in response.chunks:
                self.wfile.write(chunk)
                self.wfile.flush()

    return Handler
