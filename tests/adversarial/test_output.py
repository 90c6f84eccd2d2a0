"""What a hostile tool prints, through the real runner and the real poster, as Slack finally receives it.

Every secret format the sanitizer knows, terminal control sequences (CSI, OSC titles, OSC 8 hyperlinks, C1
controls), bidirectional overrides, Slack mention and link syntax, and invalid UTF-8 go in; the recorded
chat.postMessage payloads (and the uploaded snippet) must contain none of them in an active form. Then 200 MB
through the approved-call path: bounded memory, head and tail kept, secrets at both ends redacted.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

from bot.agent import bus
from bot.approvals.records import CallRecord, CallState, Proposal
from bot.runner.binary import BinarySnapshots
from bot.runner.call import ExecutionLimits, execute_approved_call
from bot.tools.catalog import Catalog
from tests.adversarial.conftest import CountingApp
from tests.slack.conftest import CHANNEL, Harness, wait_for
from tests.test_sanitize import CORPUS, GHP

CONV = f"slack:{CHANNEL}:1700.000001"
CONTROLS = (
    "\x1b[31mred\x1b[0m \x1b[2J\x1b[H cleared \x1b]0;fake title\x07 "
    "\x1b]8;;https://evil.example/steal\x1b\\innocent link\x1b]8;;\x1b\\ "
    "\x9b31mc1-csi \x9d8;;https://evil.example\x9c osc-c1 \x1bPdcs\x1b\\ "
    "rev\u202eesrever\u202c iso\u2066late\u2069 nul\x00 bell\x07 bs\x08 cr\r\n"
)
MENTIONS = "<!channel> <!here> <!everyone> <@U123> <!subteam^S1> <#C999> <https://evil|click> <mailto:a@b|x>"
PADDING = "\n".join(f"filler line {i:05d} ................................................." for i in range(300))
ACTIVE = ("<!channel>", "<!here>", "<!everyone>", "<@U123>", "<!subteam", "<#C999>", "<https://evil", "<mailto")
INVISIBLE = ("\x1b", "\x9b", "\x9d", "\x9c", "\x00", "\x07", "\x08", "\r", "\u202e", "\u202c", "\u2066", "\u2069")


def hostile_output() -> bytes:
    secrets = "\n".join(text for text, *_ in CORPUS)
    return (f"{secrets}\n{CONTROLS}\n{MENTIONS}\n".encode() + b"bad utf8: \xff\xfe\xc3 end\n"
            + f"{PADDING}\nsecret again at the end: {GHP}\n{MENTIONS}\n".encode())


async def approved_and_run(harness: Harness, start: Callable[[], Awaitable[None]], catalog: Catalog,
                           arguments: str) -> CallRecord:
    tool = catalog.get("service_status")
    assert tool is not None
    proposal = Proposal(tool=tool.name, app=tool.app, arguments=arguments, argv=tool.render_argv(arguments),
                        tags=list(tool.tags), binary_digest=tool.settings.binary_digest)
    (record,) = await harness.store.propose(CONV, [proposal], harness.front.deps.policy, "UREQ")
    record = await harness.show_card(record, start)
    await harness.click(record, "fisk_approve", "UAPPROVER")

    async def posted() -> CallRecord | None:
        latest = await harness.store.get(record.id)
        return latest if latest.meta.get("slack_result_ts") else None

    return await wait_for(posted, timeout=15)


def result_posts(harness: Harness) -> list[dict[str, Any]]:
    return [c.params for c in harness.slack.calls_to("chat.postMessage")
            if "exit code" in json.dumps(c.params.get("blocks"))]


async def test_hostile_output_reaches_slack_inert(
    harness: Harness, poster, counted: CountingApp, counted_catalog: Catalog, run_calls
) -> None:
    await run_calls(counted_catalog)
    counted.prints(hostile_output())
    record = await approved_and_run(harness, poster, counted_catalog, '{"service": "web"}')
    assert record.state == CallState.finished and record.result is not None
    assert record.result["redactions"] >= len(CORPUS)
    (post,) = result_posts(harness)
    assert post["parse"] == "none" and post["link_names"] in (False, "0", 0)
    shown = json.dumps(post["blocks"], ensure_ascii=False) + post["text"]
    (upload,) = harness.slack.uploads.values()  # long output: the full (sanitized) text as a snippet
    snippet = upload.decode()
    assert "bad utf8: \ufffd\ufffd\ufffd end" in snippet and "[REDACTED:github_token]" in snippet
    for where in (shown, snippet):
        for _text, secret, _kind, _kept in CORPUS:
            assert secret not in where, secret
        for char in INVISIBLE:
            assert char not in where, repr(char)
    for mention in ACTIVE:
        assert mention not in shown, mention
    assert "&lt;!channel&gt;" in shown and "&lt;https://evil|click&gt;" in shown
    assert "innocent link" in snippet and "https://evil.example/steal" not in snippet  # OSC 8 target dropped
    # everything stored (what the model reads) is the same sanitized text
    stored = json.dumps(record.result, ensure_ascii=False)
    assert GHP not in stored and "\x1b" not in stored and "\u202e" not in stored


async def test_200_mb_through_the_approved_call_path_is_bounded(counted: CountingApp,
                                                              counted_catalog: Catalog) -> None:
    tool = counted_catalog.get("service_status")
    assert tool is not None
    argv = tool.render_argv('{"service": "web"}')
    head = f"FIRST {GHP}\n\x1b[31m<!channel>\x1b[0m\n".encode()
    tail = b"\nAKIAIOSFODNN7EXAMPLE LAST\n"
    counted.floods(200, head, tail)
    tracemalloc.start()
    try:
        result = await execute_approved_call(counted_catalog, tool.name, '{"service": "web"}', argv,
                                             ExecutionLimits(), BinarySnapshots(), tool.settings.binary_digest)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.status == "finished" and result.exit_code == 0 and result.truncated
    assert result.total_bytes > 200 * 1024 * 1024
    assert len(result.output.encode()) <= 65536
    assert result.output.startswith("service\nstatus\n") and "FIRST [REDACTED:github_token]" in result.output
    assert result.output.endswith("[REDACTED:aws_access_key_id] LAST\n")
    assert "\x1b" not in result.output and GHP not in result.output
    assert "bytes omitted" in result.output
    assert peak < 20 * 1024 * 1024, f"runner peaked at {peak} bytes"


async def test_approval_card_shows_invisible_characters_in_arguments(
    harness: Harness, poster, counted_catalog: Catalog
) -> None:
    tool = counted_catalog.get("service_logs")
    assert tool is not None
    arguments = json.dumps({"service": "web\u202e--force\u202c", "grep": ["a\u200bb", "x\ny"],
                            "level": "\x1b[2Kinfo <!channel>"})
    proposal = Proposal(tool=tool.name, app=tool.app, arguments=arguments, argv=tool.render_argv(arguments),
                        binary_digest=tool.settings.binary_digest)
    (record,) = await harness.store.propose(CONV, [proposal], harness.front.deps.policy, "UREQ")
    await bus.publish(harness.redis, bus.OUTBOX, bus.BusEvent("proposed", CONV, {"call_ids": [record.id]}))
    await poster()
    (card,) = await wait_for(lambda: harness.slack.calls_to("chat.postMessage"))
    shown = json.dumps(card.params["blocks"], ensure_ascii=False)
    for char in ("\u202e", "\u202c", "\u200b", "\x1b"):
        assert char not in shown, repr(char)
    assert "\\u202e" in shown and "\\u200b" in shown and "\\x1b" in shown
    assert "<!channel>" not in shown and "&lt;!channel&gt;" in shown
