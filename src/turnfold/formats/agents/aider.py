"""Aider's chat history Markdown (``.aider.chat.history.md``, spec §11): one transcript per file.

Aider appends to the file as it runs (``InputOutput.append_chat_history`` in ``aider/io.py``);
every run of ``aider`` adds a session, so one file holds several. They are shown as one
transcript, each session opened by a :class:`SystemNotice`: the file is one project's running
conversation (``--restore-chat-history`` even feeds the earlier sessions back to the model), and
its sessions have no ids an eval log's ``sample=`` could name. What aider writes, and what each
piece becomes:

- ``# aider chat started at <local time>`` → a notice (``subtype="session"``) with the
  startup banner aider prints under it (version, model, repository); the version and model of
  the first session that printed its banner go to metadata;
- ``#### <line>`` (each line of the user's input, ``<blank>`` for an empty one) →
  :class:`UserMessage`, consecutive lines one prompt. ``/run`` and ``/test`` (and ``!``) are
  commands the user ran: a ``command`` call (``user_initiated``) whose result is what aider said
  next (the output itself is only on the terminal); ``/test`` adds its output to the chat only
  when the command fails, so "Added N lines of output" marks it an ``error``, no such line a
  ``success``; ``/run`` records no exit status (``unknown``). A chat command with a message
  (below) is a prompt with ``command`` set. Every other slash command (``/add``, ``/drop``,
  ``/ls``, ``/tokens``, ``/help`` or ``/ask`` alone, one aider could not tell) returns no
  message from ``Commands.run``, so ``Coder.run_one`` sends the model nothing: it is the user's
  command to aider, a notice (``subtype="command"``, its word in ``meta["aider_command"]``)
  followed by aider's output, read as below. Not being a prompt, it opens no turn (spec P-1:
  a turn is the model's answer), so a history of commands alone has none, in the view, the
  session header and the corpus row alike (spec C-2). ``/paste`` of clipboard text is the one
  that sends something (the text, logged as its output, with no ``####`` of its own): the
  reply after it is a turn without a prompt;
- ``#### `` is also what ``Coder.run(with_message=…)`` logs of a message aider sends on its
  own (``io.user_input``), so two more kinds of input are not the user's:

  - a chat command with a message (``/ask``, ``/code``, ``/architect``, ``/context``;
    ``_generic_chat_command`` in ``aider/commands.py``) runs a coder with it, which logs it
    again: the next ``####`` block that is that message is the same prompt, not a second one.
    ``/ok`` (aider after 0.86.2) sends "Ok, please go ahead and make those changes." and
    ``/help`` its question with the docs found for it (``aider/help.py``): that block is the
    prompt's ``meta["sent_text"]``. A command aider did not run (``Ambiguous command`` or
    ``Invalid command`` on the line after it) sends nothing: a command notice, as above;
  - in architect mode the architect's reply, once accepted (``Edit the files?``, or at once
    with ``--yes-always``), is the editor coder's message (``ArchitectCoder.reply_completed``
    in ``aider/coders/architect_coder.py``; its reasoning removed): a block that is the
    architect's last reply (aider replies again after a reflected message, such as the files
    its reply named being added) is a :class:`SystemNotice` (``subtype="editor_input"``, the
    block in ``meta["editor_input"]``) in the same turn, and the replies after it up to the
    next prompt are the editor model's (the banner's ``Editor model:``, else unknown: a model's
    settings may name another);
- the assistant's reply (``ai_output``: the model's Markdown after a blank line) →
  :class:`AssistantText`, after the reasoning it opens with, a :class:`Thinking` (``Coder.send``
  logs the reply with it: aider's own ``<thinking-content-…>`` tag around what the provider
  sent as ``reasoning_content``, or the model's ``reasoning_tag``, ``<think>``, in its text;
  ``aider/reasoning_tags.py``), split around each SEARCH/REPLACE block (the file name line, the
  fence and ``<<<<<<< SEARCH`` … ``=======`` … ``>>>>>>> REPLACE``, as
  ``find_original_update_blocks`` in ``aider/coders/editblock_coder.py`` reads them), which is an
  ``edit`` call ``{file_path, search, replace}`` with the block as a unified diff;
- aider's own output, each line quoted ``> `` (``tool_output``, ``tool_error``; a message of
  several lines written by ``tool_output`` has only its first line quoted, the rest follow
  unquoted up to the line ending in aider's two-space line break):

  - ``Applied edit to X`` → the pending edit calls of ``X`` succeed (an edit format without
    blocks, ``whole`` or ``udiff``, gets a call of its own); ``Did not apply edit to X
    (--dry-run)`` → ``cancelled``;
  - ``The LLM did not conform to the edit format.`` and the error under it → the blocks the
    error names (``SearchReplaceNoExactMatch``) fail with its text; when it names some, the
    others were applied (aider writes the blocks that matched before it raises); when it names
    none (a malformed reply), every pending block fails;
  - ``Tokens: 1.3k sent, [N cache write, N cache hit,] 46 received. [Cost: $0.0046 message,
    $0.0091 session.]`` → the :class:`~turnfold.model.Usage` of the reply before it (aider
    rounds to thousands above 1,000: ``1.3k`` is 1300) and ``meta["cost_usd"]``, on its last
    text, else on its first edit call (:mod:`turnfold.usage`: an editor's reply is often blocks
    alone); the file's ``cost_usd`` is the sum of each session's last session cost;
  - ``Commit abc1234 message`` → a notice (``subtype="commit"``, ``meta["commit"]``);
  - the commands of a reply's shell block (```` ```bash ````) and ``Run shell command? … : y``
    (``handle_shell_commands``) → a ``command`` call: ``cancelled`` when declined, else
    ``unknown`` (what they printed and their exit status are only on the terminal), with the
    ``Running …`` lines as its result;
  - the error of a model request (``litellm.APIError: …``, as litellm names its exceptions)
    → an :class:`AssistantError` when aider gave up on the request, a warning notice when
    the run ends ``Retrying in N seconds...``;
  - everything else (questions with their answers, warnings, the URL of the edit-errors page)
    → a notice per run of lines.

The file is Markdown, not JSON: ``load(path)`` reads it (``detect_path``/``read_path``); text
passed to ``load()`` is parsed as JSON lines before any format sees it, so this format is
path-only. Detection: the file's first non-blank line is ``# aider chat started at``.

Limits: the Markdown does not say where a reply ends, so a line of the model's own reply that
begins with ``> `` (a Markdown quote) or ``#### `` (a heading) reads as aider's output or the
user's input, as in aider's own ``split_chat_history_markdown``; token counts above 1,000 are
as rounded as aider printed them; entries have no times but their session's start. The
editor's input is told by its text alone (the file does not say it), so a reply aider wrote in
pieces (a retry, a continued long answer) is sent as one message that no longer matches it,
and stays a prompt.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from turnfold.formats.catalog import Records
from turnfold.formats.common import text_result
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.source import Source
from turnfold.formats.wording import notice as worded_notice
from turnfold.model import (
    AssistantError,
    AssistantText,
    Entry,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import usage_carrier

NAME = "aider"

RECORDS = Records(
    mapped={
        "session": "a notice: the session's start time and aider's startup banner; version and "
        "model → metadata",
        "user": "a prompt (consecutive #### lines; a chat command's message logged again is the"
        " same prompt); /run and /test: a command call; any other slash command, which sends"
        " the model nothing (/add, /ls, /tokens, /help alone): a notice with the command; the"
        " architect's reply sent to its editor: a notice in the turn",
        "assistant": "the reply's Markdown as text, around its edit blocks; the reasoning it "
        "opens with (<thinking-content-…>, <think>) as thinking",
        "assistant/edit": "a SEARCH/REPLACE block: an edit call {file_path, search, replace}, "
        "its diff as the result",
        "output/applied": "Applied edit to X: X's pending edit calls succeed",
        "output/edit_error": "the edit-format error: the blocks it names fail with its text",
        "output/tokens": "usage of the reply (its last text, else its first edit call), cost in"
        " meta and metadata",
        "output/commit": "a notice with the commit's hash and message",
        "output/command": "a reply's shell commands aider asked to run: a command call; what "
        "aider said after them or after /run and /test: the call's result",
        "output/other": "a notice: aider's questions, answers, warnings and errors",
    },
    ignored={
        "blank": "the blank lines aider writes between pieces",
    },
)

_STARTED = "# aider chat started at "
_SNIFF = 4096
#: ``find_original_update_blocks``' markers (aider/coders/editblock_coder.py).
_HEAD = re.compile(r"^<{5,9} SEARCH>?\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_UPDATED = re.compile(r"^>{5,9} REPLACE\s*$")
_FENCE = "```"
_APPLIED = re.compile(r"Applied edit to (?P<path>.+)")
_DRY_RUN = re.compile(r"Did not apply edit to (?P<path>.+) \(--dry-run\)")
_COMMIT = re.compile(r"Commit (?P<sha>[0-9a-f]{7,40}) (?P<message>.*)")
_TOKENS = re.compile(
    r"Tokens: (?P<sent>[\d.]+k?) sent(?P<rest>.*?), (?P<received>[\d.]+k?) received\."
)
_CACHE = re.compile(r"(?P<count>[\d.]+k?) cache (?P<kind>write|hit)")
_COST = re.compile(r"Cost: \$(?P<message>[\d.]+) message, \$(?P<session>[\d.]+) session\.")
_NO_MATCH = re.compile(
    r"## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in "
    r"(?P<path>.+)\n"
    r"<{7} SEARCH\n(?P<search>.*?)={7}\n",
    re.DOTALL,
)
_LOCAL_TIME = re.compile(r"[\d-]+ [\d:]+")
_VERSION = re.compile(r"Aider v(\S+)")
_MODEL = re.compile(r"(?:Main model|Model): (\S+)")
_EDITOR_MODEL = re.compile(r"Editor model: (\S+)")
#: The chat commands that send a message through a coder of their own (``Coder.run``, which
#: logs it again: ``_generic_chat_command``, ``cmd_ok``, ``cmd_help`` in aider/commands.py).
_CHAT_COMMANDS = ("/ask", "/code", "/architect", "/context", "/ok", "/help")
_OK = "Ok, please go ahead and make those changes."
#: What ``Commands.run`` says, right after the input, when a command word names no one
#: command: it ran nothing, so it sent nothing.
_NOT_RUN = ("Ambiguous command:", "Invalid command:")
#: A model request that failed: aider writes the exception litellm raised (``str(err)``,
#: ``send_message`` in ``aider/coders/base_coder.py``), then ``Retrying in N seconds...`` when
#: it tries again.
_API_ERROR = re.compile(r"litellm\.\w+(?:Error|Exception)\b")
_RETRYING = re.compile(r"Retrying in [\d.]+ seconds\.\.\.")
#: The reasoning a reply's text may hold, which ``remove_reasoning_content`` takes out of
#: what the editor is sent (``aider/reasoning_tags.py``: aider's own tag, or a model's
#: ``reasoning_tag``, ``think`` in its model settings).
_REASONING_END = re.compile(r"</(?:thinking-content-[0-9a-f]+|think)>")
#: The same reasoning opening a reply: ``show_send_output_stream`` writes ``<tag>\n\n`` before
#: the first ``reasoning_content`` and ``\n\n</tag>\n\n`` when the answer starts.
_REASONING_OPEN = re.compile(r"<(thinking-content-[0-9a-f]+|think)>")
#: ``handle_shell_commands``' question about the commands of a reply's shell block, answered.
_RUN_QUESTION = re.compile(r"Run shell commands?\? \(Y\)es/\(N\)o.*\]: (?P<answer>\w)")
_EDIT_ERROR = "The LLM did not conform to the edit format."
_COMMANDS = {"/run": "run", "/test": "test", "!": "run"}


def detect_path(path: Path) -> Evidence | None:
    """An aider chat history: its first non-blank line opens a session."""
    try:
        with path.open("rb") as stream:
            head = stream.read(_SNIFF)
    except OSError:
        return None
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(_STARTED.encode()):
        return Evidence(share=1.0, marks=1)
    return None


def detect(source: Source) -> Evidence:
    """JSON records are never aider's: its history is Markdown, read by :func:`detect_path`."""
    return Evidence.none("no aider chat history (Markdown, read from its file)")


