"""Properties of the JSON-to-argv conversion over every tool of the opsctl fixture (global flags included).

For random JSON arguments (strings that look like flags, numbers, booleans, nulls, nested lists and objects,
NUL characters, unknown and hidden keys), ``Tool.render_argv`` either refuses with an ``ArgumentsError`` of a
known kind, or produces an argv where:

* the binary and command path come first, unchanged;
* before the ``--`` separator, every token is ``--<declared flag>=<value>``, ``--<declared boolean flag>`` or
  ``--no-<declared negatable flag>``: no token can become a flag the command does not declare;
* every value traces back to the input (or, for a positional gap, to a declared default);
* after ``--``, the tokens are exactly the positional values, in declared order;
* real fisk reads that argv as the card shows it (issue 20): no positional item is exactly ``--`` (fisk's lexer
  drops every such item), no map key holds ``:`` or ``=`` (fisk splits ``KEY=VALUE`` at the first of either),
  a non-cumulative positional has exactly one item, and every required parameter receives at least one value.

The approval lifecycle's own property (never run twice, never run unapproved) lives in
tests/approvals/test_property.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.fisk.arguments import ArgumentsError, visible_args, visible_flags
from bot.fisk.introspect import parse_application
from bot.fisk.model import FlagModel
from bot.tools.catalog import AppSpec, application_tools
from bot.tools.tool import AppSettings, Tool

KINDS = {"unknown_property", "expected_boolean", "unsupported_value_type", "missing_required", "nul_byte",
         "argument_too_long", "positional_gap_without_default", "unnegatable_false_with_true_default",
         "cumulative_not_last", "invalid_json", "double_dash_positional", "map_key_separator",
         "positional_not_single", "required_without_value", "flag_not_repeatable", "lone_surrogate"}


def all_tools() -> list[Tool]:
    from tests.conftest import FIXTURES

    app = parse_application((FIXTURES / "opsctl.introspect.json").read_bytes())
    spec = AppSpec(AppSettings(binary="/opt/bin/opsctl"), global_flags=("context", "timeout", "verbose"))
    return application_tools(app, spec)  # every runnable command, the denied one included


TOOLS = all_tools()

FLAGLIKE = st.one_of(
    st.text(max_size=12).map(lambda s: "-" + s),
    st.text(max_size=12).map(lambda s: "--" + s),
    st.sampled_from(["--", "-", "--help", "--no-wait", "--yes-i-mean-it", "--exit-code=1", "-h", "--fisk-introspect",
                     "--context=prod", "a=b", "--force=false", "x\ny", "\x00", "--\x00"]),
)
SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=16), FLAGLIKE,
)
JSON = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                    st.dictionaries(st.text(max_size=6) | FLAGLIKE, inner, max_size=3)),
                    max_leaves=8)


def rendered(value: Any) -> str:
    """A scalar as the command line must carry it: JSON number text verbatim, true/false, null as ""."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, int | float):
        return json.dumps(value)
    assert isinstance(value, str)
    return value


def allowed_flag_values(value: Any) -> set[str]:
    if isinstance(value, list):
        return {rendered(v) for v in value}
    if isinstance(value, dict):
        return {f"{k}={rendered(v)}" for k, v in value.items()}
    return {rendered(value)}


def flags_of(tool: Tool) -> dict[str, FlagModel]:
    return {f.name: f for f in [*visible_flags(tool.command), *tool.global_flags]}


