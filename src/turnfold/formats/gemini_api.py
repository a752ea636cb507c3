"""Gemini API conversation contents (spec L-2): what a program that calls Gemini directly holds.

Input shapes:

- a list of ``Content`` objects ``{"role": "user" | "model" | "function", "parts": [...]}``:
  google-genai's ``chat.get_history()`` (its ``types.Content`` objects, which ``load`` turns into
  their ``model_dump(mode="json")``), their dumps in snake_case (``function_call``,
  ``inline_data.mime_type``; a Python ``model_dump()`` with its nulls and bytes too), or the REST
  API's camelCase JSON (``functionCall``, ``inlineData.mimeType``); as JSON lines too;
- a ``generateContent`` request body ``{"contents": [...], "systemInstruction": ...,
  "tools": [...], "generationConfig": ...}`` (google-genai's keywords ``{"model", "contents",
  "config": {"system_instruction", ...}}`` too): the system instruction's text goes to
  ``metadata["system"]``, the other keys to ``metadata`` under their snake_case names;
- a ``GenerateContentResponse`` ``{"candidates": [{"content", "finishReason"}],
  "usageMetadata", "modelVersion", "responseId"}``, alone or among the contents: its
  ``automaticFunctionCallingHistory`` (the calls google-genai made on the way), then its first
  candidate's content (a warning says when there are more: ``candidateCount``).

Mapping, per content (parts read by :mod:`~turnfold.formats.gemini_parts`):

- a user content (role ``user``, ``function``, or none: the API reads a content without a role
  as the user's): its text parts are a :class:`UserMessage`, its inline images the message's
  ``images``, other inline data and files (``fileData``) attachment lines in its text (name,
  media type, size), counted in ``meta`` (``images``, ``files``). Its ``functionResponse``
  parts are the results of earlier calls, not a prompt: paired with their call by ``id``, else
  (Gemini often omits ids, and google-genai's automatic function calling answers by name) with
  the oldest call of the response's ``name`` still waiting. A response holding ``error`` is
  ``error``, the API's documented convention; any other is ``success``, its ``output`` (or
  google-genai's lone ``result``, else the whole response) the result, images among its
  ``parts`` too. A response no call waits for is a call of its own, with a warning;
- a model content: ``thought: true`` parts are :class:`Thinking` (``form="summary"``: the API
  returns thought summaries), text an :class:`AssistantText`, ``functionCall`` a
  :class:`ToolCall` (``call_id`` its ``id``, else ``<name>@<line>.<n>``; the calls of one content
  are one batch), ``executableCode`` a ``code_execution`` call settled by the
  ``codeExecutionResult`` with its ``id``, else the oldest code waiting (``OUTCOME_OK`` success,
  any other outcome error, its output the result), server-side ``toolCall`` a call named by its
  ``toolType`` settled by the ``toolResponse`` with its id; inline images the model returned are
  the ``images`` of its text, other data and files a :class:`SystemNotice`; consecutive text
  (and thought) parts merge, as streamed chunks do;
- the chunks of a streamed response (``generate_content_stream``, each a response with the
  same ``responseId``) are one answer: a chunk's first text or thought goes on with the
  previous chunk's last;
- a response's ``usageMetadata`` is the :class:`Usage` of its content (``promptTokenCount``, the
  cached tokens included, as input; ``candidatesTokenCount`` plus ``thoughtsTokenCount`` as
  output, the thoughts its reasoning; ``cachedContentTokenCount`` as cache read), its
  ``responseId`` the usage's ``response_id`` and the batch of its calls, ``modelVersion`` the
  text's model and ``metadata["model"]``. ``finishReason`` ``MAX_TOKENS`` and the stops that
  cut an answer short (``MALFORMED_FUNCTION_CALL``…) are a warning :class:`SystemNotice`
  (subtype ``finish_reason``), a blocked answer (``SAFETY``, ``RECITATION``…) or prompt
  (``promptFeedback.blockReason``) an :class:`AssistantError`, which carries the response's
  usage when no text does (the prompt was billed).

Gemini CLI keeps its chat as such a list, and writes it so (``/chat share FILE.json``, and
``{"history": [...]}`` under ``/chat save``): its first user content is the ``<session_context>``
briefing the CLI sends, a :class:`SystemNotice` (``subtype="session_context"``) made as the chat
recordings' reader makes it (its facts shown, the whole in ``meta["context"]``:
:func:`~turnfold.formats.gemini.session_context_notice`); since 0.61 the briefing and the first
prompt are two parts of one content, the briefing the notice, the other part the user's message.
Qwen Code's context blocks (a text part that is one ``<system-reminder>`` or ``<qwen:…>``: its
skills, its briefing, the date) are notices (``subtype="context"``) where the contents are
surely a CLI's: a briefing in the CLI's own words among them (a user's plain contents may hold
such a tag as their own words). Both rules are
:func:`~turnfold.formats.gemini_injected.split_user_parts`; after a compression
(``chatCompressionService``) a user content that is one ``<state_snapshot>`` is the summary of a
:class:`CompactionBoundary`, and the model's ``Got it. Thanks for the additional context!`` after
it is that boundary's ``meta["reply"]``: neither is a turn of the user's. Before 0.29 the
briefing was untagged (``This is the Gemini CLI. We are setting up the context for our chat.``,
``Okay, just setting up …`` before 0.1.5: :data:`~turnfold.formats.gemini.OLDER_BRIEFING`), the
same notice, and until 0.9 the CLI put the model's ``Got it. Thanks for the context!`` after
it, kept as the notice's ``meta["reply"]``, no turn of the model's. Such contents are
Gemini CLI's (``metadata["agent"]``, spec H-6) when they surely are: a briefing in the CLI's own
words (``This is the Gemini CLI.``), or a file where ``/chat save`` keeps its checkpoints
(:func:`cli_checkpoint`). The rest proves nothing: Qwen Code, a fork, writes the same tool
names, snapshot and reply, and any program may name its functions ``read_file``; such
contents name no agent.

Part fields that carry nothing to show (``thoughtSignature``, media metadata) are passed over;
a part of any other kind is warned of, once per kind, never dropped without a word. The format
records no timestamps, so times and durations stay ``None``; a call whose response never came
stays ``unknown`` (spec L-3).

Detection: a ``Content`` has the fields ``role`` and ``parts`` and no others, and its parts are
objects without the ``type`` other message formats give theirs; a ``model`` role or a part of
Gemini's own (``text``, ``functionCall``…) marks it as this format's.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turnfold.formats.anthropic_blocks import attachment_line as anthropic_attachment_line
from turnfold.formats.catalog import Records
from turnfold.formats.common import (
    MessageBuilder,
    NameSet,
    as_list,
    change_entry,
    stringify,
    text_result,
)
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, READABLE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.gemini import (
    AGENT,
    BRIEFING_REPLY,
    is_briefing,
    names_gemini_cli,
    session_context_notice,
)
from turnfold.formats.gemini_injected import context_notice, split_user_parts
from turnfold.formats.gemini_parts import (
    Part,
    build_result,
    camel_keys,
    images_of,
    inline_image,
    joined_text,
    model_entries,
    response_text,
    rest_part,
    usage_from,
    usage_meta,
)
from turnfold.formats.source import Source, type_of_record
from turnfold.formats.wording import failure, notice
from turnfold.formats.wrappers import find_messages, keep_wrapper_keys, sample
from turnfold.model import (
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.usage import attach_usage

NAME = "gemini-api"
#: The summary Gemini CLI's chat compression puts in place of the turns it drops, and the model
#: reply it writes after it (``chatCompressionService``).
_STATE_SNAPSHOT = re.compile(r"^\s*<state_snapshot>.*</state_snapshot>\s*$", re.DOTALL)
_SNAPSHOT_REPLY = "Got it. Thanks for the additional context!"

#: A content is one record, named by its role; a response is one record.
RECORDS = Records(
    mapped={
        "user": "a prompt (UserMessage: text, inline images, other data and files as attachment "
        "lines), or function responses, the results of earlier calls; Gemini CLI's "
        "`<session_context>` a notice of its facts (the whole kept), also when sent in one "
        "content with the first prompt, its `<state_snapshot>` a compaction boundary; in a "
        "CLI's contents a part that is one <system-reminder> or <qwen:…> block (Qwen Code's "
        "skills, briefing, date) a notice of that context",
        "model": "thought summaries, text, function calls, code execution and server-side tool "
        "calls, in part order",
        "function": "function responses (the role older SDKs gave them), as a user content's",
        "content": "a content without a role: the user's, as the API reads it",
        "response": "a GenerateContentResponse: its automatic function calling history, then "
        "its first candidate's content with usage, model and finish reason",
    },
)

#: The name of the call an ``executableCode`` part becomes (as the ADK loader names it).
CODE_TOOL = "code_execution"
_ROLES = NameSet({"user", "model", "function"})
_CONTENT_FIELDS = frozenset({"role", "parts"})
#: Part fields of the Gemini API (REST names), the ``Part`` of google-genai's ``types``.
_PART_FIELDS = NameSet(
    {"text", "thought", "thoughtSignature", "functionCall", "functionResponse", "inlineData",
     "fileData", "executableCode", "codeExecutionResult", "videoMetadata", "mediaResolution",
     "toolCall", "toolResponse", "partMetadata", "mediaProcessing", "speechMetadata",
     "documentMetadata", "spreadsheetMetadata", "audioMetadata"}
)  # fmt: skip
#: Part fields that carry nothing to show: a thought's signature, media settings, metadata.
_SILENT = NameSet(
    {"thought", "thoughtSignature", "videoMetadata", "mediaResolution", "partMetadata",
     "mediaProcessing", "speechMetadata", "documentMetadata", "spreadsheetMetadata",
     "audioMetadata"}
)  # fmt: skip
_CODE_OK = "OUTCOME_OK"
#: Finish reasons of an answer the model gave in full (``CONTINUATION``: google-genai asks for
#: the rest itself).
_FINISHED = NameSet({"STOP", "FINISH_REASON_UNSPECIFIED", "CONTINUATION"})
#: Finish reasons of an answer withheld by a filter: no answer, an error.
_BLOCKED = NameSet(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
     "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR"}
)  # fmt: skip
#: Where a response keeps the contents google-genai's automatic function calling added.
_AFC_HISTORY = "automaticFunctionCallingHistory"


def _continues(before: AssistantText | Thinking, entry: Entry) -> bool:
    """Whether ``entry`` (the first of a streamed chunk) goes on with ``before`` (the last of
    the chunk before it): a text after a text, a thought after a thought, neither with
    images (a chunk of its own)."""
    if isinstance(before, AssistantText) and isinstance(entry, AssistantText):
        return not before.images and not entry.images
    return isinstance(before, Thinking) and isinstance(entry, Thinking)


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


class GeminiContentsBuilder(MessageBuilder):
    """Builds a transcript from Gemini API contents (and responses) fed one at a time.

    Function calls wait, in the order made, for the response with their id or, without one,
    of their name; code execution calls for the next result. Like the other message-list
    builders, earlier calls are settled through :meth:`Transcript.update`, and with
    ``live=True`` a call waiting for its response is ``executing`` (a static load leaves it
    ``unknown``). The input is never modified.

    ``cli=True``: the contents are surely a CLI's (a ``/restore`` checkpoint), so its context
    blocks are notices from the first content on; else from the first briefing in a CLI's own
    words (:func:`~turnfold.formats.gemini_injected.split_user_parts`).
    """

    def __init__(
        self,
        transcript: Transcript | None = None,
        source_name: str = "<contents>",
        *,
        cwd: str | None = None,
        live: bool = False,
        cli: bool = False,
    ) -> None:
        super().__init__(transcript, source_name, cwd=cwd, live=live)
        #: The contents are surely a CLI's: given, or told by a briefing in its own words.
        self._cli = cli
        #: How many records were contents or responses (a source with none is no such list).
        self.recognized = 0
        self._waiting: deque[ToolCall] = deque()  # function calls without a response, in order
        self._code: deque[ToolCall] = deque()  # code execution calls without a result
        self._unknown: set[str] = set()
        #: The ``responseId`` of the last response fed and the last entry it wrote: a streamed
        #: chunk of the same response continues that entry's text.
        self._streamed: tuple[str, Entry] | None = None
        #: The boundary of a ``<state_snapshot>`` just fed, until the content after it.
        self._snapshot: CompactionBoundary | None = None
        #: The notice of a briefing just fed, until the content after it.
        self._briefing: SystemNotice | None = None

    # --- feeding ------------------------------------------------------------------------------

    def feed(self, message: Any, line: int) -> None:
        """Add one content, or a response's contents."""
        self._content(message, line, f"msg-{line}")

    def _content(self, message: Any, line: int, batch: str) -> None:
        if is_response(message):
            self.feed_response(message, line)
        elif not is_content(message):
            what = f"keys {sorted(message)[:5]}" if isinstance(message, Mapping) else "no object"
            self.warn(f"not a Gemini Content ({what})", line)
        else:
            self.recognized += 1
            self._streamed = None
            parts = self._parts(message.get("parts"), line)
            snapshot, self._snapshot = self._snapshot, None
            briefing, self._briefing = self._briefing, None
            texts = [p.get("text") for p in parts]
            if message.get("role") != "model":
                self._user_content(parts, line, batch)
            elif snapshot is not None and texts == [_SNAPSHOT_REPLY]:
                snapshot.meta["reply"] = _SNAPSHOT_REPLY
            elif briefing is not None and texts == [BRIEFING_REPLY]:
                briefing.meta["reply"] = BRIEFING_REPLY
            else:
                self._model(parts, line, batch=batch)

    def feed_response(self, response: Mapping[str, Any], line: int) -> None:
        """A ``GenerateContentResponse``: the calls made on the way (google-genai's automatic
        function calling), then its first candidate's content, usage and finish reason."""
        self.recognized += 1
        fields = camel_keys(response)
        for place, content in enumerate(as_list(fields.get(_AFC_HISTORY)), start=1):
            self._content(content, line, f"msg-{line}.{place}")  # each answer its own batch
        model = fields.get("modelVersion")
        model = model if isinstance(model, str) and model else None
        if model is not None:
            self.transcript.metadata["model"] = model
        response_id = _string(fields.get("responseId")) or None
        usage = usage_from(camel_keys(fields.get("usageMetadata")))
        if usage is not None:
            usage.response_id = response_id
        candidates = as_list(fields.get("candidates"))
        candidate = next((camel_keys(c) for c in candidates), None)
        if len(candidates) > 1:  # candidateCount asked for several: the chat goes on with one
            self.warn(f"a response of {len(candidates)} candidates: the first shown", line)
        if candidate is None:
            self._blocked_prompt(camel_keys(fields.get("promptFeedback")), usage, model, line)
            return
        content = candidate.get("content")
        written: list[Entry] = []
        streamed = self._streamed
        self._streamed = None
        if isinstance(content, Mapping):
            parts = self._parts(content.get("parts"), line)
            # A chunk of ``generate_content_stream`` (its response's id again): its first text
            # goes on where the chunk before it stopped, as consecutive parts merge.
            after = streamed[1] if streamed and streamed[0] == response_id else None
            written = self._model(
                parts, line, usage=usage, model=model, batch=response_id, after=after
            )
            if response_id and written:
                self._streamed = (response_id, written[-1])
        elif content is not None:
            self.warn("a candidate whose content is no Content", line)
        stop = self._finish(candidate.get("finishReason"), candidate.get("finishMessage"))
        if usage is not None and stop is not None and not written:
            # No entry of the answer to carry the usage, but the prompt was billed: a blocked
            # answer's error counts it as its usage; a notice, which has none, only says it.
            carrier = attach_usage([stop], usage, model=model)
            if carrier is None:
                stop.meta["usage"] = usage_meta(usage)

    def _parts(self, parts: Any, line: int) -> list[Part]:
        read: list[Part] = []
        for part in as_list(parts):
            if isinstance(part, Mapping):
                read.append(rest_part(part))
            elif isinstance(part, str):  # google-genai's PartUnion: a string is a text part
                read.append({"text": part})
            else:
                self._warn_kind(type(part).__name__, line)
        return read

    # --- the user's contents ------------------------------------------------------------------

    def _user_content(self, parts: list[Part], line: int, batch: str) -> None:
        """A user's content, the CLI's context and briefing in it told from the user's words:
        each a notice of its own before the user's message."""
        split = split_user_parts(parts, is_briefing, cli=self._cli)
        self._cli = self._cli or split.cli
        if split.context:
            self.transcript.append(context_notice(split.context))
        if split.briefing:
            # Gemini CLI 0.61 sends its briefing and the first prompt in one content: the
            # briefing read alone is the notice of its facts, the prompt the user's message.
            self._user(split.briefing, line, batch)
        self._user(split.typed, line, batch)
        if split.briefing and split.typed:
            self._briefing = None  # the model answers the prompt, not the briefing

    def _user(self, parts: list[Part], line: int, batch: str) -> None:
        texts: list[str] = []
        images: list[ImageData] = []
        counts = {"images": 0, "files": 0}
        made: list[Entry] = []  # calls a user's content holds (code it ran, say): shown after it
        for part in parts:
            text = part.get("text")
            if isinstance(text, str):
                if text:
                    texts.append(text)
            elif "functionResponse" in part:
                self._function_response(part["functionResponse"], line)
            elif "inlineData" in part or "fileData" in part:
                image = _image_part(part)
                if image is not None:
                    images.append(image)
                    counts["images"] += 1
                else:  # a file the user attached: said, never dropped (issue 11.8)
                    texts.append(attachment_line(part))
                    counts["files"] += 1
            else:
                self._other(part, made, line, None, batch)
        text = "\n\n".join(texts)
        if not images and is_briefing(text):  # the CLI's briefing: nobody typed it
            if names_gemini_cli(text):
                self.transcript.metadata["agent"] = AGENT
            self._briefing = session_context_notice(text)
            self.transcript.append(self._briefing)
        elif not images and _STATE_SNAPSHOT.match(text):
            self._snapshot = CompactionBoundary(summary=text.strip())
            self.transcript.append(self._snapshot)
        elif text or images:
            meta = {key: n for key, n in counts.items() if n}
            self.transcript.append(UserMessage(text=text, images=images, meta=meta))
        for entry in made:
            self.transcript.append(entry)

    def _function_response(self, response: Any, line: int) -> None:
        if not isinstance(response, Mapping):
            self.warn("a functionResponse that is no object", line)
            return
        name = _string(response.get("name"))
        response_id = _string(response.get("id"))
        call = self._calls.get(response_id) if response_id else None
        if call is not None:
            self._stop_waiting(call)
        else:
            call = self._oldest_waiting(name)
        text, failed = response_text(response.get("response"))
        images = images_of(response.get("parts"))
        args = call.args if call is not None else None
        result = build_result(name, text=text, display=None, args=args, images=images,
                              failed=failed)  # fmt: skip
        status: ToolStatus = "error" if failed else "success"
        if call is None:
            said = f"{name!r}" + (f" (id {response_id!r})" if response_id else "")
            self._orphan(f"function response of {said}", response_id or f"{name}@{line}", name,
                         status, result, line)  # fmt: skip
        else:
            self._settle(call, status, result)

    def _oldest_waiting(self, name: str) -> ToolCall | None:
        """The oldest function call of ``name`` still waiting (any name's, for a response that
        names none), taken out of the calls waiting."""
        oldest = next((c for c in self._waiting if not name or c.name == name), None)
        if oldest is not None:
            self._stop_waiting(oldest)
        return oldest

    def _stop_waiting(self, call: ToolCall) -> None:
        # By identity: two calls may be equal entries (the same tool, arguments and id).
        for place, waiting in enumerate(self._waiting):
            if waiting is call:
                del self._waiting[place]
                return

    # --- the model's contents -----------------------------------------------------------------

    def _model(
        self,
        parts: list[Part],
        line: int,
        *,
        usage: Usage | None = None,
        model: str | None = None,
        batch: str | None = None,
        after: Entry | None = None,
    ) -> list[Entry]:
        """The entries of a model content, appended; ``after``: the last entry of the chunk
        of the same streamed response before it, which its first text or thought continues
        (the entries written then start with ``after``)."""
        batch_id = batch or f"msg-{line}"
        made: set[int] = set()  # the entries other parts made: no function calls

        def other(part: Part, entries: list[Entry]) -> None:
            before = len(entries)
            self._other(part, entries, line, model, batch_id)
            made.update(id(entry) for entry in entries[before:])

        entries = model_entries(
            parts, timestamp=None, batch_id=batch_id, model=model, usage=None,
            thought_form="summary", cwd=self.cwd, other=other,
        )  # fmt: skip
        for index, entry in enumerate(entries):
            if isinstance(entry, ToolCall) and id(entry) not in made:
                self._function_call(entry, line, index)
        first = entries[0] if entries else None
        if isinstance(after, (AssistantText, Thinking)) and (
            first is None or _continues(after, first)
        ):
            if isinstance(first, (AssistantText, Thinking)):
                change_entry(self.transcript, after, text=after.text + first.text)
                entries = entries[1:]
            for entry in entries:
                self.transcript.append(entry)
            # The response's usage (each chunk's counts so far) on its last text, shown.
            attach_usage([after, *entries], usage, self.transcript, model=model)
            return [after, *entries]
        attach_usage(entries, usage, model=model)
        for entry in entries:
            self.transcript.append(entry)
        return entries

    def _function_call(self, call: ToolCall, line: int, index: int) -> None:
        """A function call waits for its response; one without an id gets one of the format's
        (its response is found by name)."""
        if not call.call_id:
            call.call_id = f"{call.name or 'call'}@{line}.{index}"
        elif call.call_id in self._calls:
            self.warn(f"function call id {call.call_id!r} used again", line)
        call.status = self.open_status  # not in the transcript yet: no one to tell
        self._calls[call.call_id] = call
        self._waiting.append(call)

    def _other(
        self,
        part: Part,
        entries: list[Entry],
        line: int,
        model: str | None,
        batch: str | None = None,
    ) -> None:
        """A part that is no text, thought or function call, read into ``entries`` (a model
        content's, in part order) or into the calls it settles."""
        if "executableCode" in part:
            entries.append(self._code_call(part["executableCode"], batch, f"{line}.{len(entries)}"))
        elif "codeExecutionResult" in part:
            self._code_result(part["codeExecutionResult"], line)
        elif "toolCall" in part:
            entries.append(self._server_call(part["toolCall"], batch, f"{line}.{len(entries)}"))
        elif "toolResponse" in part:
            self._server_response(part["toolResponse"], line)
        elif "functionResponse" in part:
            self._function_response(part["functionResponse"], line)
        elif "inlineData" in part or "fileData" in part:
            image = _image_part(part)
            if image is not None:  # an image the model made: its text's, as Cline's are
                entries.append(AssistantText(text="", model=model, images=[image]))
            else:
                text = f"The model returned {attachment_line(part)}"
                entries.append(SystemNotice(text=text, subtype="attachment"))
        else:
            unknown = sorted(k for k in part if k not in _SILENT)
            if unknown:
                self._warn_kind(", ".join(unknown), line)

    def _code_call(self, code: Any, batch: str | None, where: str) -> ToolCall:
        code = camel_keys(code)
        source = code.get("code")
        first = next((s.strip() for s in _string(source).splitlines() if s.strip()), None)
        call = ToolCall(
            call_id=_string(code.get("id")) or f"code@{where}",
            name=CODE_TOOL,
            args={"code": source, "language": code.get("language")},
            description=first,
            status=self.open_status,
            batch_id=batch,
        )
        self._code.append(call)
        return call

    def _code_result(self, outcome: Any, line: int) -> None:
        outcome = camel_keys(outcome)
        result_id = _string(outcome.get("id"))
        call = next((c for c in self._code if c.call_id == result_id), None) if result_id else None
        if call is None and self._code and not result_id:
            call = self._code[0]
        said = _string(outcome.get("outcome")) or "no outcome"
        output = outcome.get("output")
        text = stringify(output) if output not in (None, "") else said
        status: ToolStatus = "success" if said == _CODE_OK else "error"
        result = text_result(text)
        if call is None:
            self._orphan("code execution result", result_id or f"code@{line}", CODE_TOOL,
                         status, result, line)  # fmt: skip
            return
        self._code.remove(call)
        self._settle(call, status, result, meta={**call.meta, "outcome": said})

    def _server_call(self, call: Any, batch: str | None, where: str) -> ToolCall:
        """A server-side tool call (Google Search, URL context…): the API runs it itself."""
        call = camel_keys(call)
        kind = _string(call.get("toolType"))
        entry = ToolCall(
            call_id=_string(call.get("id")) or f"tool@{where}",
            name=kind.lower() or "tool_call",
            args=call.get("args"),
            status=self.open_status,
            batch_id=batch,
            meta={"server_tool": True},
        )
        self._calls.setdefault(entry.call_id, entry)
        return entry

    def _server_response(self, response: Any, line: int) -> None:
        response = camel_keys(response)
        response_id = _string(response.get("id"))
        call = self._calls.get(response_id) if response_id else None
        text, failed = response_text(response.get("response"))
        status: ToolStatus = "error" if failed else "success"
        name = _string(response.get("toolType")).lower() or "tool_call"
        if call is None:
            self._orphan("server-side tool response", response_id or f"tool@{line}", name,
                         status, text_result(text), line)  # fmt: skip
        else:
            self._settle(call, status, text_result(text))

    # --- outcomes -----------------------------------------------------------------------------

    def _settle(
        self, call: ToolCall, status: ToolStatus, result: Any, meta: dict[str, Any] | None = None
    ) -> None:
        changes: dict[str, Any] = {"status": status, "result": result}
        if meta is not None:
            changes["meta"] = meta
        change_entry(self.transcript, call, **changes)  # a call of this content: not shown yet

    def _orphan(
        self, what: str, call_id: str, name: str, status: ToolStatus, result: Any, line: int
    ) -> None:
        """A result whose call the contents do not hold: a call of its own, arguments unknown."""
        self.warn(f"{what} answers no call in the contents: shown as a call of its own", line)
        call = ToolCall(call_id=call_id, name=name, status=status, result=result)
        call.meta["call_missing"] = True
        self.transcript.append(call)

    def _finish(self, reason: Any, message: Any) -> Entry | None:
        """What a candidate's finish reason says of the answer, appended; None for a whole one."""
        if not isinstance(reason, str) or reason in _FINISHED:
            return None
        said = message if isinstance(message, str) and message else None
        params = {"reason": reason, "said": said}
        tail = ".said" if said else ""
        entry: Entry
        if reason in _BLOCKED:
            entry = failure("reader.blocked" + tail, params)
        elif reason == "MAX_TOKENS":
            key = "reader.cut_off_max_tokens_gemini" + tail
            entry = notice(key, params, level="warning", subtype="finish_reason")
        else:
            key = "reader.stopped_early" + tail
            entry = notice(key, params, level="warning", subtype="finish_reason")
        return self.transcript.append(entry)

    def _blocked_prompt(
        self, feedback: dict[str, Any], usage: Usage | None, model: str | None, line: int
    ) -> None:
        reason = feedback.get("blockReason")
        if not isinstance(reason, str) or not reason:
            self.warn("a response without candidates", line)
            return
        said = feedback.get("blockReasonMessage")
        said = said if isinstance(said, str) and said else None
        key = "reader.prompt_blocked.said" if said else "reader.prompt_blocked"
        error = failure(key, {"reason": reason, "said": said})
        attach_usage([error], usage, model=model)  # the blocked prompt was still billed
        self.transcript.append(error)

    def _warn_kind(self, kind: str, line: int) -> None:
        if kind not in self._unknown:  # one warning per kind of part, not per part
            self._unknown.add(kind)
            self.warn(f"a part of kind {kind} not read", line)


