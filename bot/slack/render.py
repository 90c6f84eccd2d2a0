"""Block Kit rendering: pure functions from texts to ``(fallback text, blocks)``; the call's card and result
message are in ``cards.py``.

Every text that came from a tool, the model or a user is escaped here (see ``mrkdwn.py``) and every mrkdwn
object is ``verbatim`` so Slack does not auto-link names or parse mentions out of it.
"""

from __future__ import annotations

import json
import shlex
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallRecord
from bot.sanitize import reveal_invisible
from bot.slack.mrkdwn import escape, markdown_to_mrkdwn, split_mrkdwn
from bot.tools.catalog import Catalog

MAX_BLOCKS = 50
MAX_MESSAGE_CHARS = 39_000

Blocks = list[dict[str, Any]]
Message = tuple[str, Blocks]


def text_obj(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": text_obj(text)}


def context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [text_obj(text)]}


def slack_date(moment: datetime, fmt: str = "{date_short_pretty} at {time}") -> str:
    epoch = int(moment.timestamp())
    return f"<!date^{epoch}^{fmt}|{moment.strftime('%Y-%m-%d %H:%M UTC')}>"


def command_line(argv: Sequence[str]) -> str:
    return shlex.join(argv)


def reveal(text: str) -> tuple[str, bool]:
    """``text`` with every invisible or control character written as an escape, and whether any was (see
    ``bot.sanitize.reveal_invisible``): on an approval card what the human reads must be what runs."""
    return reveal_invisible(text)


def mention_user(user: str, mention: bool = True) -> str:
    """A mention of a Slack user id; anything else (an alert source: "alert:pagerduty") is shown as code."""
    is_user_id = user[:1] in ("U", "W") and user.isalnum()
    return f"<@{escape(user)}>" if mention and is_user_id else f"`{escape(user)}`"


MAX_FIELD_CHARS = 2000  # a section field's text (slack_sdk does not check this one)
MAX_BUTTON_TEXT = 75


def size_problem(blocks: Blocks) -> str | None:
    """Why Slack would refuse these blocks (None when they fit): checked before posting, so a message that
    cannot fit is refused in words instead of failing with ``invalid_blocks`` or being cut without a word.
    slack_sdk's Block Kit models check what they know (text lengths, item counts); the rest is checked here."""
    if len(blocks) > MAX_BLOCKS:
        return f"{len(blocks)} blocks (Slack takes at most {MAX_BLOCKS})"
    for number, raw in enumerate(blocks, 1):
        problem = _block_problem(raw)
        if problem:
            return f"block {number}: {problem}"
    return None


#: block (as its JSON) -> why Slack would refuse it; bounded, most recently used last. Building slack_sdk's model
#: of a block to check it costs 7-27 us a block, 70 us a card, and a card is checked at every update (three or
#: four per call) while most of its blocks (who asked, the command line, the tool) stay the same.
_BLOCK_VERDICTS: OrderedDict[str, str | None] = OrderedDict()
BLOCK_VERDICTS_KEPT = 2048


def _block_problem(raw: dict[str, Any]) -> str | None:
    """Why Slack would refuse this one block (None when it fits), remembered by the block's JSON: the verdict
    depends on nothing else, and a block Slack is sent is JSON."""
    try:
        key = json.dumps(raw, separators=(",", ":"))
    except (TypeError, ValueError):  # not JSON (never sent as is): checked, not remembered
        return _check_block(raw)
    if key in _BLOCK_VERDICTS:
        _BLOCK_VERDICTS.move_to_end(key)
        return _BLOCK_VERDICTS[key]
    problem = _BLOCK_VERDICTS[key] = _check_block(raw)
    while len(_BLOCK_VERDICTS) > BLOCK_VERDICTS_KEPT:
        _BLOCK_VERDICTS.popitem(last=False)
    return problem


def _check_block(raw: dict[str, Any]) -> str | None:
    try:
        Block.parse(raw).validate_json()  # type: ignore[union-attr]
    except (SlackObjectFormationError, AttributeError) as exc:
        return str(exc)
    for item in raw.get("fields") or []:
        if len(item.get("text", "")) > MAX_FIELD_CHARS:
            return f"a field is longer than {MAX_FIELD_CHARS} characters"
    for element in raw.get("elements") or []:
        if len((element.get("text") or {}).get("text", "") if element.get("type") == "button" else "") > \
                MAX_BUTTON_TEXT:
            return f"a button label is longer than {MAX_BUTTON_TEXT} characters"
    return None


def render_reply(markdown: str) -> Message:
    """The agent's answer: Markdown converted to mrkdwn and split into sections."""
    chunks = split_mrkdwn(markdown_to_mrkdwn(markdown))
    total = 0
    blocks: Blocks = []
    for chunk in chunks:
        if len(blocks) >= MAX_BLOCKS - 1 or total + len(chunk) > MAX_MESSAGE_CHARS:
            blocks.append(context("(answer cut: too long for one Slack message)"))
            break
        blocks.append(section(chunk))
        total += len(chunk)
    fallback = escape(markdown[:3000])
    return fallback, blocks


def render_help(command: str) -> str:
    return "\n".join(
        [
            f"*{command} <request>*: ask the bot; it opens a thread and proposes commands for approval.",
            "Mention the bot in a channel or write to it directly to start too; reply in its thread to continue.",
            f"*{command} tools*: the tools available in this channel.",
            f"*{command} pending*: calls awaiting approval in this channel.",
            f"*{command} stop*: stop your latest conversation here (or reply `stop` in its thread).",
            f"*{command} revoke*: revoke the standing approvals of your latest thread here.",
            f"*{command} timeline [link]*: upload the thread's timeline (Markdown) into it; default: your latest.",
            f"*{command} summary [link]*: a short status of the thread from the assistant.",
            f"*{command} help*: this text.",
        ]
    )


def render_tools(catalog: Catalog, policy: ApprovalPolicy) -> Blocks:
    lines = []
    for tool in sorted(catalog, key=lambda t: t.name):
        needs, trigger = policy.decide_trigger(tool.name, tool.tags)
        tags = ", ".join(escape(t) for t in tool.tags) or "no tags"
        approval = f"needs approval ({escape(trigger)})" if needs else "runs without approval"
        lines.append(f"• `{escape(tool.name)}`: {tags} · {approval}")
    if not lines:
        return [section("No tools are available in this channel.")]
    return _listing(f"*{len(lines)} tools available here*", lines)


def render_pending(records: Iterable[CallRecord], links: Mapping[str, str] | None = None) -> Blocks:
    """``/fisk pending``: each awaiting call with a link to its card (``links``: call id -> permalink)."""
    lines = []
    for r in records:
        link = (links or {}).get(r.id)
        where = f" · <{link}|open its card>" if link else " · (card not posted yet)"
        lines.append(
            f"• `{escape(r.tool)}` requested by {mention_user(r.requester)}, "
            f"expires {slack_date(r.expires_at)}{where}"
        )
    if not lines:
        return [section("Nothing is awaiting approval here.")]
    return _listing(f"*{len(lines)} call(s) awaiting approval here*", lines)


def _listing(title: str, lines: list[str]) -> Blocks:
    blocks: Blocks = [section(title)]
    for chunk in split_mrkdwn("\n".join(lines)):
        if len(blocks) >= MAX_BLOCKS - 1:
            blocks.append(context("(list cut: too long)"))
            break
        blocks.append(section(chunk))
    return blocks
