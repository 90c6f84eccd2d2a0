"""Argument shapes real fisk would read differently from the argv on the approval card are refused (issue 20).

Each case is one that fisk's own conversion accepts and the card would show, while fisk then parses something
else (``--`` dropped by its lexer, a map key cut at ``:``/``=``), or fails after approval (a required parameter
given zero values). The refusal names the parameter, says why, and says what to send instead. The last tests
run ``fisk-chatops exec`` as a real subprocess against an executable that records every run, to show that a
refused shape executes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.fisk.arguments import ArgumentsError
from bot.fisk.model import ApplicationModel
from bot.tools.catalog import AppSpec, Catalog, build_catalog
from bot.tools.tool import AppSettings, Tool
from tests.conftest import FIXTURES
from tests.support.fisk_app import make_script

ROOT = Path(__file__).resolve().parents[2]
APP = ApplicationModel.from_data(json.loads((FIXTURES / "opsctl.introspect.json").read_bytes()))
CATALOG: Catalog = build_catalog([AppSpec(AppSettings(binary="/opt/opsctl"))], lambda _s: APP)


def tool(name: str) -> Tool:
    found = CATALOG.get(name)
    assert found is not None
    return found


def refusal(name: str, arguments: dict[str, Any]) -> ArgumentsError:
    with pytest.raises(ArgumentsError) as caught:
        tool(name).render_argv(json.dumps(arguments))
    return caught.value


@pytest.mark.parametrize(
    "name, arguments, parameter",
    [
        ("db_query", {"database": "--", "sql": "select 1"}, "argument \"database\""),
        ("incident_open", {"title": "--", "severity": "sev1"}, "argument \"title\""),
        ("service_restart", {"service": "--"}, "argument \"service\""),
        ("incident_note", {"id": 7, "text": ["first", "--", "third"]}, "argument \"text\""),
        ("incident_open", {"title": "t", "severity": "sev2", "service": "web", "responders": ["a", "--"]},
         "argument \"responders\""),
    ],
)
def test_a_positional_that_is_exactly_double_dash_is_refused(name: str, arguments: dict[str, Any],
                                                              parameter: str) -> None:
    error = refusal(name, arguments)
    assert error.kind == "double_dash_positional"
    assert parameter in error.message and "fisk drops" in error.message and "Send a different value" in error.message
    assert error.message.startswith(f"{name}: ")


def test_a_double_dash_inside_a_cumulative_list_names_the_item() -> None:
    error = refusal("incident_note", {"id": 7, "text": ["first", "--", "third"]})
    assert "item 2 of the list" in error.message


def test_double_dash_inside_a_value_or_as_a_flag_value_is_fine() -> None:
    """Only an argv item exactly equal to ``--`` is dropped by fisk; ``--x`` or ``--grep=--`` reach it intact."""
    argv = tool("service_logs").render_argv({"service": "--x", "grep": ["--"], "level": "--"})
    assert argv[-2:] == ["--", "--x"] and "--grep=--" in argv and "--level=--" in argv
    assert tool("incident_note").render_argv({"id": 1, "text": ["a --", "-- b"]})[-3:] == ["1", "a --", "-- b"]


@pytest.mark.parametrize("key, head, value", [("a:b", "a", "b=c"), ("a=b", "a", "b=c"), ("x=y:z", "x", "y:z=c")])
def test_a_map_key_holding_colon_or_equals_is_refused(key: str, head: str, value: str) -> None:
    error = refusal("deploy_rollout", {"service": "api", "version": "v2", "set": {"ok": "1", key: "c"}})
    assert error.kind == "map_key_separator"
    assert 'flag "set"' in error.message and json.dumps(key) in error.message
    assert f"key {json.dumps(head)} with value {json.dumps(value)}" in error.message
    assert "Use keys without" in error.message


def test_map_values_may_hold_separators() -> None:
    argv = tool("incident_open").render_argv({"title": "x", "label": {"url": "http://h:1/a=b"}})
    assert "--label=url=http://h:1/a=b" in argv


@pytest.mark.parametrize(
    "name, arguments, parameter",
    [
        ("service_logs", {"service": []}, "argument \"service\""),
        ("incident_note", {"id": 1, "text": []}, "argument \"text\""),
        ("auth_user_add", {"username": "alice", "email": []}, "flag \"email\""),
        ("deploy_rollback", {"service": "web", "reason": []}, "flag \"reason\""),
        ("deploy_rollback", {"service": "web", "reason": {}}, "flag \"reason\""),
    ],
)
def test_a_required_parameter_given_zero_values_is_refused(name: str, arguments: dict[str, Any],
                                                           parameter: str) -> None:
    error = refusal(name, arguments)
    assert error.kind == "required_without_value"
    assert parameter in error.message and "is required" in error.message and "send at least one value" in error.message


def test_a_required_boolean_set_false_gives_no_value_and_is_refused() -> None:
    """``db drop --yes-i-mean-it`` is required and un-negatable: false would emit nothing (the tool is denied
    anyway; the conversion refuses it on its own)."""
    from bot.fisk.arguments import args_from_json

    command = APP.find_command(["db", "drop"])
    assert command is not None
    with pytest.raises(ArgumentsError) as caught:
        args_from_json(command, {"database": "x", "yes-i-mean-it": False})
    assert caught.value.kind == "required_without_value"


@pytest.mark.parametrize(
    "arguments",
    [
        {"database": ["main", "select 1"]},  # would run as database=main, sql="select 1"
        {"database": [], "sql": "select 1"},  # would run as database="select 1"
        {"database": []},
    ],
)
def test_a_non_cumulative_positional_takes_exactly_one_value(arguments: dict[str, Any]) -> None:
    error = refusal("db_query", arguments)
    assert error.kind == "positional_not_single"
    assert 'argument "database"' in error.message and "Send a single value" in error.message


def test_a_one_item_list_for_a_single_positional_is_the_value() -> None:
    assert tool("db_query").render_argv({"database": ["main"], "sql": "select 1"})[-3:] == ["--", "main", "select 1"]


def test_the_optional_cumulative_positional_may_be_empty() -> None:
    argv = tool("incident_open").render_argv({"title": "x", "severity": "sev1", "service": "web", "responders": []})
    assert argv[-4:] == ["--", "x", "sev1", "web"]


@pytest.mark.parametrize(
    "name, arguments, parameter",
    [
        ("auth_user_add", {"username": "alice", "email": ["a@example.net", "b@example.net"]}, "flag \"email\""),
        ("deploy_rollback", {"service": "web", "reason": {"a": "1", "b": "2"}}, "flag \"reason\""),
        ("service_restart", {"service": "web", "region": ["eu-1", "us-1"]}, "flag \"region\""),
    ],
)
def test_a_single_value_flag_given_several_values_is_refused(name: str, arguments: dict[str, Any],
                                                             parameter: str) -> None:
    """fisk refuses a non-cumulative flag given twice ("cannot be repeated") only when it runs, after approval."""
    error = refusal(name, arguments)
    assert error.kind == "flag_not_repeatable"
    assert parameter in error.message and "Send a single value" in error.message


def test_every_single_value_flag_of_every_tool_refuses_two_values_and_takes_one() -> None:
    checked = 0
    for candidate in CATALOG:
        for flag in candidate.command.flags:
            if flag.cumulative or flag.boolean or flag.hidden or flag.name not in candidate.input_schema["properties"]:
                continue
            values: dict[str, Any] = {n: True if candidate.input_schema["properties"][n]["type"] == "boolean"
                                      else "v" for n in candidate.input_schema.get("required", [])}  # fmt: skip
            with pytest.raises(ArgumentsError) as caught:
                candidate.render_argv({**values, flag.name: ["one", "two"]})
            assert caught.value.kind == "flag_not_repeatable", (candidate.name, flag.name)
            assert f"--{flag.name}=one" in candidate.render_argv({**values, flag.name: ["one"]})
            checked += 1
    assert checked >= 15


@pytest.mark.parametrize(
    "name, arguments",
    [
        ("service_restart", {"service": "\udcff"}),  # would reach fisk as the raw byte 0xff
        ("service_restart", {"service": "web", "grace": "\ud800"}),  # would fail to start after approval
        ("incident_note", {"id": 1, "text": ["ok", "x\udfffy"]}),
        ("deploy_rollout", {"service": "api", "version": "v2", "set": {"\ud83d": "v"}}),
    ],
)
def test_an_unpaired_surrogate_is_refused(name: str, arguments: dict[str, Any]) -> None:
    """JSON may escape half a surrogate pair; it is no character, so no argv item can carry what the card shows."""
    error = refusal(name, arguments)
    assert error.kind == "lone_surrogate" and "unpaired" in error.message


def test_a_complete_surrogate_pair_is_the_character() -> None:
    assert tool("service_restart").render_argv('{"service":"\\ud83d\\ude00"}')[-1] == "\U0001f600"


SHAPES = st.sampled_from(["double_dash", "map_key", "empty_required"])
PLAIN = st.text(alphabet="abcxyz019", min_size=1, max_size=5)


@st.composite
def shaped_case(draw: st.DrawFn) -> tuple[Tool, dict[str, Any], str]:
    """A valid call of a random tool with one misread shape planted in it."""
    shape = draw(SHAPES)
    candidates = []
    for candidate in CATALOG:
        command = candidate.command
        if shape == "double_dash" and any(not a.hidden for a in command.args):
            candidates.append(candidate)
        if shape == "map_key" and any(f.cumulative and not f.boolean for f in command.flags):
            candidates.append(candidate)
        if shape == "empty_required" and candidate.input_schema.get("required"):
            candidates.append(candidate)
    chosen = draw(st.sampled_from(candidates))
    values: dict[str, Any] = {}
    for name in chosen.input_schema.get("required", []):
        kind = chosen.input_schema["properties"][name]["type"]
        values[name] = True if kind == "boolean" else [draw(PLAIN)] if kind == "array" else draw(PLAIN)
    if shape == "double_dash":
        args = [a for a in chosen.command.args if not a.hidden]
        for arg in args:  # fill every positional so the planted one is never a gap
            values.setdefault(arg.name, [draw(PLAIN)] if arg.cumulative else draw(PLAIN))
        target = draw(st.sampled_from(args))
        values[target.name] = ["x", "--"] if target.cumulative else "--"
        return chosen, values, "double_dash_positional"
    if shape == "map_key":
        flag = draw(st.sampled_from([f for f in chosen.command.flags if f.cumulative and not f.boolean]))
        key = draw(PLAIN) + draw(st.sampled_from([":", "="])) + draw(PLAIN)
        values[flag.name] = {draw(PLAIN): "v", key: draw(PLAIN)}
        return chosen, values, "map_key_separator"
    target_name = draw(st.sampled_from(chosen.input_schema["required"]))
    is_bool = chosen.input_schema["properties"][target_name]["type"] == "boolean"
    is_flag = any(f.name == target_name for f in chosen.command.flags)
    empty = draw(st.sampled_from([[], {}])) if is_flag else []  # an object is no positional value at all
    values[target_name] = False if is_bool else empty
    return chosen, values, "required_without_value"


@settings(max_examples=200, deadline=None)
@given(shaped_case())
def test_every_planted_shape_is_refused_by_kind(case: tuple[Tool, dict[str, Any], str]) -> None:
    chosen, values, kind = case
    with pytest.raises(ArgumentsError) as caught:
        chosen.render_argv(json.dumps(values))
    assert caught.value.kind == kind, (chosen.name, values, caught.value.message)


# --- through `fisk-chatops exec`, a real subprocess: refused, and nothing executed ---------------------------

RECORDER = """import os, sys
if sys.argv[1:] == ['--fisk-introspect']:
    sys.stdout.write(open({fixture!r}).read())
    sys.exit(0)