def _image_part(part: Part) -> ImageData | None:
    """An ``inlineData`` part holding an image, as :class:`ImageData`."""
    data = part.get("inlineData")
    mime = data.get("mimeType") if isinstance(data, Mapping) else None
    if not (isinstance(mime, str) and mime.lower().startswith("image/")):
        return None
    return inline_image(data)


def attachment_line(part: Part) -> str:
    """An ``inlineData`` or ``fileData`` part as one line: its name (or URI), media type and
    size, as the Anthropic loader shows a file block (its content is not shown, that it was
    there is).

    >>> attachment_line({"fileData": {"fileUri": "gs://b/report.pdf",
    ...                               "mimeType": "application/pdf"}})
    '[attachment: gs://b/report.pdf · application/pdf]'
    """
    data = part.get("inlineData") or part.get("fileData")
    data = data if isinstance(data, Mapping) else {}
    name = _string(data.get("displayName")) or _string(data.get("fileUri"))
    encoded = data.get("data")
    block = {
        "type": "file",
        "name": name or None,
        "media_type": data.get("mimeType"),
        "source": {"data": encoded if isinstance(encoded, str) else None},
        "size": len(encoded) if isinstance(encoded, bytes | bytearray) else None,
    }
    return anthropic_attachment_line(block)


# --- detection and reading ------------------------------------------------------------------------


