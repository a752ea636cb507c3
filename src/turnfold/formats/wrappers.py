"""Message lists inside wrapper objects (issue 11): eval trajectories, saved chats, SDK sessions.

Tools that save a conversation rarely save the bare list: ``{"traj": [...], "reward": 1}``,
``{"version", "sessionId", "messages": [...]}``, ``{"history": [...], "info": {...}}``. The
message-list formats look for the list under the usual keys, or take the one list of
message-shaped objects the wrapper holds; the wrapper's other keys are kept as metadata. An RL
rollout or eval row in the conversational prompt-completion shape (TRL's datasets; verifiers'
and prime-rl's ``results.jsonl``: ``{"prompt": [...], "completion": [...], "reward": 1.0}``)
holds its run in two lists: the prompt's messages, then the completion's. A preference row in
TRL's conversational shape (``{"chosen": [...], "rejected": [...]}``, each the whole
conversation, or with the conversation in a ``prompt`` list of its own) holds a conversation
and two replies to it: the chosen reply is the run's, the rejected one is kept beside it. A
function-calling row of Salesforce's xLAM / APIGen datasets (``{"query", "tools",
"answers"}``, ``answers`` the JSON of the ``{"name", "arguments"}`` calls that answer the query)
is the query as a prompt and the calls as one Chat assistant message, ids ``call-<n>``: the
dataset records no results. A row of ms-swift's older standard format (its
``ResponsePreprocessor``: ``{"system", "query", "response", "history": [[query, response],
...]}``, with ``rejected_response`` for its preference data) is its system prompt, its history's
pairs, then the query and its response (the first, when ``response`` is a list); so is its
alpaca row (``AlpacaPreprocessor``: ``{"system", "instruction", "input", "output"}``, the query
``instruction`` and ``input`` on two lines), and its ShareGPT row (``{"system", "conversation":
[{"human": query, "assistant": response}, ...]}``) is its system prompt and each turn's two
messages: the formats its documentation gives for ``AutoPreprocessor``
(``docs/source_en/Customization/Custom-dataset.md``). A raw row of glaive-function-calling-v2
(``{"system": "SYSTEM: ...", "chat": "USER: ... ASSISTANT: <functioncall> {...} <|endoftext|>
FUNCTION RESPONSE: ..."}``) is its chat text cut at its speakers' marks, each
``<functioncall>`` a Chat tool call (ids ``call-<n>``) that the ``FUNCTION RESPONSE`` after it
answers.

>>> found = find_messages({"traj": [{"role": "user", "content": "hi"}], "reward": 1.0})
>>> found.key, len(found.messages), found.rest
('traj', 1, {'reward': 1.0})
>>> found = find_messages({"prompt": [{"role": "user", "content": "hi"}],
...                        "completion": [{"role": "assistant", "content": "yo"}], "reward": 1})
>>> found.key, len(found.messages), found.rest
('prompt+completion', 2, {'reward': 1})
>>> metadata_names({"sessionId": "s1", "updated_at": "2025-01-01", "agent": "sdk"})
{'session_id': 's1', 'updated_at': '2025-01-01', 'agent': 'sdk'}
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from turnfold import codec
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import SampleSelectionError, TranscriptFormatError
from turnfold.formats.source import Source
from turnfold.formats.wording import worded
from turnfold.model import Transcript, Wording

#: Keys a wrapper (or a dataset's row) keeps its message list under, most common first.
MESSAGE_KEYS = (
    "messages", "conversations", "traj", "trajectory", "history", "conversation", "chat",
    "transcript", "items",
)  # fmt: skip


@dataclass(frozen=True)
class FoundMessages:
    """The message list of a document, the key it sat under and the wrapper's other keys."""

    messages: list[Any]
    key: str | None = None
    rest: dict[str, Any] = field(default_factory=dict)
    #: A preference pair's rejected reply, read before its chosen one (which starts at
    #: ``messages[reply]``); ``repeated``: how many messages of its list, before the reply,
    #: repeat the conversation.
    rejected: list[Any] = field(default_factory=list)
    reply: int | None = None
    repeated: int = 0


def _message_shaped(value: Any) -> bool:
    return isinstance(value, Mapping) and ("role" in value or "type" in value)


def _mostly_messages(value: Any) -> TypeGuard[list[Any]]:
    if not isinstance(value, list) or not value:
        return False
    sample = value[:50]
    return sum(1 for v in sample if _message_shaped(v)) * 2 > len(sample)


#: A conversational prompt-completion row's two lists, in the order the run went.
PROMPT, COMPLETION = "prompt", "completion"


def _prompt_completion(document: Mapping[str, Any]) -> FoundMessages | None:
    """The run of a prompt-completion row: its prompt's messages, then its completion's (an
    empty completion, a rollout that failed, is none; one that is text is the assistant's
    message); a prompt that is text (TRL's standard rows, OpenAI's legacy fine-tuning rows)
    is the user's message when the completion is text too; None for any other row."""
    prompt, completion = document.get(PROMPT), document.get(COMPLETION)
    if isinstance(completion, str):  # the model's text, as GRPO logs keep a sampled reply
        completion = [_said("assistant", completion)]
        if _text(prompt):
            prompt = [_said("user", prompt)]
    if not _mostly_messages(prompt) or not isinstance(completion, list):
        return None
    if completion and not _mostly_messages(completion):
        return None
    rest = {k: v for k, v in document.items() if k not in (PROMPT, COMPLETION)}
    return FoundMessages([*prompt, *completion], f"{PROMPT}+{COMPLETION}", rest)