def read(source: Source) -> Transcript:
    """The history at ``source.path`` (``load(path, format="aider")`` of an open file).

    What it warned of stays with ``source``: the load hands it over (``settle_load``)."""
    if source.path is not None and source.path.is_file():
        return _read_file(source.path, source)
    raise TranscriptFormatError(
        source.name, [NAME], None, "aider's chat history is Markdown: pass the file's path"
    )


def read_path(path: Path) -> Transcript:
    """The transcript of the history at ``path``, with its warnings and accounting."""
    source = Source(str(path), iter(()), path=path)
    return source.hand_over(_read_file(path, source))


def _read_file(path: Path, source: Source) -> Transcript:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        source.warn(f"invalid UTF-8 at byte {exc.start}; undecodable bytes shown as U+FFFD", line)
        text = raw.decode("utf-8", errors="replace")
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or not lines[first].startswith(_STARTED):
        reason = "no '# aider chat started at' line opens the file"
        raise TranscriptFormatError(str(path), [NAME], None if first is None else first + 1, reason)
    reader = _Reader(source)
    reader.read(lines)
    return reader.transcript


# --- pieces of the file ----------------------------------------------------------------------


def _line_text(line: str) -> str:
    """A line without aider's Markdown line break (two trailing spaces)."""
    return line[:-2] if line.endswith("  ") else line