def is_content(value: Any) -> bool:
    """A ``Content``: ``role`` and ``parts`` and no other field (google-genai's ``Content``
    forbids others), a Gemini role or none, parts that are objects without a ``type``
    (another format's parts) or text; the SDK's empty answer (``Content(role="model")``) too."""
    if not isinstance(value, Mapping):
        return False
    fields = {k for k, v in value.items() if v is not None}
    if not fields or not fields <= _CONTENT_FIELDS:
        return False
    role = value.get("role")
    if role is not None and role not in _ROLES:
        return False
    parts = value.get("parts")
    if parts is None:
        return role == "model"
    return isinstance(parts, list) and all(
        isinstance(p, str) or (isinstance(p, Mapping) and "type" not in p) for p in parts
    )


def is_response(value: Any) -> bool:
    """A ``GenerateContentResponse``: candidates holding contents (or a finish reason), or a
    prompt's feedback without them; an ADK event (``author``) is none."""
    if not isinstance(value, Mapping) or "author" in value:
        return False
    fields = camel_keys(value)
    candidates = fields.get("candidates")
    if isinstance(candidates, list) and candidates:
        first = camel_keys(candidates[0])
        return "content" in first or "finishReason" in first
    return not candidates and isinstance(fields.get("promptFeedback"), Mapping)