with open({log!r}, 'a') as log:
    log.write(repr(sys.argv[1:]) + '\\n')
print('ran')
"""


def run_exec(binary: Path, tool_name: str, arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", "exec", "--app", str(binary), tool_name, arguments],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ), cwd=ROOT)


def recorder(directory: Path, log: Path) -> Path:
    return make_script(directory, "opsctl", RECORDER.format(fixture=str(FIXTURES / "opsctl.introspect.json"),
                                                            log=str(log)))


@pytest.fixture(scope="module")
def recorder_records(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The recorder does log a real run through ``exec``, so a refusal test's log staying absent means nothing ran.
    Once for the module (a CLI process costs ~1 s): every refusal test below makes the same recorder."""
    directory = tmp_path_factory.mktemp("recorder")
    log = directory / "runs.log"
    control = run_exec(recorder(directory, log), "service_status", '{"service":"web"}')
    assert control.returncode == 0 and log.read_text() == "['service', 'status', '--', 'web']\n", control.stderr


@pytest.mark.parametrize(
    "tool_name, arguments, kind_words",
    [
        ("db_query", {"database": "--", "sql": "select 1"}, "fisk drops"),
        ("incident_open", {"title": "--", "severity": "sev1"}, "fisk drops"),
        ("incident_note", {"id": 3, "text": ["a", "--", "b"]}, "fisk drops"),
        ("deploy_rollout", {"service": "api", "version": "v2", "set": {"a:b": "c"}}, "Use keys without"),
        ("incident_open", {"title": "x", "label": {"a=b": "c"}}, "Use keys without"),
        ("service_logs", {"service": []}, "send at least one value"),
        ("incident_note", {"id": 3, "text": []}, "send at least one value"),
        ("auth_user_add", {"username": "alice", "email": []}, "send at least one value"),
        ("auth_user_add", {"username": "alice", "email": ["a@x", "b@x"]}, "Send a single value"),
        ("service_status", {"service": "\udcff"}, "unpaired"),
        ("service_status", {"service": "\ud800"}, "unpaired"),
    ],
)
def test_exec_refuses_the_shape_and_runs_nothing(tmp_path: Path, tool_name: str, arguments: dict[str, Any],
                                                 kind_words: str, recorder_records: None) -> None:
    log = tmp_path / "runs.log"
    result = run_exec(recorder(tmp_path, log), tool_name, json.dumps(arguments))
    assert result.returncode == 2 and result.stdout == ""
    assert "error:" in result.stderr and kind_words in result.stderr and tool_name in result.stderr
    assert not log.exists(), "a refused call must execute nothing"
