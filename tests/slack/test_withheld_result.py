"""A real call whose argv asked for a secret's value, stored by the real store: the thread's result, the model's
tool_result and the console say why the output is all markers, and none of them holds the secret."""

from __future__ import annotations

import json
from pathlib import Path

from bot.agent.results import record_result
from bot.approvals.records import Proposal
from bot.approvals.store import CallStore
from bot.console_view import result_text
from bot.fisk.environment import scrub_environment
from bot.runner import run_argv
from bot.slack.cards import render_result
from tests.slack.conftest import CHANNEL
from tests.slack.test_cards import POLICY
from tests.support.fisk_app import make_script

SECRET = "Sup3r;S3cret"


async def test_thread_model_and_console_say_why_and_show_no_secret(store: CallStore, tmp_path: Path) -> None:
    vault = make_script(tmp_path, "vault", f"print({SECRET!r})\n")
    argv = [str(vault), "kv", "get", "-field=password", "secret/db"]
    result = await run_argv(argv, env=scrub_environment().env, cwd=None, timeout=20.0)
    (record,) = await store.propose(f"slack:{CHANNEL}:1700.000009", [
        Proposal(tool="kv_get", app="vault", arguments="{}", argv=argv)], POLICY, "UREQ")
    await store.approve(record.id, "UAPP", [], POLICY)
    assert await store.claim(record.id, "runner-a") is not None
    ended = await store.finish(record.id, "runner-a", result.as_json())

    _text, blocks, _attach = render_result(ended)
    thread = json.dumps(blocks)
    assert "Output withheld: the command asks for a secret's value (-field=password)" in thread
    assert "[REDACTED:secret_field#" in thread and "1 secret(s) redacted" in thread
    model = record_result("toolu_1", ended)["content"]
    assert "(output withheld: the command asks for a secret's value (-field=password)" in model
    assert "[REDACTED:secret_field#" in model
    console = result_text(ended).plain
    assert "output withheld: the command asks" in console
    for shown in (thread, model, console):
        assert SECRET not in shown and "S3cret" not in shown


async def test_a_timed_out_call_says_why_its_partial_output_is_withheld(store: CallStore, tmp_path: Path) -> None:
    vault = make_script(tmp_path, "vault", f"import time\nprint({SECRET!r}, flush=True)\ntime.sleep(30)\n")
    argv = [str(vault), "read", "-field=password", "database/creds/ro"]
    result = await run_argv(argv, env=scrub_environment().env, cwd=None, timeout=1.0, kill_grace=0.5)
    assert result.status == "timed_out" and result.output_withheld is not None
    (record,) = await store.propose(f"slack:{CHANNEL}:1700.000010", [
        Proposal(tool="read", app="vault", arguments="{}", argv=argv)], POLICY, "UREQ")
    await store.approve(record.id, "UAPP", [], POLICY)
    assert await store.claim(record.id, "runner-a") is not None
    ended = await store.finish(record.id, "runner-a", result.as_json())
    model = record_result("toolu_2", ended)["content"]
    assert model.startswith("The command timed out and was killed.\n(output withheld: the command asks")
    assert "[REDACTED:secret_field#" in model and SECRET not in model