def _classify(value: Any) -> int:
    if is_response(value):
        return DISTINCTIVE
    if not is_content(value):
        return NOT_MINE
    if value.get("role") == "model":
        return DISTINCTIVE
    parts = [p for p in as_list(value.get("parts")) if isinstance(p, Mapping)]
    marked = any(camel_keys(p).keys() & _PART_FIELDS for p in parts)
    return DISTINCTIVE if marked else READABLE


_LACKS = "no Gemini Content with a model role or Gemini parts"


def _contents_of(document: Mapping[str, Any]) -> tuple[list[Any] | None, dict[str, Any]]:
    """A request's contents (or a wrapper's list of them) and its other keys."""
    if isinstance(document.get("contents"), list):
        return document["contents"], {k: v for k, v in document.items() if k != "contents"}
    found = find_messages(document)
    if found is None:
        return None, {}
    return found.messages, dict(found.rest)


def detect(source: Source) -> Evidence:
    """A list of contents (or JSON lines of them), a request body, or a response."""
    document = source.document if source.is_document else None
    if document is None:
        return Evidence.of(source.head_values(), _classify, _LACKS)
    if isinstance(document, list):
        return Evidence.of(sample(document), _classify, _LACKS)
    if not isinstance(document, Mapping):
        return Evidence.none("no Gemini contents")
    if is_response(document):
        return Evidence.of([document], _classify, _LACKS)
    contents, rest = _contents_of(document)
    if contents is None:
        return Evidence.none("no contents list")
    evidence = Evidence.of(sample(contents), _classify, _LACKS)
    if "contents" in document or _system_text(rest) is not None:
        # The request's own words: its contents, its system instruction.
        return Evidence(share=evidence.share, marks=evidence.marks + 1, lacks=evidence.lacks)
    return evidence


