"""The view model: JSON-ready, stable keys, default fold states, navigation (W-1, P-10, P-11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import turnfold
from turnfold.model import SubAgent, ToolResult, Transcript
from turnfold.recording import Recorder
from turnfold.render.viewmodel import ancestor_path, build_view_model, iter_nodes
from turnfold.samples import demo_session
from turnfold.settings import DisplaySettings

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json*"))
MODES = ("flat", "command-first", "fully-folded")


def views_of(transcript: Transcript) -> list[dict[str, object]]:
    return [
        build_view_model(transcript, DisplaySettings(transcript_display_mode=mode, locale=locale))
        for mode in MODES
        for locale in ("en", "zh")
    ]


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_W1_every_fixture_projects_to_json_with_unique_keys(path: Path) -> None:
    for view in views_of(turnfold.load(path)):
        json.dumps(view)  # JSON-ready: nothing but dicts, lists and scalars
        keys = [node["key"] for node in iter_nodes(view)]
        assert len(keys) == len(set(keys)), "keys must be unique"


def test_W4_the_view_model_is_deterministic() -> None:
    first = json.dumps(build_view_model(demo_session()), sort_keys=True)
    assert json.dumps(build_view_model(demo_session()), sort_keys=True) == first


def test_W1_one_process_per_turn_and_the_answer_outside_it() -> None:
    view = build_view_model(demo_session())
    turns = [n for n in view["nodes"] if n["kind"] == "turn"]
    assert len(turns) == 2
    for turn in turns:
        assert turn["process"]["key"].startswith("process:")
        assert turn["answer"]["kind"] == "answer"
        assert not turn["process"]["open"]  # settled: closed from the first paint
    assert turns[0]["header"]["text"] == "Completed · 25s · 7 tools"


def test_F7_subagent_transcripts_nest_with_prefixed_keys() -> None:
    view = build_view_model(demo_session())
    tools = [n for n in iter_nodes(view) if n["kind"] == "tool" and n["subagent"]]
    (task,) = tools
    assert task["subagent"]["line"] == "✔ reviewer: review the fix · 2 tools · 12s · 2.4k tokens"
    nested = [n["key"] for n in task["subagent"]["nodes"]]
    assert nested
    assert all(key.startswith(task["key"] + "/") for key in nested)


def _delegated(report: ToolResult) -> Transcript:
    child = Recorder()
    child.user("Find the default port")
    child.finish_tool(child.start_tool("Read", {"file_path": "app.py"}), "PORT = 3000")
    child.assistant("The default port is 3000.")
    rec = Recorder()
    rec.user("What port?")
    call = rec.start_tool("Task", {"description": "look"})
    rec.attach_subagent(call, child.transcript, name="explorer")
    rec.finish_tool(call, report)
    rec.assistant("3000.")
    return rec.transcript


def test_F7_a_sub_agent_s_report_that_is_its_answer_is_shown_once() -> None:
    # Claude Code's Agent hands back its sub-agent's last text: shown as the answer that ends
    # the nested transcript, and again as the call's result, it read twice when opened.
    view = build_view_model(_delegated(ToolResult(text="The default port is 3000.\n")))
    task = next(n for n in iter_nodes(view) if n["kind"] == "tool" and n["subagent"])
    assert task["result"] is None
    assert task["fold"]["note"] is None  # not "no output": its output is the answer above
    assert "default port is 3000" in task["subagent"]["nodes"][-1]["answer"]["html"]
    # A report that says more than the answer (or anything else) is the call's own result.
    view = build_view_model(_delegated(ToolResult(text="The default port is 3000.\nagentId: a1")))
    task = next(n for n in iter_nodes(view) if n["kind"] == "tool" and n["subagent"])
    assert task["result"] is not None
    assert "agentId: a1" in task["result"]["html"]


def test_P10_keys_survive_appends() -> None:
    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    rec.user("go")
    rec.thinking("plan")
    rec.finish_tool(rec.start_tool("Read", {"file_path": "a"}), "x")
    before = {n["key"] for n in iter_nodes(build_view_model(rec.transcript))}
    rec.finish_tool(rec.start_tool("Bash", {"command": "ls"}), "y")
    rec.assistant("done")
    after = {n["key"] for n in iter_nodes(build_view_model(rec.transcript))}
    assert before <= after  # every key still there, the same node under it


def test_P11_ancestor_path_opens_only_what_contains_the_entry() -> None:
    view = build_view_model(demo_session())
    turn = next(n for n in view["nodes"] if n["kind"] == "turn")
    tools = [n for n in iter_nodes(view) if n["kind"] == "tool"]
    read = next(t for t in tools if t["name"] == "Read" and "config.ts" in (t["description"] or ""))
    path = ancestor_path(view, read["key"])
    assert path is not None
    assert path[0] == turn["process"]["key"]
    assert any(key.startswith("group:") for key in path)
    assert path[-1].startswith("summary:")  # the read sits in a summary row
    assert ancestor_path(view, turn["answer"]["key"]) == []  # the answer is outside the fold
    assert ancestor_path(view, "no-such-key") is None


def test_P11_ancestor_path_reaches_into_subagents() -> None:
    view = build_view_model(demo_session())
    task = next(n for n in iter_nodes(view) if n["kind"] == "tool" and n["subagent"])
    inner = next(n for n in iter_nodes(view) if n["key"].startswith(task["key"] + "/")
                 and n["kind"] == "tool")  # fmt: skip
    path = ancestor_path(view, inner["key"])
    assert path is not None
    assert task["key"] in path


def test_L4_warnings_become_one_quiet_notice() -> None:
    t = turnfold.load(b'{"turnfold": 1}\n{"kind": "user", "text": "hi"}\n{oops\n')
    view = build_view_model(t)
    # Issue 21.15: never "everything readable is shown" when a record was skipped.
    assert view["notice"]["text"] == "Loaded with 1 problem: some records may not be shown"
    (item,) = view["notice"]["items"]
    assert item.startswith("&lt;bytes&gt;:3: invalid JSON")


def test_L4_the_notice_names_the_file_never_its_absolute_path(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"turnfold": 1}\n{"kind": "user", "text": "hi"}\n{oops\n')
    (item,) = build_view_model(turnfold.load(path))["notice"]["items"]
    assert item.startswith("session.jsonl:3: invalid JSON")
    assert str(tmp_path) not in item


def test_W1_results_are_rendered_html_and_folding_flags_are_carried() -> None:
    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    rec.user("go")
    rec.finish_tool(rec.start_tool("Read", {"file_path": "a"}), "<b>not bold</b>")
    rec.finish_tool(
        rec.start_tool("Task", {"description": "x"}), ToolResult(text="**ok**", kind="subagent")
    )
    rec.attach_subagent(rec.transcript.tool_calls()[-1], Transcript(), name="n")
    tools = [n for n in iter_nodes(build_view_model(rec.transcript)) if n["kind"] == "tool"]
    read, task = tools
    assert "<b>" not in read["result"]["html"]
    assert "&lt;b&gt;" in read["result"]["html"]
    assert read["result_folded"] is True
    assert task["forced_open"] is True
    assert read["open"] is task["open"] is False  # P-8: no leaf payload opens by default


def test_subagent_stats_object_is_untouched_by_rendering() -> None:
    agent = SubAgent(name="n", task="t", tool_count=1)
    t = Transcript()
    t.append(turnfold.UserMessage(text="go"))
    t.append(turnfold.ToolCall(name="Task", status="success", subagent=agent))
    snapshot = t.dump()
    build_view_model(t)
    assert t.dump() == snapshot  # T-3 / L-4: rendering never modifies the transcript


# --- H-6: the run's outcome beside the title ---------------------------------------------------

INSPECT = Path(__file__).parent / "fixtures/harnesses/inspect/mockllm_one-sample.json"


def test_H6_an_eval_sample_s_outcome_and_score_head_the_view_and_the_page() -> None:
    from turnfold.render.html import render_html

    transcript = turnfold.load(INSPECT)
    outcome = transcript.metadata["outcome"]
    view = build_view_model(transcript)
    badge = view["outcome"]
    assert badge["status"] == outcome
    assert badge["text"].split(" · ")[0] == {"pass": "Passed", "fail": "Failed"}.get(
        outcome, badge["text"].split(" · ")[0]
    )
    assert "score" in badge["text"]
    page = render_html(view, title="sample")
    assert f'<div class="tf-outcome" data-status="{outcome}">' in page
    zh = build_view_model(transcript, DisplaySettings(locale="zh"))
    assert "得分" in zh["outcome"]["text"]


@pytest.mark.parametrize(
    ("metadata", "text", "status"),
    [
        ({}, None, None),
        ({"outcome": "pass", "score": 1.0}, "Passed · score 1", "pass"),
        ({"outcome": "fail", "score": {"match": 0, "includes": "I"}},
         "Failed · score match 0, includes I", "fail"),
        ({"outcome": "incomplete", "cost_usd": 0.01234}, "Incomplete", "incomplete"),  # U-3
        ({"outcome": "resolved-ish"}, "Outcome: resolved-ish", "other"),
        ({"score": 0.333333}, "score 0.3333", "other"),
        ({"outcome": "pass", "score": True, "cost_usd": "free"}, "Passed", "pass"),
    ],
)  # fmt: skip
def test_H6_the_badge_names_what_the_metadata_records_and_nothing_else(
    metadata: dict[str, object], text: str | None, status: str | None
) -> None:
    from turnfold.render.viewmodel import outcome_badge

    badge = outcome_badge(metadata, "en")
    assert (badge and badge["text"], badge and badge["status"]) == (text, status)


def test_X1_an_outcome_the_source_wrote_is_escaped_on_the_page() -> None:
    from turnfold.render.html import render_html

    transcript = Transcript(metadata={"outcome": "<script>alert(1)</script>"})
    page = render_html(build_view_model(transcript), title="t")
    assert "<script>alert" not in page
    assert "&lt;script&gt;" in page


def test_H6_the_streamed_page_of_turnfold_render_shows_the_outcome_too(tmp_path: Path) -> None:
    from turnfold.cli import main

    target = tmp_path / "sample.html"
    assert main(["render", str(INSPECT), "-o", str(target)]) == 0
    outcome = turnfold.load(INSPECT).metadata["outcome"]
    page = target.read_text(encoding="utf-8")
    assert f'<div class="tf-outcome" data-status="{outcome}">' in page
    # Where render_html puts it: after the title, before the first turn.
    assert page.index("tf-outcome") < page.index('class="tf-turn')


def test_W5_a_long_user_message_shows_its_first_lines_and_the_rest_one_click_away() -> None:
    from turnfold.render.html import render_html
    from turnfold.render.search import search_view
    from turnfold.render.text import render_text
    from turnfold.render.viewmodel import USER_LINES

    pasted = "\n".join(f"line {n} of the pasted <log>" for n in range(200))
    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    rec.user(f"Why does this fail?\n{pasted}")
    rec.assistant("Line 150 says why.")
    short = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    short.user("A short question")
    for locale, label in (("en", "Show the whole message (189 more lines)"),
                          ("zh", "显示完整消息（还有 189 行）")):  # fmt: skip
        view = build_view_model(rec.transcript, DisplaySettings(locale=locale))
        (user,) = [node for node in view["nodes"] if node["kind"] == "user"]
        assert user["html"].count("\n") == USER_LINES
        assert user["more_label"] == label
    assert "line 199 of the pasted &lt;log&gt;" in user["more_html"]  # escaped, nothing lost
    page = render_html(view)
    assert '<details class="tf-more"><summary>显示完整消息' in page
    assert "line 199 of the pasted &lt;log&gt;" in page
    text = render_text(build_view_model(rec.transcript))
    assert "line 10 of" in text  # the question and the first 11 pasted lines
    assert "line 11 of" not in text
    assert "Show the whole message (189 more lines)" in text
    hits, _ = search_view(view, "line 199 of")  # the rest is searched too
    assert [hit["key"] for hit in hits] == [user["key"]]
    (plain,) = build_view_model(short.transcript)["nodes"]
    assert "more_label" not in plain  # a short message carries nothing more


def test_L1_a_model_s_images_show_after_its_text_as_a_prompt_s_do() -> None:
    """An image the model returned with its text (a Gemini answer's, in an Inspect log or a
    trace) is shown after the text, in the answer and in a progress note, as a pasted image
    is; the terminal names it; an image no page can show is a note, never dropped."""
    from turnfold.model import AssistantText, ImageData, ToolCall, UserMessage
    from turnfold.render.html import render_html
    from turnfold.render.text import render_text

    png = ImageData(media_type="image/png", data="iVBORw0KGgo=")
    svg = ImageData(media_type="image/svg+xml", data="PHN2Zy8+")
    transcript = Transcript([
        UserMessage(text="Draw it"),
        AssistantText(text="A first sketch:", images=[png]),
        ToolCall(call_id="c1", name="Read", args={"file_path": "a.py"}, status="success"),
        AssistantText(text="The drawing:", images=[png, svg]),
    ])  # fmt: skip
    view = build_view_model(transcript)
    (turn,) = [node for node in view["nodes"] if node["kind"] == "turn"]
    shown = 'src="data:image/png;base64,iVBORw0KGgo='
    assert turn["answer"]["html"].startswith('<div class="tf-md"><p>The drawing:</p></div>')
    assert turn["answer"]["html"].count(shown) == 1
    assert 'class="tf-note"' in turn["answer"]["html"]  # the SVG: named, not shown
    progress = [n for n in iter_nodes(view) if n.get("kind") == "progress"]
    assert progress
    assert shown in progress[0]["html"]
    assert shown in render_html(view)
    assert "[image/png]" in render_text(view)


# --- a rejected reply: shown, and said to be rejected ---------------------------------------------


def _preference_row() -> Transcript:
    """A LLaMA-Factory preference row whose rejected reply reasons, writes and reads a file:
    read before the chosen reply, the answer, its entries marked ``meta["rejected"]``."""

    def message(role: str, *parts: tuple[str, str]) -> dict[str, object]:
        return {"role": role, "content": [{"type": kind, "value": value} for kind, value in parts]}

    prompt = message("user", ("text", "How big is the circle?"))
    call = json.dumps({"name": "read_file", "arguments": {"path": "circle.txt"}})
    return turnfold.load({
        "chosen_messages": [prompt, message("assistant", ("text", "About 12.57."))],
        "rejected_messages": [prompt, message(
            "assistant", ("reasoning", "Guessing is quicker."), ("text", "Let me read it."),
            ("tool_call", call),
        )],
    })  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
def test_L2_a_rejected_reply_s_nodes_say_so_and_the_chosen_answer_s_does_not(mode: str) -> None:
    """Every node of the rejected reply carries the label, in the reader's language; the
    summary row that stands for its call does too; nothing of the chosen reply does."""
    transcript = _preference_row()
    for locale, label in (("en", "Rejected"), ("zh", "被拒绝")):
        settings = DisplaySettings(transcript_display_mode=mode, locale=locale)
        view = build_view_model(transcript, settings)
        marked = [(n["kind"], n.get("rejected_label")) for n in iter_nodes(view)]
        assert marked == [
            ("user", None), ("turn", None), ("thinking", label), ("progress", label),
            ("batch", None), ("summary", label), ("tool", label), ("answer", None),
        ]  # fmt: skip
        json.dumps(view)


def test_L2_a_summary_row_is_rejected_only_when_all_its_tools_are() -> None:
    from turnfold.model import AssistantText, ToolCall, UserMessage

    rejected = {"rejected": True}
    transcript = Transcript([
        UserMessage(text="Read both"),
        ToolCall(call_id="c1", name="Read", args={"file_path": "a.py"}, status="success",
                 meta=rejected, batch_id="b"),
        ToolCall(call_id="c2", name="Read", args={"file_path": "b.py"}, status="success",
                 batch_id="b"),
        AssistantText(text="Done."),
    ])  # fmt: skip
    view = build_view_model(transcript)
    (summary,) = [n for n in iter_nodes(view) if n["kind"] == "summary"]
    assert summary["rejected_label"] is None  # present, so a patch can clear it (W-2)
    assert [t.get("rejected_label") for t in summary["tools"]] == ["Rejected", None]


def test_U1_a_response_mini_swe_agent_rejected_is_labelled_even_as_a_turn_s_answer() -> None:
    """A format error's notice ends the turn, so the text it rejected is the turn's answer:
    the answer says it was rejected, as a progress note does."""
    path = (
        Path(__file__).parent / "fixtures" / "harnesses" / "mini-swe-agent"
        / "mini-swe-agent_v2.4.6_litellm_usage-rejected-responses.traj.json"
    )  # fmt: skip
    view = build_view_model(turnfold.load(path))
    first, second, _ = [n for n in view["nodes"] if n["kind"] == "turn"]
    assert first["answer"]["rejected_label"] == "Rejected"
    texts = [n for n in iter_nodes({"nodes": [first, second]}) if n["kind"] == "progress"]
    assert [n.get("rejected_label") for n in texts] == [None, "Rejected"]  # "Look first." is not


def test_L3_a_call_of_unknown_outcome_and_no_result_is_not_said_to_have_finished() -> None:
    rec = Recorder()
    rec.user("go")
    ran = rec.finish_tool(rec.start_tool("Bash", {"command": "ls"}), "a.txt", status="unknown")
    never = rec.start_tool("Bash", {"command": "rm -rf build"})
    rec.transcript.update(never, status="unknown")  # a list of messages that ends on a call
    tools = {
        n["key"]: n for n in iter_nodes(build_view_model(rec.transcript)) if n["kind"] == "tool"
    }
    assert tools[ran.id]["status_text"] == "Finished, outcome not recorded"
    assert tools[never.id]["status_text"] == "Outcome not recorded"