def _tokens(value: str) -> int:
    """``1.3k`` → 1300, ``46`` → 46 (aider's ``format_tokens``)."""
    return round(float(value[:-1]) * 1000) if value.endswith("k") else int(float(value))


def _sent_by(word: str, args: str, text: str) -> bool:
    """Whether ``text`` is the message the chat command ``word`` (a name or the start of one,
    as ``Commands.matching_commands`` reads it) sends for ``args``."""
    for name in _CHAT_COMMANDS:
        if len(word) < 2 or not name.startswith(word):
            continue
        if name == "/ok" and text == (f"{_OK} {args}" if args else _OK):  # cmd_ok → cmd_code
            return True
        if name == "/help" and text.startswith(f"# Question: {args}\n"):  # Help.ask's document
            return True
        if name not in ("/ok", "/help") and args and text == args:
            return True
    return False


def _sends(word: str, args: str) -> bool:
    """Whether the command ``word`` (a name or the start of one) sends the model a message for
    ``args``: a chat command with one, or ``/ok``, which sends words of its own. Without a
    message ``/ask`` and its kin switch the chat mode and ``/help`` lists the commands."""
    return len(word) >= 2 and any(
        name.startswith(word) and (bool(args) or name == "/ok") for name in _CHAT_COMMANDS
    )