def read(source: Source) -> Transcript:
    """Every content (and response) of ``source`` fed to a :class:`GeminiContentsBuilder`,
    each accounted for by its role (:data:`RECORDS`)."""
    transcript = Transcript(metadata={"source_format": NAME})
    builder = GeminiContentsBuilder(transcript, source.name)
    document = source.document if source.is_document else None
    first_line: int | None = 1
    if isinstance(document, Mapping) and not is_response(document):
        contents, rest = _contents_of(document)
        if contents is None:
            raise TranscriptFormatError(source.name, [NAME], 1, "no contents list")
        system = _system_text(rest)
        if system:
            transcript.metadata["system"] = system
        if isinstance(rest.get("model"), str):
            transcript.metadata["model"] = rest["model"]
        for line, content in enumerate(contents, start=1):
            builder.feed_noted(source, content, line, record_type(content))
        kept = {
            k: v for k, v in rest.items() if k not in ("systemInstruction", "system_instruction")
        }
        keep_wrapper_keys(transcript, kept)
    else:
        first_line = builder.feed_records(source, record_type)
    if builder.recognized == 0:
        raise TranscriptFormatError(source.name, [NAME], first_line, "no Gemini contents")
    if cli_checkpoint(source.path):
        transcript.metadata["agent"] = AGENT
    return transcript