def _text(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())


def _said(role: str, text: str) -> dict[str, Any]:
    """A row's text as the Chat message of ``role`` it stands for."""
    return {"role": role, "content": text}


#: A conversational preference row's replies (TRL's ``chosen`` and ``rejected`` columns).
CHOSEN, REJECTED = "chosen", "rejected"


def _chat_pair(document: Mapping[str, Any]) -> FoundMessages | None:
    """The run of a conversational preference row: its conversation and chosen reply, its
    rejected reply beside them; None for any other row. Without a ``prompt`` list, the messages
    both lists start with are the conversation. A standard row (TRL's: ``prompt``, ``chosen``
    and ``rejected`` all text) is the user's prompt and two replies."""
    chosen, rejected = document.get(CHOSEN), document.get(REJECTED)
    if _text(document.get(PROMPT)) and isinstance(chosen, str) and isinstance(rejected, str):
        document = {
            **document,
            PROMPT: [_said("user", document[PROMPT])],
            CHOSEN: [_said("assistant", chosen)],
            REJECTED: [_said("assistant", rejected)],
        }
        chosen, rejected = document[CHOSEN], document[REJECTED]
    if not _mostly_messages(chosen) or not _mostly_messages(rejected):
        return None
    prompt = document.get(PROMPT)
    if _mostly_messages(prompt):
        rest = {k: v for k, v in document.items() if k not in (PROMPT, CHOSEN, REJECTED)}
        key, conversation, repeated = f"{PROMPT}+{CHOSEN}", list(prompt), 0
    else:
        rest = {k: v for k, v in document.items() if k not in (CHOSEN, REJECTED)}
        repeated = next(
            (at for at, (a, b) in enumerate(zip(chosen, rejected, strict=False)) if a != b),
            min(len(chosen), len(rejected)),
        )
        key, conversation = CHOSEN, list(chosen[:repeated])
    return FoundMessages(
        [*conversation, *chosen[repeated:]], key, rest,
        rejected=list(rejected[repeated:]), reply=len(conversation), repeated=repeated,
    )  # fmt: skip


#: An xLAM row's prompt and its calls.
QUERY, ANSWERS = "query", "answers"


def _function_calling_row(document: Mapping[str, Any]) -> FoundMessages | None:
    """The run of an xLAM row: its query, then its answers as one batch of Chat tool calls;
    None for any other row (answers that are no list of ``{"name", ...}`` objects)."""
    query, answers = document.get(QUERY), parse_tools(document.get(ANSWERS))
    if not isinstance(query, str) or not isinstance(answers, list):
        return None
    if not all(isinstance(a, Mapping) and isinstance(a.get("name"), str) for a in answers):
        return None
    calls = [
        {"id": f"call-{place}", "type": "function", "function": {
            "name": answer["name"], "arguments": codec.dumps(answer.get("arguments", {}))}}
        for place, answer in enumerate(answers, start=1)
    ]  # fmt: skip
    messages: list[dict[str, Any]] = [{"role": "user", "content": query}]
    if calls:
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
    rest = {k: v for k, v in document.items() if k not in (QUERY, ANSWERS)}
    return FoundMessages(messages, QUERY, rest)


#: ms-swift's older rows (``swift/dataset/preprocessor/core.py``, ``ResponsePreprocessor``:
#: ``system_prompt`` is read as ``system``).
RESPONSE, HISTORY, REJECTED_RESPONSE = "response", "history", "rejected_response"
_SWIFT_SYSTEM = ("system", "system_prompt")