def _not_run(lines: list[str], i: int) -> bool:
    """Whether aider's answer to the input ending before line ``i`` is that it names no one
    command (``Commands.run``)."""
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i < len(lines) and lines[i].startswith("> ") and lines[i][2:].startswith(_NOT_RUN)


def _squeezed(text: str) -> str:
    """``text`` without its whitespace: how a message and its copy in the log are compared (the
    log joins its lines with aider's line breaks and strips the reply)."""
    return "".join(text.split())


@dataclass
class _Block:
    """A SEARCH/REPLACE block of a reply: its lines ``start..end`` (file name and fences
    included) and what it edits."""

    start: int
    end: int
    path: str | None
    search: str
    replace: str


def _filename(lines: list[str]) -> str | None:
    """The file name on the (up to 3) lines before a block, as ``find_filename`` reads it."""
    for line in reversed(lines[-3:]):
        name = line.strip()
        if name.startswith(_FENCE):
            candidate = name.lstrip("`")
            if candidate and ("." in candidate or "/" in candidate):
                return candidate
            continue
        name = name.rstrip(":").lstrip("#").strip().strip("`").strip("*")
        return name or None
    return None


def _blocks(lines: list[str]) -> Iterator[_Block]:
    """The SEARCH/REPLACE blocks among a reply's lines; an unterminated one is not a block."""
    i, current = 0, None
    while i < len(lines):
        if "SEARCH" not in lines[i] or not _HEAD.match(lines[i].strip()):
            i += 1
            continue
        start = i  # the fence and the file name line above it belong to the block
        if start > 0 and lines[start - 1].strip().startswith(_FENCE):
            start -= 1
        if start > 0 and lines[start - 1].strip() and not lines[start - 1].startswith(_FENCE):
            start -= 1
        path = _filename(lines[max(0, i - 3) : i]) or current
        current = path
        j = i + 1
        while j < len(lines) and not _DIVIDER.match(lines[j].strip()):
            j += 1
        k = j + 1
        while k < len(lines) and not _UPDATED.match(lines[k].strip()):
            k += 1
        if k >= len(lines):
            return
        end = k + 1
        if end < len(lines) and lines[end].strip().startswith(_FENCE):
            end += 1
        search = "".join(line + "\n" for line in lines[i + 1 : j])
        replace = "".join(line + "\n" for line in lines[j + 1 : k])
        yield _Block(start, end, path, search, replace)
        i = end