def cli_checkpoint(path: Path | None) -> bool:
    """Whether ``path`` is where Gemini CLI's ``/chat save TAG`` keeps a chat:
    ``checkpoint-<tag>.json`` in a project's folder of ``~/.gemini/tmp`` (``Logger.
    _checkpointPath``, @google/gemini-cli 0.61.0; ``$GEMINI_CLI_HOME`` moves the folder that
    holds ``.gemini``, not its name), or ``checkpoint.json``, a ``/chat save`` without a tag
    before the tag was required (0.1.x). Qwen Code, a fork, keeps its own under ``~/.qwen``.

    >>> cli_checkpoint(Path("/home/a/.gemini/tmp/web/checkpoint-before-fix.json"))
    True
    >>> cli_checkpoint(Path("/home/a/chats/checkpoint-before-fix.json"))
    False
    >>> cli_checkpoint(Path("/home/a/.gemini/tmp/4f2a/checkpoint.json"))
    True
    """
    if path is None or path.suffix != ".json":
        return False
    if path.stem != "checkpoint" and not path.stem.startswith("checkpoint-"):
        return False
    parents = path.parent.parts
    return any(parents[i : i + 2] == (".gemini", "tmp") for i in range(len(parents) - 1))


def record_type(value: Any) -> str:
    """A content by its role (``content`` without one), a response as ``response``."""
    if is_response(value):
        return "response"
    if isinstance(value, Mapping) and "parts" in value and value.get("role") is None:
        return "content"
    return type_of_record(value)


def _system_text(request: Mapping[str, Any]) -> str | None:
    """The text of a request's system instruction (a ``Content``, its parts, or a string),
    or of google-genai's ``config``'s."""
    config = request.get("config")
    config = camel_keys(config) if isinstance(config, Mapping) else {}
    instruction = camel_keys(request).get("systemInstruction", config.get("systemInstruction"))
    if isinstance(instruction, Mapping):
        instruction = instruction.get("parts")
    parts = [
        rest_part(p) if isinstance(p, Mapping) else {"text": p}
        for p in (instruction if isinstance(instruction, list) else [instruction])
        if isinstance(p, Mapping | str)
    ]
    return joined_text(parts, sep="\n\n") or None
