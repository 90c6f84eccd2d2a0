"""A slack replica killed -9 in the middle of a click's handling (the approval made, its card update waiting on
Slack, nothing acknowledged): the other replica takes the recorded click over and handles it again. Real
``serve --role slack`` processes on one real Redis, the fake Slack Web API: the call is approved once (one
approval, one run entry, one audit line of its decision), and the clicker is told their click had taken effect."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
from redis.asyncio import Redis

from bot.approvals.audit import read_audit
from bot.approvals.policy import ApprovalPolicy
from bot.approvals.records import CallState, Proposal, hash_argv
from bot.approvals.store import CallStore
from bot.slack.intake import Intake
from bot.slack.settings import SlackSettings
from tests.support import decision_keys
from tests.support.fake_slack import FakeSlack, SlackCall, sign_slack_request
from tests.support.redis_server import free_port
from tests.support.serve_process import ServeProcess, wait_until
from tests.support.waiting import wait_for

SECRET = "killed-replica-signing-secret"
CHANNEL = "C0KILLED"


def config(tmp_path: Path, tool: Path, index: int, port: int) -> Path:
    path = tmp_path / f"config-{index}.yaml"
    path.write_text(json.dumps({
        "applications": [{"binary": str(tool)}],
        "decisions": decision_keys.write_key_files(tmp_path / "keys"),
        "approval": {"approvers": {"users": ["UAPPROVER"]}},
        "shutdown_grace_seconds": 2,
        "slack": {"mode": "http", "http_host": "127.0.0.1", "http_port": port, "usergroup_cache_seconds": 0,
                  "working_reaction": "", "reclaim_idle_seconds": 1.0},
    }))
    return path


async def test_a_replica_killed_mid_click_leaves_it_to_the_other_which_approves_nothing_twice(
    tmp_path: Path, redis_url: str, redis: Redis, opsctl: Path
) -> None:
    store = CallStore(redis, signer=decision_keys.signer())
    argv = ["opsctl", "status"]
    (record,) = await store.propose(f"slack:{CHANNEL}:1700.000001", [Proposal(
        tool="opsctl_status", app="opsctl", arguments="{}", argv=argv, tags=[])], ApprovalPolicy(), "UREQ")
    ports = [free_port(), free_port()]
    release, updating = threading.Event(), threading.Event()

    def update(call: SlackCall) -> dict[str, Any]:
        updating.set()
        release.wait(20)  # the first replica's card update hangs on Slack until it is dead
        return {"ok": True, "channel": call.params.get("channel"), "ts": call.params.get("ts")}

    with FakeSlack() as slack:
        slack.on("chat.update", update)
        card = slack._api_chat_postMessage({"channel": CHANNEL, "thread_ts": "1700.000001", "text": "card"})
        await store.set_meta(record.id, slack_channel=CHANNEL, slack_ts=card["ts"])
        env = {**os.environ, "REDIS_URL": redis_url, "SLACK_BOT_TOKEN": "xoxb-killed",
               "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack.api_url}
        doomed = ServeProcess("slack", "slack-doomed", config(tmp_path, opsctl, 0, ports[0]), env, tmp_path / "logs")
        survivor: ServeProcess | None = None
        try:
            wait_until(doomed.ready, 60, "the first replica ready", 0.1)
            payload = {
                "type": "block_actions", "user": {"id": "UAPPROVER"}, "team": {"id": "T0FAKE"}, "api_app_id": "AFAKE",
                "channel": {"id": CHANNEL},
                "container": {"type": "message", "message_ts": card["ts"], "channel_id": CHANNEL},
                "message": {"ts": card["ts"], "thread_ts": "1700.000001"},
                "actions": [{"action_id": "fisk_approve", "block_id": "b", "type": "button",
                             "value": json.dumps({"call": record.id, "argv": hash_argv(argv)}),
                             "action_ts": str(time.time())}],
                "response_url": slack.response_url("click"), "trigger_id": "trig-1",
            }  # fmt: skip
            body = urlencode({"payload": json.dumps(payload)})
            async with aiohttp.ClientSession() as session:
                headers = {"Content-Type": "application/x-www-form-urlencoded", **sign_slack_request(SECRET, body)}
                async with session.post(f"http://127.0.0.1:{ports[0]}/slack/events", data=body.encode(),
                                        headers=headers) as resp:
                    assert resp.status == 200
            await wait_for(updating.is_set, timeout=20)  # approved; its card update waits on Slack
            assert (await store.get(record.id)).state is CallState.approved
            doomed.process.send_signal(signal.SIGKILL)
            doomed.process.wait(10)
            stream = Intake(redis, SlackSettings(mode="http")).stream
            assert int((await redis.xpending(stream, "intake"))["pending"]) == 1  # handled, not acknowledged
            release.set()
            survivor = ServeProcess("slack", "slack-survivor", config(tmp_path, opsctl, 1, ports[1]), env,
                                    tmp_path / "logs")
            wait_until(survivor.ready, 60, "the second replica ready", 0.1)

            async def taken_over() -> bool:
                return int((await redis.xpending(stream, "intake"))["pending"]) == 0

            assert await wait_for(taken_over, timeout=30)
            final = await store.get(record.id)
            assert final.state is CallState.approved and [a.user for a in final.approvals] == ["UAPPROVER"]
            assert await redis.xlen(store.keys.run_stream(0)) == 1
            decisions = [e for e in await read_audit(redis, call_id=record.id, limit=20) if e.to_state == "approved"]
            assert len(decisions) == 1
            notes = [c.params["text"] for c in slack.calls_to("chat.postEphemeral")]
            assert len(notes) == 1 and "already approved" in notes[0]  # handled again: the clicker is told
        except BaseException:
            for process in (doomed, survivor):
                if process is not None:
                    print(f"==== {process.name}\n{process.log_tail()}")
            raise
        finally:
            release.set()
            for process in (doomed, survivor):
                if process is not None:
                    process.stop()
