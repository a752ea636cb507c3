"""The reasoning an aider reply opens with is the model's thinking, not its answer.

``Coder.send`` logs the reply (``io.ai_output(self.partial_response_content)``) with what the
provider streamed as ``reasoning_content`` first, inside aider's own tag
(``show_send_output_stream``: ``<thinking-content-7bbe…>\\n\\n`` … ``\\n\\n</…>\\n\\n``;
``aider/reasoning_tags.py``), or with the model's ``reasoning_tag`` (``<think>``) in its text.

The fixture is a real aider 0.86.2 session with a local Qwen model, byte for byte: lines
29-80 of AlexShchuka/mozgoslav ``.aider.chat.history.md`` at
1f66bc9d44c5950cada7054a9581d7058caaac66 (MIT).
"""

from __future__ import annotations

from pathlib import Path

import turnfold
from turnfold.model import AssistantText, Thinking, ToolCall, UserMessage

FIXTURE = Path(__file__).parents[1] / "fixtures" / "aider" / "aider_0.86.2_real_reasoning-tag.md"


def test_aider_s_reasoning_tag_is_thinking_before_the_answer() -> None:
    t = turnfold.load(FIXTURE)
    kinds = [type(e) for e in t.entries if e.kind != "system"]
    assert kinds == [UserMessage, Thinking, AssistantText]
    thinking = next(e for e in t.entries if isinstance(e, Thinking))
    assert thinking.text.startswith("Here's a thinking process:")
    assert thinking.text.endswith("I will output the response in Russian.✅")
    answer = next(e for e in t.entries if isinstance(e, AssistantText))
    assert answer.text.startswith("Привет! Готов к работе.")
    assert "thinking-content" not in answer.text
    # The token report is the reply's: on its answer.
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (1800, 653)
    assert t.warnings == []


def write(tmp_path: Path, reply: str) -> Path:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(
        "# aider chat started at 2026-04-22 22:40:47\n\n"
        "> Aider v0.86.2  \n> Model: deepseek/deepseek-reasoner with diff edit format  \n\n"
        "#### fix the greeting  \n\n" + reply
    )
    return path


def test_a_think_tag_s_blocks_are_not_edits(tmp_path: Path) -> None:
    """A model whose ``reasoning_tag`` is ``think`` writes it in its text: the SEARCH block it
    thinks about is no edit; the one its answer holds is."""
    block = (
        "hello.py\n```\n<<<<<<< SEARCH\nprint('hi')\n=======\nprint('hello')\n"
        ">>>>>>> REPLACE\n```\n"
    )
    reply = f"<think>\nMaybe this:\n\n{block}\n</think>\n\nHere is the fix:\n\n{block}\n"
    t = turnfold.load(write(tmp_path, reply + "> Applied edit to hello.py  \n"))
    thinking = [e for e in t.entries if isinstance(e, Thinking)]
    assert [e.text.splitlines()[0] for e in thinking] == ["Maybe this:"]
    calls = [e for e in t.entries if isinstance(e, ToolCall)]
    assert [(c.name, c.status) for c in calls] == [("edit", "success")]
    texts = [e.text for e in t.entries if isinstance(e, AssistantText)]
    assert texts == ["Here is the fix:"]


def test_a_reply_cut_off_while_it_reasoned_is_thinking_alone(tmp_path: Path) -> None:
    tag = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"
    t = turnfold.load(write(tmp_path, f"<{tag}>\n\nLet me look at the file\n\n"))
    assert [(type(e), e.text) for e in t.entries if isinstance(e, (Thinking, AssistantText))] == [
        (Thinking, "Let me look at the file")
    ]
