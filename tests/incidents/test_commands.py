"""``/fisk timeline`` and ``/fisk summary`` through the real bolt app: which thread is meant, and refusals."""

from __future__ import annotations

import json

from tests.incidents.conftest import WEB
from tests.slack.conftest import Harness
from tests.support.waiting import wait_for


def _answers(harness: Harness) -> str:
    return json.dumps(harness.slack.response_url_posts)


async def test_which_thread(harness: Harness) -> None:
    await harness.command("timeline", user="UREQ", channel=WEB)
    await wait_for(lambda: "Which thread?" in _answers(harness))
    link = "https://acme.slack.com/archives/C0OTHER/p1700000000000100"
    await harness.command(f"summary {link}", user="UREQ", channel=WEB)
    await wait_for(lambda: "Run this in the channel of that thread." in _answers(harness))
    await harness.command("timeline https://acme.slack.com/archives/C0WEB/p1700000000000100", user="UREQ",
                          channel=WEB)
    await wait_for(lambda: "Nothing is recorded for that thread" in _answers(harness))
    assert harness.slack.uploads == {} and harness.slack.calls_to("chat.postMessage") == []
