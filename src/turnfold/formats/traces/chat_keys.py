"""The private keys of the Chat messages the trace readers make of a span's messages, for what
the Chat Completions shape has no place for; read by the OTLP reader's builder
(:class:`.otlp._Builder`).

Apart so that every module converting some tracer's messages into that shape
(:mod:`.messages`, :mod:`.langchain_messages`, :mod:`.mlflow`) names them without importing
the others.
"""

from __future__ import annotations

#: ``_PART``: a message that is one part with no place in a Chat message (a server tool's call
#: or response, a compaction), made an entry of its own in the order of the parts.
_PART = "turnfold.part"
#: ``_IMAGES``: the inline images of a user's prompt or a tool's response (the entries that
#: show images: model.UserMessage, model.ToolResult), as ``[media type, base64 data]`` pairs.
_IMAGES = "turnfold.images"
#: ``_UNSHOWN``: why parts of the message are named rather than shown, warned when the message
#: is fed (a model span's input repeats the history, converted again for every span).
_UNSHOWN = "turnfold.unshown"
#: ``_FAILED``: a tool message whose result states it failed (a Converse ``toolResult`` of
#: ``status: "error"``), read by :class:`.otlp._Builder` when no tool span settles its call.
_FAILED = "turnfold.failed"