def _history(value: Any) -> list[Any] | None:
    """A query-response row's ``history``: its ``[query, response]`` pairs (ms-swift reads
    text as the Python literal of them); None when it is no such list."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value.strip() or "[]")  # literals only, never code
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        return None
    pairs = [p for p in value if isinstance(p, (list, tuple)) and len(p) == 2]
    if len(pairs) < len(value):
        return None
    if not all(t is None or isinstance(t, str) for pair in pairs for t in pair):
        return None
    return pairs


def _response(value: Any) -> tuple[str | None, bool]:
    """An ms-swift row's response: text, or the first of a list of texts, as
    ``ResponsePreprocessor`` takes it (a random one with ``RANDOM_DATASET_RESPONSE``); and
    whether the row holds more than that one (the list, kept as the row's metadata)."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return value[0], len(value) > 1
    return (value, False) if isinstance(value, str) else (None, False)


def _query_response(document: Mapping[str, Any]) -> FoundMessages | None:
    """The run of an ms-swift query-response row (:func:`_swift_run`); None for any other."""
    query, (response, several) = document.get(QUERY), _response(document.get(RESPONSE))
    if not isinstance(query, str) or response is None:
        return None
    taken = (QUERY,) if several else (QUERY, RESPONSE)
    return _swift_run(document, query, response, QUERY, taken)


#: ms-swift's alpaca rows (``AlpacaPreprocessor``), LLaMA-Factory's alike: the query is the
#: instruction and its input, the response the output.
INSTRUCTION, INPUT, OUTPUT = "instruction", "input", "output"


def _alpaca_row(document: Mapping[str, Any]) -> FoundMessages | None:
    """The run of an alpaca row: the query is ``instruction`` and ``input`` on two lines, or
    the one given (``concat_inst_input``), the response ``output``; then as a query-response
    row (:func:`_swift_run`). None for any other row."""
    instruction, given = document.get(INSTRUCTION), document.get(INPUT)
    output, several = _response(document.get(OUTPUT))
    if not isinstance(instruction, str) or not isinstance(given, (str, type(None))):
        return None
    if output is None:
        return None
    query = "\n".join(text for text in (instruction, given) if text)
    taken = (INSTRUCTION, INPUT) if several else (INSTRUCTION, INPUT, OUTPUT)
    return _swift_run(document, query, output, INSTRUCTION, taken)


def _swift_run(
    document: Mapping[str, Any], query: str, response: str, key: str, taken: tuple[str, ...]
) -> FoundMessages | None:
    """The run of an ms-swift row given its ``query`` and ``response`` (the row's keys
    ``taken`` for them): its system prompt, the pairs of its ``history``, then the query and
    response (``history_to_messages``: a turn that is None is none); its
    ``rejected_response`` (text, or messages) the rejected reply to the query. None when its
    history is no list of pairs."""
    history = _history(document.get(HISTORY))
    if history is None:
        return None
    system = next((document[k] for k in _SWIFT_SYSTEM if isinstance(document.get(k), str)), None)
    messages = [_said("system", system)] if system else []
    for prompt, reply in [*history, (query, None)]:
        messages += [_said(role, text) for role, text in (("user", prompt), ("assistant", reply))
                     if text is not None]  # fmt: skip
    rejected = document.get(REJECTED_RESPONSE)
    replies = (
        [_said("assistant", rejected)] if isinstance(rejected, str)
        else list(rejected) if _mostly_messages(rejected) else []
    )  # fmt: skip
    taken += (HISTORY, *_SWIFT_SYSTEM) + ((REJECTED_RESPONSE,) if replies else ())
    rest = {k: v for k, v in document.items() if k not in taken}
    return FoundMessages(
        [*messages, _said("assistant", response)], key, rest,
        rejected=replies, reply=len(messages),
    )  # fmt: skip


#: ms-swift's ShareGPT rows (``MessagesPreprocessor``: ``conversation`` or ``conversations``,
#: each item a turn holding the user's words and the reply under its roles' names).
_TURNS_KEYS = ("conversation", "conversations")
_TURN_USER, _TURN_ASSISTANT = ("user", "human"), ("assistant", "gpt", "bot")
#: The keys of a message, not a turn: ``{role, content}`` or ShareGPT's ``{from, value}``.
_MESSAGE_FIELDS = frozenset({"role", "content", "from", "value"})


def _turns_key(document: Mapping[str, Any]) -> str | None:
    return next((k for k in _TURNS_KEYS if isinstance(document.get(k), list)), None)


def _sharegpt_turns(document: Mapping[str, Any]) -> FoundMessages | None:
    """The run of an ms-swift ShareGPT row: its system prompt, then each turn's user message and
    reply (``sharegpt_to_messages``); None for any other row (items that are messages). Its
    key is ``<key>+turns``: the list under the row's key holds turns, not these messages (a
    system prompt beside a list of messages is an Anthropic request's shape)."""
    key = _turns_key(document)
    turns = document.get(key) if key is not None else None
    if key is None or not turns:
        return None
    messages: list[dict[str, Any]] = []
    for turn in turns:
        if not isinstance(turn, Mapping) or _MESSAGE_FIELDS & set(turn):
            return None
        said = next((turn[k] for k in _TURN_USER if isinstance(turn.get(k), str)), None)
        reply = next((turn[k] for k in _TURN_ASSISTANT if isinstance(turn.get(k), str)), None)
        if said is None or reply is None:
            return None
        messages += [_said("user", said), _said("assistant", reply)]
    system = next((document[k] for k in _SWIFT_SYSTEM if isinstance(document.get(k), str)), None)
    rest = {k: v for k, v in document.items() if k not in (key, *_SWIFT_SYSTEM)}
    head = [_said("system", system)] if system else []
    return FoundMessages([*head, *messages], f"{key}+turns", rest)


#: A glaive-function-calling-v2 row's text keys; its speakers' marks, each opening a turn (at
#: the start of the chat or after a blank line; turns are three line breaks apart, some two);
#: the end of a turn the model wrote; the mark of its call.
GLAIVE_SYSTEM, GLAIVE_CHAT = "system", "chat"
_GLAIVE_TURN = re.compile(r"(?:\A|\n{2,})(USER|ASSISTANT|FUNCTION RESPONSE):[ \t]?")
_GLAIVE_END, _GLAIVE_CALL = "<|endoftext|>", "<functioncall>"
#: A call whose ``arguments`` is their JSON text in single quotes (most of the dataset's calls:
#: no JSON, nor a Python literal when the text holds an apostrophe), read without evaluating it.
_QUOTED_CALL = re.compile(
    r"""\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*'(.*)'\s*\}\s*""",
    re.DOTALL,
)


def _glaive_call(body: str) -> tuple[str, Any] | None:
    """The name and arguments of a ``<functioncall>``: its JSON ``{"name", "arguments"}``
    (``parameters`` in some rows), or that with the arguments as quoted JSON text (kept as
    that text, which the call's reader parses); None for neither."""
    with contextlib.suppress(ValueError):
        call = codec.loads(body)
        if isinstance(call, Mapping) and isinstance(call.get("name"), str) and call["name"]:
            return call["name"], call.get("arguments", call.get("parameters", {}))
    quoted = _QUOTED_CALL.fullmatch(body)
    if quoted is None:
        return None
    with contextlib.suppress(ValueError):
        name = codec.loads(quoted.group(1))
        if isinstance(name, str) and name:
            return name, quoted.group(2)
    return None


def _declared_functions(system: str) -> list[Any]:
    """The functions a glaive system prompt declares: the JSON objects written after its
    first sentence, one after another."""
    decoder, found = json.JSONDecoder(), []
    at = system.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(system, at)
        except ValueError:
            break
        if isinstance(value, Mapping) and isinstance(value.get("name"), str):
            found.append(value)
        at = system.find("{", end)
    return found


def _glaive_row(document: Mapping[str, Any]) -> FoundMessages | None:
    """The run of a glaive-function-calling-v2 row: its system prompt (without ``SYSTEM:``,
    its functions also as ``tools``), then each turn of its chat as the Chat message it stands
    for. A ``<functioncall>`` that is no call stays in its turn's text as written; a function
    response with no call before it is the builder's to warn of. None for any other row."""
    chat, system = document.get(GLAIVE_CHAT), document.get(GLAIVE_SYSTEM, "")
    if not isinstance(chat, str) or not chat.lstrip().startswith("USER:"):
        return None
    if not isinstance(system, str):
        return None
    system = system.strip().removeprefix("SYSTEM:").strip()
    messages: list[dict[str, Any]] = [_said("system", system)] if system else []
    waiting: list[str] = []  # the ids of the calls still without a response
    made = 0
    cut = _GLAIVE_TURN.split(chat.strip())
    for speaker, said in zip(cut[1::2], cut[2::2], strict=True):
        text = said.replace(_GLAIVE_END, "").strip()
        at = text.find(_GLAIVE_CALL)
        call = _glaive_call(text[at + len(_GLAIVE_CALL) :]) if at >= 0 else None
        if speaker == "USER":
            messages.append(_said("user", text))
        elif speaker == "FUNCTION RESPONSE":
            result = _said("tool", text)
            if waiting:
                result["tool_call_id"] = waiting.pop(0)
            messages.append(result)
        elif call is None:
            messages.append(_said("assistant", text))
        else:
            name, arguments = call
            made += 1
            waiting.append(f"call-{made}")
            function = {"name": name, "arguments": arguments if isinstance(arguments, str)
                        else codec.dumps(arguments if arguments is not None else {})}  # fmt: skip
            messages.append({"role": "assistant", "content": text[:at].strip() or None,
                             "tool_calls": [{"id": waiting[-1], "type": "function",
                                             "function": function}]})  # fmt: skip
    rest = {k: v for k, v in document.items() if k not in (GLAIVE_SYSTEM, GLAIVE_CHAT)}
    tools = _declared_functions(system)
    if tools and "tools" not in rest:
        rest["tools"] = tools
    return FoundMessages(messages, GLAIVE_CHAT, rest)


#: A logged API call's two halves: the request's body and the response to it.
REQUEST = "request"
#: Where a logged HTTP exchange keeps a body (OpenAI's Batch API: ``{"custom_id", "body"}``
#: in its input, ``{"status_code", "body"}`` as a line's ``response``).
_BODY = "body"
#: Keys only a response object has: Chat's ``choices``, the Responses API's ``output``,
#: Anthropic's ``content`` (its ``role`` is the assistant's).
_RESPONSE_KEYS = ("choices", "output", "content")


@dataclass(frozen=True)
class Exchange:
    """One API call as a log keeps it: the request's body and the response to it."""

    request: dict[str, Any]
    response: Mapping[str, Any]


def exchange(document: Any) -> Exchange | None:
    """The API call ``document`` logs: ``{"request": {...}, "response": {...}}`` (the log's
    other keys kept with the request's), or a request's own keys with the ``response`` beside
    them (``{"model", "messages", "response": completion.model_dump()}``); a ``body`` inside
    either is that half. None for any other document, and for one whose ``response`` is no
    response object (an ms-swift row's is its text): a reader that takes only the request
    would leave out the answer, its usage and its model without a word.

    >>> call = exchange({"messages": [{"role": "user", "content": "hi"}],
    ...                  "response": {"object": "chat.completion", "choices": []}})
    >>> list(call.request), call.response["object"]
    (['messages'], 'chat.completion')
    >>> exchange({"query": "hi", "response": "yo"}) is None
    True
    """
    if not isinstance(document, Mapping):
        return None
    response = _body(document.get(RESPONSE))
    if not isinstance(response, Mapping) or not any(k in response for k in _RESPONSE_KEYS):
        return None
    outer = {k: v for k, v in document.items() if k not in (REQUEST, RESPONSE)}
    request = _body(document.get(REQUEST, outer))
    if not isinstance(request, Mapping):
        return None
    request = {**outer, **request} if REQUEST in document else dict(request)
    if not isinstance(request.get("messages"), list) and not isinstance(
        request.get("input"), (list, str)
    ):
        return None  # no request: a row that keeps a response among its columns
    return Exchange(request, response)


def _body(value: Any) -> Any:
    return value.get(_BODY) if isinstance(value, Mapping) and _BODY in value else value


#: What a line of an OpenAI Batch API file names its call by: a run of such a file is named
#: by it (``path#<custom_id>``), not by its place (the output file's lines come in any order).
CUSTOM_ID = "custom_id"
#: The endpoints a Batch API line may call whose calls are conversations (a legacy
#: completion's is one prompt and its answer).
CHAT_URL, RESPONSES_URL = "/v1/chat/completions", "/v1/responses"
COMPLETIONS_URL = "/v1/completions"
#: The endpoint a response body answers, by its ``object`` (embeddings answer with a list).
_ANSWERED = {
    "chat.completion": CHAT_URL, "response": RESPONSES_URL, "list": "/v1/embeddings",
    "text_completion": COMPLETIONS_URL,
}  # fmt: skip


@dataclass(frozen=True)
class BatchLine:
    """One line of an OpenAI Batch API file (its input file: ``{"custom_id", "method", "url",
    "body"}``; its output or error file: ``{"id", "custom_id", "response": {"status_code",
    "request_id", "body"}, "error"}``): the request its input line holds (the body, with the
    line's other keys) or the response body of a call that succeeded, or why the call failed;
    the endpoint it called (an output line's told by its body; None for a failed one), and
    the line's other keys, kept as the run's metadata. ``wording``: the failure's, where the
    reader says it (:func:`~turnfold.formats.wording.worded`), not the API."""

    custom_id: str
    endpoint: str | None
    request: dict[str, Any] | None = None
    response: Mapping[str, Any] | None = None
    failure: str | None = None
    rest: dict[str, Any] = field(default_factory=dict)
    wording: Wording | None = None

    @property
    def metadata(self) -> dict[str, Any]:
        """An output line's other keys as its run's metadata: its ``custom_id``, status and
        request id, its own ``id`` (``batch_req_…``, the line's, not the run's) as
        ``batch_line_id``."""
        return {"batch_line_id" if k == "id" else k: v for k, v in self.rest.items()}


def batch_line(document: Any) -> BatchLine | None:
    """The Batch API line ``document`` is, or None.

    >>> line = batch_line({"custom_id": "t-1", "method": "POST", "url": "/v1/chat/completions",
    ...                    "body": {"model": "m", "messages": []}})
    >>> line.endpoint, sorted(line.request)
    ('/v1/chat/completions', ['custom_id', 'messages', 'method', 'model', 'url'])
    >>> batch_line({"id": "batch_req_1", "custom_id": "t-2", "response": None,
    ...             "error": {"code": "batch_expired", "message": "Not run in time."}}).failure
    'batch_expired: Not run in time.'
    """
    if not isinstance(document, Mapping) or not isinstance(document.get(CUSTOM_ID), str):
        return None
    name = document[CUSTOM_ID]
    body = document.get(_BODY)
    if isinstance(body, Mapping) and isinstance(document.get("url"), str):
        rest = {k: v for k, v in document.items() if k != _BODY}
        return BatchLine(name, document["url"], request={**rest, **body})
    if RESPONSE not in document or "error" not in document:
        return None
    response, error = document[RESPONSE], document["error"]
    if not all(isinstance(half, (Mapping, type(None))) for half in (response, error)):
        return None
    response = response or {}
    rest = {k: v for k, v in document.items() if k not in (RESPONSE, "error")}
    rest |= {k: response[k] for k in ("status_code", "request_id") if k in response}
    body, status = response.get(_BODY), response.get("status_code")
    failed = isinstance(status, int) and status >= 400
    if error is None and not failed and isinstance(body, Mapping):
        return BatchLine(name, _answered(body), response=body, rest=rest)
    failure, wording = _failure(error, status, body)
    return BatchLine(name, None, failure=failure, rest=rest, wording=wording)


def _answered(body: Mapping[str, Any]) -> str | None:
    """The endpoint a response body answers: by its ``object``, else by its shape (a server
    that writes the Batch API's files, vLLM's ``run_batch`` say, may leave ``object`` out)."""
    found = _ANSWERED.get(str(body.get("object")))
    if found is None and isinstance(body.get("choices"), list):
        return CHAT_URL
    if found is None and isinstance(body.get("output"), list):
        return RESPONSES_URL
    return found


def _failure(error: Mapping[str, Any] | None, status: Any, body: Any) -> tuple[str, Wording | None]:
    """Why a Batch API call failed, in the API's words: the line's ``error`` (``{code,
    message}``: an expired batch's unrun request), else its status and the error its body
    holds (``{"error": {message, type, code}}``, as the API answers a bad request). The
    status, or an error that says nothing, the reader says: with its wording (spec P-11)."""
    said = error or (body.get("error") if isinstance(body, Mapping) else None)
    if not isinstance(said, Mapping):
        if status is None:
            return worded("reader.batch_call_failed.unexplained")
        return worded("reader.batch_call_failed.status", {"status": status})
    kind = said.get("code") or said.get("type")
    message = str(said.get("message") or "")
    text = f"{kind}: {message}" if kind else message
    if error is not None or status is None:
        return (text, None) if text else worded("reader.batch_call_failed.no_message")
    told = "said" if text else "no_message"
    return worded(f"reader.batch_call_failed.status.{told}", {"status": status, "said": text})


def find_messages(document: Any) -> FoundMessages | None:
    """The message list of ``document`` (itself when it is a list), or None."""
    if isinstance(document, list):
        return FoundMessages(document)
    if not isinstance(document, Mapping):
        return None
    paired = (
        _prompt_completion(document)
        or _chat_pair(document)
        or (_function_calling_row(document) if ANSWERS in document else None)
        or (_query_response(document) if RESPONSE in document else None)
        or (_alpaca_row(document) if OUTPUT in document else None)
        or _sharegpt_turns(document)
        or (_glaive_row(document) if isinstance(document.get(GLAIVE_CHAT), str) else None)
    )
    if paired is not None:
        return paired
    key = next((k for k in MESSAGE_KEYS if _mostly_messages(document.get(k))), None)
    if key is None:
        lists = [k for k, v in document.items() if _mostly_messages(v)]
        if len(lists) != 1:
            return None
        key = lists[0]
    rest = {k: v for k, v in document.items() if k != key}
    return FoundMessages(list(document[key]), key, rest)


def sample(messages: list[Any], size: int = 60) -> list[Any]:
    """The messages detection looks at: the first ones and the last few, where a tool's own
    trailing record (``{"role": "session_meta"}``) tends to sit."""
    if len(messages) <= size:
        return messages
    return messages[: size - 10] + messages[-10:]


def listed_evidence(source: Source, classify: Callable[[Any], int], lacks: str) -> Evidence | None:
    """How a source of messages reads by ``classify``: its first records when it holds one a
    line, a :func:`sample` of them when it is one JSON list; None for a JSON document that is no
    list, whose shape its format weighs itself (a response, a run, a session)."""
    if not source.is_document:
        return Evidence.of(source.head_values(), classify, lacks)
    if isinstance(source.document, list):
        return Evidence.of(sample(source.document), classify, lacks)
    return None


_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def metadata_names(rest: Mapping[str, Any]) -> dict[str, Any]:
    """A wrapper's other keys under the names turnfold's metadata uses: ``sessionId`` is
    ``session_id`` (as every loader names it), ``updatedAt`` is ``updated_at``."""
    return {_CAMEL.sub(r"_\1", str(key)).lower(): value for key, value in rest.items()}


def keep_wrapper_keys(transcript: Transcript, rest: Mapping[str, Any]) -> None:
    """The wrapper's other keys as ``transcript.metadata`` (issue 11): a reward, a session id, the
    saving agent's name. What the loader already set (``source_format``, ``system``, ``model``)
    wins over a wrapper key of the same name. A numeric ``reward`` (an RL rollout's) is also
    the ``score`` of the run (H-6), which its header and its corpus row show, unless the
    wrapper names a score of its own. ``tools`` saved as one JSON string (the tools' schemas,
    as LLaMA-Factory, ms-swift and OpenAI's fine-tuning rows hold them) is kept as the list it
    holds. A verifiers rollout's ``generation_ms`` (the time of its run, its scoring's
    ``scoring_ms`` apart; 0 when it was not timed) is the run's ``duration_ms`` (U-3). An
    ``agent_name`` names the ``agent`` (its header's, as the corpus's Agent column reads it)
    unless the wrapper names an ``agent`` itself."""
    metadata = transcript.metadata
    for key, value in metadata_names(rest).items():
        metadata.setdefault(key, parse_tools(value) if key == "tools" else value)
    named = metadata.get("agent_name")
    if isinstance(named, str) and named:
        metadata.setdefault("agent", named)
    reward = metadata.get("reward")
    if isinstance(reward, (int, float)) and not isinstance(reward, bool):
        metadata.setdefault("score", reward)
    took = metadata.get("generation_ms")
    if isinstance(took, (int, float)) and not isinstance(took, bool) and took > 0:
        metadata.setdefault("duration_ms", took)


def parse_tools(tools: Any) -> Any:
    """A row's ``tools``: the tools' JSON schemas as one JSON string, as the list it holds; any
    other value (text that is no JSON) as it is."""
    if isinstance(tools, str):
        with contextlib.suppress(ValueError):
            return codec.loads(tools)
    return tools


def _message_list(value: Any) -> bool:
    """A non-empty list of dicts, as a dataset's row keeps its run's messages."""
    return (
        isinstance(value, list) and bool(value) and all(isinstance(m, Mapping) for m in value[:5])
    )


def runs_key(source: Source) -> str | None:
    """The key under which the records of ``source`` keep their runs' messages, when they are
    the rows of a dataset (JSON lines or a JSON array: one or more, most of them objects
    holding such a list, or most of them preference pairs or prompt-completion rows, whose key
    is ``prompt``; TRL's conversational pairs' is ``chosen``, xLAM's rows' ``query``, a log of
    API calls' (:func:`exchange`) ``request``); None
    otherwise. For pairs it is
    :func:`pair_key`'s: ``chosen_messages``, or ``chosen`` for alpaca rows, whose chosen reply
    is text, not messages. A file no session format reads may be one: each record is then a
    run of its own, not a message of one session.

    The first records decide it as a whole: the key most of them hold their runs under
    (:func:`row_runs_key`), never the first record's alone, so a Batch API file whose first
    line lacks its ``custom_id`` is still one; its records that hold no such run are rows
    whose ``error`` says why (C-7)."""
    held = _head_runs(source)
    return None if held is None else _most_held(*held, len(source.head))


def _most_held(rows: int, keys: Counter[str], head: int) -> str | None:
    """:func:`runs_key` from the ``head`` first records of a file, ``rows`` of them objects,
    whose runs ``keys`` counts by the key each is held under."""
    if not keys or rows * 2 < head:
        return None
    key, count = keys.most_common(1)[0]  # a tie: the key met first
    return key if count * 2 >= rows else None


def _head_runs(source: Source) -> tuple[int, Counter[str]] | None:
    """How many of the first records of ``source`` are objects, and under which key each of
    them that holds a run keeps it (:func:`row_runs_key`); None for one JSON object (one run
    at most, which ``load()`` reads)."""
    if source.is_document and not isinstance(source.document, list):
        return None
    rows = [value for value in source.head_values() if isinstance(value, Mapping)]
    return len(rows), Counter(key for row in rows if (key := row_runs_key(row)) is not None)


def too_few_runs(source: Source) -> str | None:
    """Why ``source`` is no file of runs (:func:`runs_key` is None) though some of its first
    records hold runs, said where a scan skips it (C-7: never silently); None for a file of
    runs, or one whose first records hold none.

    >>> from turnfold.formats.source import open_source
    >>> run = {"messages": [{"role": "user", "content": "hi"}]}
    >>> too_few_runs(open_source([{"event": "start"}, {"event": "tick"}, run])[0]).split(":")[0]
    "1 of its first 3 records holds a run (1 under 'messages')"
    """
    found = _head_runs(source)
    if found is None or not found[1] or _most_held(*found, len(source.head)) is not None:
        return None
    held = found[1]
    count = held.total()
    keys = ", ".join(f"{n} under {key!r}" for key, n in held.most_common())
    verb = "holds" if count == 1 else "hold"
    return (f"{count} of its first {len(source.head)} records {verb} a run ({keys}): a file of "
            "runs is one whose first records mostly hold theirs under one key")  # fmt: skip


def row_runs_key(row: Mapping[str, Any]) -> str | None:
    """The key one record of a dataset keeps its run under (:func:`runs_key`), or None: a Batch
    API line's ``custom_id``, a logged API call's ``request``, a ShareGPT row's turns, a
    prompt-completion row's or a preference pair's first key, its list of messages."""
    if batch_line(row) is not None:  # an OpenAI Batch API line: its run has a name
        return CUSTOM_ID
    if REQUEST in row and exchange(row) is not None:  # a log of API calls, one a line
        return REQUEST
    if _sharegpt_turns(row) is not None:
        return _turns_key(row)
    shapes = (
        (_prompt_completion, PROMPT), (_chat_pair, CHOSEN), (_function_calling_row, QUERY),
        (_query_response, QUERY), (_alpaca_row, INSTRUCTION), (_glaive_row, GLAIVE_CHAT),
    )  # fmt: skip
    for shape, named_key in shapes:
        if shape(row) is not None:
            return named_key
    named = [key for key in MESSAGE_KEYS if _message_list(row.get(key))]
    lists = [key for key, value in row.items() if _message_list(value)]
    key = named[0] if named else (lists[0] if len(lists) == 1 else None)
    return key if key is not None else pair_key(row)


def pair_key(row: Any) -> str | None:
    """The key of a preference pair's chosen reply, when ``row`` is one as LLaMA-Factory's
    ranking datasets hold them: two lists of messages (``chosen_messages`` and
    ``rejected_messages``, its v1 form), or an instruction and two replies as text (``chosen``
    and ``rejected``, its alpaca form); None otherwise. A pair is one run, the rejected reply
    shown beside the chosen one."""
    if not isinstance(row, Mapping):
        return None
    if _message_list(row.get("chosen_messages")) and _message_list(row.get("rejected_messages")):
        return "chosen_messages"
    if all(isinstance(row.get(k), str) for k in ("instruction", "chosen", "rejected")):
        return "chosen"
    return None


def runs_held(row: Any, key: str) -> str:
    """How a dataset's row holds its run, for a message that names :func:`runs_key`'s ``key``:
    its messages under it, its prompt and completion, a preference pair.

    >>> runs_held({"prompt": [{"role": "user", "content": "hi"}], "completion": []}, "prompt")
    "one, under 'prompt' and 'completion'"
    """
    row = row if isinstance(row, Mapping) else {}
    if key == CUSTOM_ID and (line := batch_line(row)) is not None:
        held = "request" if line.request is not None else "call's outcome"
        return f"one OpenAI Batch API {held}, named by its {CUSTOM_ID!r}"
    if pair_key(row) == key or (key == CHOSEN and _chat_pair(row) is not None):
        return f"a preference pair, its chosen reply under {key!r}"
    if key == REQUEST and exchange(row) is not None:
        return f"one API call, under {REQUEST!r} and {RESPONSE!r}"
    if key == PROMPT and _prompt_completion(row) is not None:
        return f"one, under {PROMPT!r} and {COMPLETION!r}"
    if key == QUERY and _function_calling_row(row) is not None:
        return f"one, under {QUERY!r} and {ANSWERS!r}"
    if key == QUERY and _query_response(row) is not None:
        return f"one, under {QUERY!r}, {RESPONSE!r} and {HISTORY!r}"
    if key == INSTRUCTION and _alpaca_row(row) is not None:
        return f"one, under {INSTRUCTION!r}, {INPUT!r} and {OUTPUT!r}"
    if key in _TURNS_KEYS and _sharegpt_turns(row) is not None:
        return f"one, as turns of user and assistant under {key!r}"
    if key == GLAIVE_CHAT and _glaive_row(row) is not None:
        return f"one, as the text under {GLAIVE_SYSTEM!r} and {GLAIVE_CHAT!r}"
    return f"one, under {key!r}"


#: :class:`OneFormat` has not read a run yet: the dataset's format is not known.
UNKNOWN = "(not known yet)"


class OneFormat:
    """Reads the runs of one dataset (the records of a file of runs, the rows of a table) with
    ``read(value, format)``. They are of one format, which is detection's answer for the
    dataset's first run: it is given for every run after it (detection costs as much as the
    read of a short run), and a run it does not fit is detected on its own. A format the user
    named (``format``) is given to every run, as ``load(value, format)`` would.

    ``guess`` is the dataset's format when it is known already (:data:`UNKNOWN`: the first run
    read is the dataset's first; None: that run could not be read, so each run is detected on
    its own). A part of a dataset is given its first run's format, so that a run reads the
    same whatever part it is read in, and as ``load(path, sample=n)`` reads it."""

    def __init__(
        self,
        read: Callable[[Any, str | None], Transcript],
        format: str | None = None,
        guess: str | None = UNKNOWN,
    ) -> None:
        self._read = read
        self._named = format
        self.guess = guess

    def __call__(self, value: Any) -> Transcript:
        if self._named is not None:
            return self._read(value, self._named)
        if self.guess == UNKNOWN:
            self.guess = None  # should the first run not read, each is detected on its own
            transcript = self._read(value, None)
            found = transcript.metadata.get("source_format")
            self.guess = found if isinstance(found, str) else None
            return transcript
        if self.guess is not None:
            with contextlib.suppress(TranscriptFormatError):
                return self._read(value, self.guess)
        return self._read(value, None)

    @property
    def found(self) -> str | None:
        """The dataset's format; None while no run is read, or when its first did not read."""
        return None if self.guess == UNKNOWN else self.guess

    def learn(self, value: Any) -> None:
        """Read ``value``, the dataset's first run, for its format alone (a run that does not
        read leaves each run to be detected on its own)."""
        with contextlib.suppress(Exception):
            self(value)


def run_name(record: Any) -> str | None:
    """The name a record of a file of runs gives its run, which a scan keys it by
    (``path#<name>``, :func:`run_samples`) and ``load(path, sample=name)`` reads: a Batch API
    line's ``custom_id``; None for a record named by its place alone."""
    line = batch_line(record)
    return line.custom_id if line is not None else None


#: What spells a run's place in its key where a run of its file is named by that place's
#: digits (``path#@3``: the record at place 3 of a file where a ``custom_id`` is ``"3"``).
PLACE_MARK = "@"


def run_samples(count: int, names: Mapping[int, str]) -> dict[int, str]:
    """The sample (``path#<sample>``) of each run of a file of ``count`` runs whose records
    at the places ``names`` name their runs (:func:`run_name`), where it is not its place's
    digits; unique in the file whatever its names (spec C-1).

    A named run keeps its name, the first of that name at least (a later one is as a run with
    no name: ``load(path, sample=name)`` reads the first). Any other run is keyed by its place
    (``path#3``), unless a run is named so: then by its place after :data:`PLACE_MARK`
    (``path#@3``; ``@@3`` if a run is named ``@3`` too). So ``path#3`` opens the run a user
    named ``3`` wherever it is in the file, and a record beside it that names no run (a line
    with no ``custom_id``, a line that is no JSON) keeps a key of its own. The rule needs every
    name of the file: a scan applies it once the file is read (:func:`RunChoice` is its
    inverse, for ``load``).

    >>> run_samples(4, {0: "2", 1: "task-1"})
    {0: '2', 1: 'task-1', 2: '@2'}
    >>> run_samples(3, {0: "x", 2: "x"})  # the second "x" is keyed by its place
    {0: 'x'}
    """
    taken = set(names.values())
    samples: dict[int, str] = {}
    first: set[str] = set()
    by_place: list[int] = []  # named runs keyed by their place: a name met before
    for place in sorted(names):
        name = names[place]
        if name in first:
            by_place.append(place)
            continue
        first.add(name)
        if name != str(place):
            samples[place] = name
    unnamed = (int(name) for name in taken if _digits(name) and int(name) < count)
    for place in sorted({*by_place, *(p for p in unnamed if p not in names)}):
        spelt = str(place)
        while spelt in taken:
            spelt = PLACE_MARK + spelt
        if spelt != str(place):
            samples[place] = spelt
    return samples


def _digits(text: str) -> bool:
    """Whether ``text`` is a place as a key spells it: ASCII digits, no leading zero."""
    return text.isascii() and text.isdigit() and (text == "0" or not text.startswith("0"))


class RunChoice:
    """Which record of a file of runs ``sample`` names, by :func:`run_samples`' rule, the
    records met in order (:meth:`meet`): the first run named ``sample``; failing one, the run
    keyed by its place that ``sample`` spells (``3``, ``@3``, ``sample=3``). Whether a run is
    named so is known at the end of the file alone, so a run met by its place is the answer
    only once every record is met (:attr:`PLACED`)."""

    #: :meth:`meet`'s answers: the run, now; the run, unless a later record is named so.
    NAMED, PLACED = "named", "placed"

    def __init__(self, sample: str | int) -> None:
        self.sample = str(sample)
        spelt = self.sample.lstrip(PLACE_MARK)
        self.place = int(spelt) if spelt.isascii() and spelt.isdigit() else None
        self._met: set[str] = set()

    def meet(self, place: int, name: str | None) -> str | None:
        """What the record at ``place``, naming its run ``name`` (:func:`run_name`), is to
        ``sample``: :attr:`NAMED`, :attr:`PLACED` or None (another run)."""
        if name is not None and name not in self._met:
            self._met.add(name)
            return self.NAMED if name == self.sample else None
        return self.PLACED if place == self.place else None


def how_to_load_one(key: str) -> str:
    """How ``load`` reads one run of a file of runs whose :func:`runs_key` is ``key``."""
    if key == CUSTOM_ID:
        return f"turnfold.load(path, sample=<its {CUSTOM_ID}>) reads one"
    return "turnfold.load(path, sample=n) reads the n-th, from 0"


def run_place(sample: Any) -> int | None:
    """The place (from 0) ``sample`` names in a dataset's rows, as a scan keys a row
    ``path#n``; None for anything but a place."""
    return int(sample) if type(sample) is int or str(sample).isdigit() else None


def no_such_run(name: str, count: int, place: int) -> SampleSelectionError:
    """The error of a place past the runs a file of ``count`` runs holds: their range (never
    a list of them) and how to load one or read them all."""
    return SampleSelectionError(
        f"{name} holds {count} runs: no sample={place} (they are 0 to {count - 1}); load one "
        "as turnfold.load(path, sample=0), or read them all with turnfold.scan(path)"
    )