def _diff(path: str | None, search: str, replace: str) -> str:
    # Imported here: every load of a path imports this module to sniff the file (detect_path).
    import difflib

    name = path or "file"
    return "".join(
        difflib.unified_diff(
            search.splitlines(keepends=True),
            replace.splitlines(keepends=True),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
        )
    )


# --- the reader ------------------------------------------------------------------------------


@dataclass
class _Session:
    cost: float | None = None
    model: str | None = None
    editor_model: str | None = None  # architect mode's (the banner's ``Editor model:``)


@dataclass
class _Reader:
    source: Source
    transcript: Transcript = field(default_factory=Transcript)
    _pending: list[ToolCall] = field(default_factory=list)  # edit calls of the last reply
    #: The entries of the replies since the last token report or prompt: what the next report
    #: counts (its usage goes where usage.py puts a response's).
    _response: list[Entry] = field(default_factory=list)
    _command: ToolCall | None = None  # the /run or /test call aider's output answers
    #: The last prompt, while it is a chat command whose message aider has yet to log again:
    #: the prompt, its command word and the words after it.
    _asked: tuple[UserMessage, str, str] | None = None
    #: The lines of each reply since the last prompt (first, past-the-last): the architect
    #: sends its editor the last of them (after a reflected message, aider replies again).
    _replies: list[tuple[int, int]] = field(default_factory=list)
    _editing: bool = False  # the replies since the last prompt are the editor's
    _sessions: list[_Session] = field(default_factory=list)
    _calls: int = 0

    def _add(self, entry: Entry) -> Entry:
        return self.transcript.append(entry)

    def read(self, lines: list[str]) -> None:
        self.transcript.metadata.update({"source_format": NAME, "agent": "aider"})
        i = 0
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                self.source.ignored("blank")
                i += 1
            elif line.startswith(_STARTED):
                i = self._session(lines, i)
            elif line.startswith("#### "):
                i = self._user(lines, i)
            elif line.startswith("> ") or line == ">":
                i = self._output(lines, i)
            else:
                i = self._reply(lines, i)
        self._settle_rest()
        costs = [s.cost for s in self._sessions if s.cost is not None]
        if costs:
            self.transcript.metadata["cost_usd"] = round(sum(costs), 6)

    # sessions and prompts

    def _session(self, lines: list[str], i: int) -> int:
        self._settle_rest()
        self._command = None
        self._asked, self._editing = None, False
        self._replies.clear()
        started = lines[i][len(_STARTED) :].strip()
        self._sessions.append(_Session())
        banner, j = self._quoted_run(lines, i + 1, skip_blank=True)
        notice = SystemNotice(
            text="\n".join([f"aider chat started at {started}", *banner]),
            subtype="session",
            timestamp=started.replace(" ", "T") if _LOCAL_TIME.fullmatch(started) else None,
        )
        self._add(notice)
        self.source.mapped("session")
        session, version = self._sessions[-1], None
        for text in banner:
            if m := _VERSION.fullmatch(text):
                version = m[1]
            elif m := _MODEL.match(text):
                session.model = m[1]
            elif m := _EDITOR_MODEL.match(text):
                session.editor_model = m[1]
        metadata = self.transcript.metadata
        if len(self._sessions) == 1:
            metadata["started_at"] = notice.timestamp
        # The first banner's: a session aider left before its banner (a question it asks
        # first, answered no) has none.
        if "version" not in metadata and "model" not in metadata:
            for key, value in (("version", version), ("model", session.model)):
                if value is not None:
                    metadata[key] = value
        return j

    def _quoted_run(self, lines: list[str], i: int, *, skip_blank: bool) -> tuple[list[str], int]:
        """The quoted lines from ``i`` on (continuations joined to their line): the banner."""
        texts: list[str] = []
        while i < len(lines):
            if skip_blank and not lines[i].strip() and not texts:
                self.source.ignored("blank")
                i += 1
                continue
            if not (lines[i].startswith("> ") or lines[i] == ">"):
                break
            text, i = self._message(lines, i)
            texts.append(text)
        return texts, i

    def _message(
        self, lines: list[str], i: int, *, through_blanks: bool = False
    ) -> tuple[str, int]:
        """One quoted message at ``i``: its line, and the unquoted lines ``tool_output`` wrote
        after it up to its closing line break (through blank lines when ``through_blanks``)."""
        first = lines[i][2:] if lines[i].startswith("> ") else ""
        if first.endswith("  ") or i + 1 >= len(lines):
            return _line_text(first).strip(), i + 1
        parts, j = [first], i + 1
        while j < len(lines):
            line = lines[j]
            if line.startswith(("> ", "#### ", _STARTED)) or line == ">":
                break
            if not line.strip() and not through_blanks:
                break
            parts.append(line)
            j += 1
            if line.endswith("  "):
                break
        return "\n".join(_line_text(p) for p in parts).strip(), j

    def _user(self, lines: list[str], i: int) -> int:
        self._settle_rest()
        texts: list[str] = []
        while i < len(lines) and lines[i].startswith("#### "):
            text = _line_text(lines[i][5:])
            texts.append("" if text == "<blank>" else text)
            i += 1
        prompt = "\n".join(texts)
        self.source.mapped("user")
        self._response.clear()
        self._command = None
        asked, self._asked = self._asked, None
        if asked is not None and _sent_by(asked[1], asked[2], prompt):
            # The chat command's message, logged again by the coder it ran: the same prompt.
            if prompt != asked[2]:
                asked[0].meta["sent_text"] = prompt
            return i
        if self._editor_input(prompt, lines):
            self._handoff(prompt)
            return i
        self._replies.clear()
        self._editing = False
        word, _, rest = prompt.partition(" ")
        if prompt.startswith("!"):
            word, rest = "!", prompt[1:]
        if word in _COMMANDS and rest.strip():
            self._calls += 1
            call = ToolCall(
                call_id=f"aider-{self._calls}",
                name="shell",
                args={"command": rest.strip()},
                description=rest.strip().splitlines()[0],
                status="success" if word == "/test" else "unknown",
                user_initiated=True,
            )
            call.meta["aider_command"] = word
            self._command = call
            self._add(call)
        elif prompt.startswith("/") and _sends(word, rest.strip()) and not _not_run(lines, i):
            message = UserMessage(text=rest, command=word)
            self._add(message)
            self._asked = (message, word, rest.strip())
        elif prompt.startswith("/"):
            # Nothing reaches the model: a prompt here would show a question no turn answers.
            notice = SystemNotice(text=prompt, subtype="command")
            notice.meta["aider_command"] = word
            self._add(notice)
        else:
            self._add(UserMessage(text=prompt))
        return i

    def _editor_input(self, prompt: str, lines: list[str]) -> bool:
        """Whether ``prompt`` is the architect's last reply, which it sends its editor
        (``ArchitectCoder.reply_completed``: the reply without its reasoning). A reply that a
        line of aider's broke in two (a quote in it) is tried whole."""
        if not self._replies or self._editing or not prompt.strip():
            return False
        sent = _squeezed(prompt)
        end = self._replies[-1][1]
        for start, _ in reversed(self._replies):
            reply = "\n".join(lines[start:end])
            if sent == _squeezed(reply):
                return True
            ends = list(_REASONING_END.finditer(reply))
            if ends and sent == _squeezed(reply[ends[-1].end() :]):
                return True
        return False

    def _handoff(self, prompt: str) -> None:
        """The architect's reply, sent to the editor: a notice in the same turn; the replies
        after it are the editor model's."""
        model = self._sessions[-1].editor_model if self._sessions else None
        key = "reader.sent_to_editor.model" if model else "reader.sent_to_editor"
        notice = worded_notice(key, {"model": model}, subtype="editor_input")
        notice.meta["editor_input"] = prompt
        self._add(notice)
        self._replies.clear()
        self._editing = True

    # replies

    def _reply(self, lines: list[str], i: int) -> int:
        """The assistant's Markdown from ``i`` to the next line aider wrote itself."""
        start = i
        while i < len(lines) and not (
            lines[i].startswith(("> ", "#### ", _STARTED)) or lines[i] == ">"
        ):
            i += 1
        end = i
        while end > start and not lines[end - 1].strip():
            end -= 1
        for _ in range(end, i):
            self.source.ignored("blank")
        self._settle_rest()
        self._command = None
        self._asked = None
        self._replies.append((start, end))
        body = lines[start:end]
        self.source.mapped("assistant")
        batch = f"aider-reply-{start + 1}"
        # The answer after the reasoning: edit blocks a model thinks about are not its edits.
        skipped = self._reasoning(body)
        start, body = start + skipped, body[skipped:]
        at = 0
        blocks = list(_blocks(body)) if any("SEARCH" in line for line in body) else []
        for block in blocks:
            self._text(body[at : block.start], start + at)
            self._calls += 1
            call = ToolCall(
                call_id=f"aider-{self._calls}",
                name="edit",
                args={"file_path": block.path, "search": block.search, "replace": block.replace},
                description=block.path,
                batch_id=batch,
                status="pending",
            )
            self._add(call)
            self._response.append(call)
            self.source.mapped("assistant/edit")
            self._pending.append(call)
            at = block.end
        self._text(body[at:], start + at)
        if blocks or any("SEARCH" in line for line in body):
            self._unterminated(body, start, len(blocks))
        return i

    def _reasoning(self, body: list[str]) -> int:
        """The reasoning ``body`` opens with, a :class:`Thinking`; the index of the line its
        answer starts on (the closing tag's, made what follows the tag), or past the end for a
        reply cut off while it reasoned (an interrupt)."""
        first = next((n for n, line in enumerate(body) if line.strip()), None)
        opened = _REASONING_OPEN.fullmatch(body[first].strip()) if first is not None else None
        if first is None or opened is None:
            return 0
        close = f"</{opened[1]}>"
        end = first + 1
        while end < len(body) and not body[end].lstrip().startswith(close):
            end += 1
        text = "\n".join(body[first + 1 : end]).strip()
        if text:
            thinking = Thinking(text=text)
            self._add(thinking)
            self._response.append(thinking)
        if end < len(body):
            body[end] = body[end].lstrip()[len(close) :]
        return end

    def _unterminated(self, body: list[str], start: int, blocks: int) -> None:
        heads = [n for n, line in enumerate(body) if _HEAD.match(line.strip())]
        if len(heads) > blocks:
            line = start + heads[blocks] + 1
            self.source.warn("a SEARCH block without its REPLACE end: shown as text", line)

    def _text(self, lines: list[str], start: int) -> None:
        text = "\n".join(lines).strip()
        if text:
            session = self._sessions[-1] if self._sessions else _Session()
            model = session.editor_model if self._editing else session.model
            entry = AssistantText(text=text, model=model)
            self._add(entry)
            self._response.append(entry)

    # aider's output

    def _output(self, lines: list[str], i: int) -> int:
        text = lines[i][2:].strip() if lines[i].startswith("> ") else ""
        if text == _EDIT_ERROR:
            return self._edit_error(lines, i)
        message, j = self._message(lines, i)
        if m := _APPLIED.fullmatch(message):
            self._applied(m["path"].strip(), "success", i)
        elif m := _DRY_RUN.fullmatch(message):
            self._applied(m["path"].strip(), "cancelled", i)
        elif message.startswith("Tokens: "):
            self._usage(message, i)
        elif m := _COMMIT.fullmatch(message):
            notice = SystemNotice(text=message, subtype="commit")
            notice.meta["commit"] = m["sha"]
            self._add(notice)
            self.source.mapped("output/commit")
        elif self._suggested(message, lines, j):
            message, j = self._message(lines, j)
            self._command_output(message)
        elif self._command is not None:
            self._command_output(message)
        else:
            texts = [message] if message else []
            while j < len(lines) and (lines[j].startswith("> ") or lines[j] == ">"):
                peek = lines[j][2:].strip()
                if peek == _EDIT_ERROR or _APPLIED.fullmatch(peek) or _COMMIT.fullmatch(peek):
                    break
                if peek.startswith("Tokens: "):
                    break
                more, j = self._message(lines, j)
                if more:
                    texts.append(more)
            self._notices(texts)
            self.source.mapped("output/other")
        return j

    def _notices(self, texts: list[str]) -> None:
        """A run of aider's output: a notice, up to the error of a model request that failed,
        if it holds one: from there the turn's error (aider gave up on the request: no retry
        follows), or a warning when aider retries it."""
        at = next((k for k, text in enumerate(texts) if _API_ERROR.match(text)), len(texts))
        if at:
            self._add(SystemNotice(text="\n".join(texts[:at]), subtype="aider"))
        if at == len(texts):
            return
        error = "\n".join(texts[at:])
        if _RETRYING.fullmatch(texts[-1]):
            self._add(SystemNotice(text=error, subtype="aider", level="warning"))
        else:
            self._add(AssistantError(message=error))

    def _suggested(self, subject: str, lines: list[str], j: int) -> bool:
        """Whether ``subject`` is the commands of a reply's shell block that aider asks to run
        next (``Run shell command?``): a ``command`` call, declined ones ``cancelled``, run ones
        ``unknown`` (their output and exit status are only on the terminal)."""
        question = _RUN_QUESTION.match(lines[j][2:]) if j < len(lines) else None
        if question is None or not lines[j].startswith("> ") or not subject:
            return False
        self._calls += 1
        run = question["answer"].lower() in ("y", "a")
        call = ToolCall(
            call_id=f"aider-{self._calls}",
            name="shell",
            args={"command": subject},
            description=subject.splitlines()[0],
            status="unknown" if run else "cancelled",
        )
        call.meta["aider_command"] = "suggested"
        self._add(call)
        self._command = call
        return True

    def _command_output(self, message: str) -> None:
        call = self._command
        assert call is not None
        before = call.result.text if call.result and call.result.text else ""
        call.result = text_result(f"{before}\n{message}".strip())
        added = message.startswith("Added ") and "of output to the chat" in message
        if added and call.meta.get("aider_command") == "/test":
            call.status = "error"  # /test adds its output only when the command failed
        self.source.mapped("output/command")

    def _applied(self, path: str, status: ToolStatus, i: int) -> None:
        self.source.mapped("output/applied")
        calls = [c for c in self._pending if c.args.get("file_path") == path]
        if not calls:
            # An edit format without blocks (whole file, udiff): the line is all there is.
            self._calls += 1
            call = ToolCall(
                call_id=f"aider-{self._calls}",
                name="edit",
                args={"file_path": path},
                description=path,
                status=status,
                result=text_result(
                    f"{'Applied' if status == 'success' else 'Did not apply'} edit to {path}"
                ),
            )
            self._add(call)
            return
        for call in calls:
            self._settle(call, status)
            self._pending.remove(call)

    def _settle(self, call: ToolCall, status: ToolStatus, error: str | None = None) -> None:
        call.status = status
        if error is not None:
            call.result = text_result(error)
        else:
            args = call.args
            call.result = ToolResult(
                text=_diff(args["file_path"], args["search"], args["replace"]), kind="diff"
            )

    def _settle_rest(self) -> None:
        """Edit calls no line of aider settled: nothing says what became of them."""
        for call in self._pending:
            args = call.args
            call.status = "unknown"
            call.result = ToolResult(
                text=_diff(args["file_path"], args["search"], args["replace"]), kind="diff"
            )
        self._pending.clear()

    def _edit_error(self, lines: list[str], i: int) -> int:
        """``The LLM did not conform…``, the edit-errors URL, then the error itself, its first
        line quoted and the rest not, through blank lines (``tool_output(str(err))``)."""
        j = i + 1
        parts = []
        if j < len(lines) and lines[j].startswith("> http"):
            j += 1
        if j < len(lines) and lines[j].startswith("> "):
            error, j = self._message(lines, j, through_blanks=True)
            parts.append(error)
        error = "\n".join(parts).strip()
        self.source.mapped("output/edit_error")
        failed = [(m["path"].strip(), m["search"]) for m in _NO_MATCH.finditer(error + "\n")]
        text = f"{_EDIT_ERROR}\n\n{error}".strip()
        for call in list(self._pending):
            args = call.args
            if not failed or (args["file_path"], args["search"]) in failed:
                self._settle(call, "error", text)
                self._pending.remove(call)
        if failed:  # the blocks that matched were written before aider raised
            for call in list(self._pending):
                self._settle(call, "success")
            self._pending.clear()
        return j

    def _usage(self, message: str, i: int) -> None:
        self.source.mapped("output/tokens")
        m = _TOKENS.search(message)
        cost = _COST.search(message)
        target = usage_carrier(self._response)
        if m is not None:
            cache = {c["kind"]: _tokens(c["count"]) for c in _CACHE.finditer(m["rest"])}
            usage = Usage(
                input_tokens=_tokens(m["sent"]),
                output_tokens=_tokens(m["received"]),
                cache_write_tokens=cache.get("write"),
                cache_read_tokens=cache.get("hit"),
            )
            if target is not None:  # where attach_usage puts it: found once, above
                target.usage = usage  # type: ignore[attr-defined]
        self._response.clear()
        if cost is not None:
            if target is not None:
                target.meta["cost_usd"] = float(cost["message"])
            if self._sessions:
                self._sessions[-1].cost = float(cost["session"])
        if m is None:
            self.source.warn(f"an unreadable token report: {message[:80]!r}", i + 1)
