"""What one model response means for the turn: pure functions, no I/O, so each stop_reason is easy to test.

``step_outcome`` appends what must be kept to the transcript and says whether the turn ends (with which
reply) or continues; ``plan_calls`` turns the response's tool_use blocks into pending calls: a proposal for
the approval queue, or a local error answer when the tool is unknown/denied or the arguments are invalid.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bot.agent.model import ModelResponse
from bot.agent.state import PendingCall
from bot.agent.transcript import clean_assistant_content, text_of
from bot.approvals.records import Proposal
from bot.fisk.arguments import ArgumentsError
from bot.tools.catalog import Catalog


@dataclass
class Step:
    end: bool
    reply: str = ""
    kind: str = "answer"
    pending_tool_uses: list[dict[str, Any]] = field(default_factory=list)


def _append_assistant(transcript: list[dict[str, Any]], content: list[dict[str, Any]]) -> None:
    """Append assistant content; a continuation after pause_turn extends the paused assistant message (the
    API continues that message, so the stored history stays one assistant message per model turn)."""
    if not content:
        return
    if transcript and transcript[-1].get("role") == "assistant":
        transcript[-1]["content"] = [*transcript[-1]["content"], *content]
    else:
        transcript.append({"role": "assistant", "content": content})


def step_outcome(
    response: ModelResponse, transcript: list[dict[str, Any]], turn_start: int, max_tokens: int
) -> Step:
    stop = response.stop_reason
    content = response.content
    if stop == "tool_use":
        kept = clean_assistant_content(content)
        tool_uses = [b for b in kept if b.get("type") == "tool_use"]
        _append_assistant(transcript, kept)
        if tool_uses:
            return Step(False, text_of(kept), "preface", tool_uses)
        return Step(True, text_of(kept) or "(The model asked for tools but named none.)")
    if stop == "pause_turn":
        # a long server-tool turn paused: send the assistant content back as is and ask again
        _append_assistant(transcript, clean_assistant_content(content))
        return Step(False)
    if stop == "refusal":
        # the refused request is removed so the next message does not carry it (and get refused again)
        del transcript[turn_start:]
        return Step(True, "The model declined to answer this request. It was removed from the conversation;"
                    " rephrase it or ask something else.", "notice")
    if stop == "max_tokens":
        kept = clean_assistant_content(content, drop_tool_use=True)
        _append_assistant(transcript, kept)
        text = text_of(kept)
        note = f"(The answer was cut off at the {max_tokens}-token output limit. Ask me to continue.)"
        return Step(True, f"{text}\n\n{note}" if text else note, "answer" if text else "notice")
    if stop == "model_context_window_exceeded":
        kept = clean_assistant_content(content, drop_tool_use=True)
        _append_assistant(transcript, kept)
        text = text_of(kept)
        note = "(This conversation no longer fits in the model's context window. Please start a new one.)"
        return Step(True, f"{text}\n\n{note}" if text else note, "answer" if text else "notice")
    # end_turn, stop_sequence, or a stop_reason this version does not know: the text is the answer
    kept = clean_assistant_content(content, drop_tool_use=True)
    _append_assistant(transcript, kept)
    return Step(True, text_of(kept) or "(The model ended its turn without an answer.)")


def plan_calls(
    tool_uses: list[dict[str, Any]], raw_inputs: dict[str, str], catalog: Catalog
) -> list[PendingCall]:
    """One pending call per tool_use, in block order. The tool name is looked up, never trusted: unknown and
    denied names, and arguments that do not convert to argv, are answered locally (nothing is proposed)."""
    pending = []
    for block in tool_uses:
        tool_use_id = str(block.get("id"))
        name = str(block.get("name"))
        raw = raw_inputs.get(tool_use_id) or json.dumps(block.get("input") or {})
        tool = catalog.get(name)
        if tool is None:
            if name in catalog.denied:
                text = (f"The tool {name!r} is denied by the operator's configuration and can never be run."
                        " Do not try to achieve the same effect with other tools.")
            else:
                text = (f"Unknown tool {name!r}: it is not one of the tools offered to you. Nothing was run;"
                        " use only the tools you were given.")
            pending.append(PendingCall(tool_use_id=tool_use_id, local_result=text))
            continue
        try:
            argv = tool.render_argv(raw)
        except ArgumentsError as exc:
            pending.append(PendingCall(
                tool_use_id=tool_use_id,
                local_result=f"Invalid arguments ({exc.kind}), nothing was run or shown to the operator:"
                f" {exc.message}. Correct the arguments and call the tool again.",
            ))
            continue
        proposal = Proposal(tool=name, app=tool.app, arguments=raw, argv=argv, tags=list(tool.tags),
                            tool_use_id=tool_use_id, binary_digest=tool.settings.binary_digest,
                            model_hash=tool.settings.model_hash)
        pending.append(PendingCall(tool_use_id=tool_use_id, proposal=proposal))
    return pending