def typed(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Mostly what the schema asks for (so most cases convert and the argv is checked), sometimes anything."""
    text = FLAGLIKE | st.text(max_size=12) | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False,
                                                                                     allow_infinity=False)
    if prop.get("type") == "boolean":
        return st.booleans() | st.booleans() | st.booleans() | JSON
    if prop.get("type") == "array":
        return st.lists(text, max_size=4) | st.lists(text, max_size=4) | JSON
    return text | text | JSON


@st.composite
def tool_arguments(draw: st.DrawFn) -> tuple[Tool, dict[str, Any]]:
    tool = draw(st.sampled_from(TOOLS))
    properties = tool.input_schema["properties"]
    names = draw(st.lists(st.sampled_from(sorted(properties)), unique=True, max_size=len(properties)))
    if draw(st.booleans()):  # usually complete: required parameters present
        names = [*tool.input_schema.get("required", []), *names]
    return tool, {name: draw(typed(properties[name])) for name in names}


ODD_KEYS = st.sampled_from(["help", "help-long", "fisk-introspect", "exit-code", "skip-health-checks",
                            "debug-token", "--force", "no-wait", "", "service ", "Service"]) | st.text(max_size=8)


def check_argv(tool: Tool, values: dict[str, Any], argv: list[str]) -> None:
    prefix = [tool.settings.binary, *tool.command_path]
    assert argv[: len(prefix)] == prefix
    rest = argv[len(prefix) :]
    split = rest.index("--") if "--" in rest else len(rest)
    flag_part, positional = rest[:split], rest[split + 1 :]
    flags = flags_of(tool)
    for token in flag_part:
        assert token.startswith("--"), token
        name, eq, value = token[2:].partition("=")
        if not eq:
            if name in flags and flags[name].boolean:
                assert values[name] is True, token
            else:
                assert name.startswith("no-") and name[3:] in flags, token
                flag = flags[name[3:]]
                assert flag.boolean and flag.negatable and values[flag.name] is False, token
            continue
        assert name in flags and not flags[name].boolean, token  # only declared flags, exactly
        assert name in values and value in allowed_flag_values(values[name]), token
    expected: list[str] = []
    args = visible_args(tool.command)
    supplied = [i for i, a in enumerate(args) if a.name in values]
    for arg in args[: supplied[-1] + 1] if supplied else []:
        if arg.name in values:
            value = values[arg.name]
            expected += [rendered(v) for v in (value if isinstance(value, list) else [value])]
        else:
            expected += arg.default
    assert positional == expected
    assert ("--" in rest) == bool(expected)
    for token in argv:
        assert "\x00" not in token
    check_fisk_reads_it_as_shown(tool, values, flag_part, positional)


def check_fisk_reads_it_as_shown(tool: Tool, values: dict[str, Any], flag_part: list[str],
                                 positional: list[str]) -> None:
    """The three shapes of issue 20 never reach an argv, whatever the input."""
    assert "--" not in positional
    for name, value in values.items():
        if isinstance(value, dict) and name in flags_of(tool):
            assert not any(":" in key or "=" in key for key in value), (name, value)
    for flag in flags_of(tool).values():
        if flag.required:
            assert any(t == f"--{flag.name}" or t.startswith(f"--{flag.name}=") for t in flag_part), flag.name
    for arg in visible_args(tool.command):
        if arg.name in values and not arg.cumulative:
            value = values[arg.name]
            assert not isinstance(value, list) or len(value) == 1, (arg.name, value)
        if arg.required:
            assert not isinstance(values[arg.name], list) or values[arg.name], arg.name


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool_arguments())
def test_every_argv_token_is_declared_or_traces_to_the_input(case: tuple[Tool, dict[str, Any]]) -> None:
    tool, values = case
    try:
        argv = tool.render_argv(json.dumps(values))
    except ArgumentsError as exc:
        assert exc.kind in KINDS, exc.kind
        return
    check_argv(tool, values, argv)


@settings(max_examples=150, deadline=None)
@given(tool_arguments(), ODD_KEYS, JSON)
def test_a_key_that_is_not_a_parameter_is_refused(case: tuple[Tool, dict[str, Any]], key: str, value: Any) -> None:
    tool, values = case
    if key in tool.input_schema["properties"]:
        return
    values[key] = value
    with pytest.raises(ArgumentsError) as caught:
        tool.render_argv(json.dumps(values))
    assert caught.value.kind == "unknown_property"


@settings(max_examples=150, deadline=None)
@given(tool_arguments(), st.text(max_size=6), st.text(max_size=6))
def test_a_nul_anywhere_in_a_used_value_is_refused(case: tuple[Tool, dict[str, Any]], left: str, right: str) -> None:
    tool, values = case
    targets = [k for k, v in values.items() if isinstance(v, str)]
    if not targets:
        return
    values[targets[0]] = f"{left}\x00{right}"
    with pytest.raises(ArgumentsError) as caught:
        tool.render_argv(json.dumps(values))
    assert caught.value.kind in KINDS  # nul_byte, or an earlier refusal of another property

