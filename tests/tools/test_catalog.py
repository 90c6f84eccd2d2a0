"""The walk, names, selection, several applications, schemas and the Messages API tool list."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest

from bot.fisk.model import ApplicationModel
from bot.tools.catalog import AppSpec, CatalogError, build_catalog
from bot.tools.params import TOOL_SEARCH_TOOL, build_tool_params
from bot.tools.selection import Rule, SelectionError
from bot.tools.tool import AppSettings
from tests.conftest import FIXTURES

FIXTURE = FIXTURES / "opsctl.introspect.json"
RAW: dict[str, Any] = json.loads(FIXTURE.read_text())
ALL_TOOLS = [
    "service_restart", "service_status", "service_logs", "deploy_rollout", "deploy_rollback",
    "auth_user_add", "auth_user_delete", "auth_user_list", "db_backup", "db_query",
    "incident_list", "incident_open", "incident_note", "incident_resolve",
]


def catalog(include: Rule | None = None, exclude: Rule | None = None, raw: dict[str, Any] | None = None,
            alias: str | None = None, global_flags: tuple[str, ...] = ()):
    app = ApplicationModel.from_data(raw or RAW)
    spec = AppSpec(AppSettings(binary="/bin/opsctl"), alias=alias, include=include or Rule(),
                   exclude=exclude or Rule(), global_flags=global_flags)
    return build_catalog([spec], lambda _s: app)


def test_walk_keeps_runnable_leaves_only() -> None:
    cat = catalog()
    assert cat.names == ALL_TOOLS
    assert "db_drop" in cat.denied  # ai:deny: stripped even with no rules
    assert "selftest" not in cat.names  # hidden command
    assert "service" not in cat.names and "auth_user" not in cat.names  # groups


def test_hidden_group_skips_its_subtree() -> None:
    raw = copy.deepcopy(RAW)
    raw["commands"][0]["hidden"] = True  # service group
    assert not [n for n in catalog(raw=raw).names if n.startswith("service_")]


def test_invalid_tool_name_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    raw = copy.deepcopy(RAW)
    raw["commands"].append({"name": "bad name!", "help": "x"})
    raw["commands"].append({"name": "x" * 70, "help": "long"})
    with caplog.at_level(logging.WARNING):
        names = catalog(raw=raw).names
    assert "bad name!" not in names and "x" * 70 not in names
    assert "'bad name!'" in caplog.text and "x" * 70 in caplog.text


def test_deny_wins_over_include() -> None:
    cat = catalog(include=Rule.build(tools=["^db_"], tags=["ai:deny"]))
    assert cat.names == ["db_backup", "db_query"]


def test_include_regex_is_unanchored_search() -> None:
    assert catalog(include=Rule.build(tools=["user"])).names == ["auth_user_add", "auth_user_delete",
                                                                  "auth_user_list"]


def test_include_by_exact_tag_and_empty_tag_for_untagged() -> None:
    assert catalog(include=Rule.build(tags=["impact:ro"])).names == [
        "service_status", "service_logs", "auth_user_list", "db_query"]
    assert catalog(include=Rule.build(tags=[""])).names == ["incident_list"]
    assert catalog(include=Rule.build(tags=["impact"])).names == []  # exact, not prefix


def test_include_then_exclude() -> None:
    cat = catalog(include=Rule.build(tools=["^incident"]), exclude=Rule.build(tools=["resolve"], tags=[""]))
    assert cat.names == ["incident_open", "incident_note"]


def test_exclude_alone() -> None:
    assert catalog(exclude=Rule.build(tags=["impact:rw"])).names == [
        "service_status", "service_logs", "auth_user_list", "db_query", "incident_list"]


def test_invalid_regex_names_the_rule() -> None:
    with pytest.raises(SelectionError, match=r"apps\[0\]\.include: invalid tool regex '\(unclosed'"):
        Rule.build(tools=["(unclosed"], label="apps[0].include")


def test_alias_prefixes_names_and_rules_match_unprefixed() -> None:
    cat = catalog(alias="ops", include=Rule.build(tools=["^service_"]))
    assert cat.names == ["ops_service_restart", "ops_service_status", "ops_service_logs"]
    tool = cat.get("ops_service_status")
    assert tool is not None and tool.render_argv({"service": "web"})[:3] == ["/bin/opsctl", "service", "status"]


def test_duplicate_names_across_applications_are_an_error() -> None:
    app = ApplicationModel.from_data(RAW)
    specs = [AppSpec(AppSettings(binary="/a")), AppSpec(AppSettings(binary="/b"))]
    with pytest.raises(CatalogError, match="'service_restart' is also a tool"):
        build_catalog(specs, lambda _s: app)
    specs = [AppSpec(AppSettings(binary="/a")), AppSpec(AppSettings(binary="/b"), alias="b")]
    assert len(build_catalog(specs, lambda _s: app)) == 28


def test_global_flags_only_when_allowlisted() -> None:
    tool = catalog().get("service_logs")
    assert tool is not None and "context" not in tool.input_schema["properties"]
    tool = catalog(global_flags=("context", "verbose")).get("service_logs")
    assert tool is not None
    assert tool.input_schema["properties"]["context"]["type"] == "string"
    assert tool.input_schema["properties"]["verbose"]["type"] == "boolean"
    argv = tool.render_argv({"service": "web", "context": "staging", "lines": 5})
    assert argv == ["/bin/opsctl", "service", "logs", "--context=staging", "--lines=5", "--", "web"]


def test_global_flag_never_collides_with_a_command_name() -> None:
    raw = copy.deepcopy(RAW)
    raw["flags"].append({"name": "region", "help": "global region", "boolean": False, "cumulative": False})
    restart = catalog(raw=raw, global_flags=("region",)).get("service_restart")
    assert restart is not None
    assert restart.input_schema["properties"]["region"]["description"].startswith("Region to restart in")
    assert restart.render_argv({"service": "w", "region": "eu-west-1"})[3] == "--region=eu-west-1"


def test_unknown_or_hidden_global_flag_is_a_configuration_error() -> None:
    with pytest.raises(CatalogError, match="'nope' is not a global flag"):
        catalog(global_flags=("nope",))
    with pytest.raises(CatalogError, match="'exit-code' is hidden"):
        catalog(global_flags=("exit-code",))
    with pytest.raises(CatalogError, match="not a global flag"):
        catalog(global_flags=("help",))


def test_derived_schema() -> None:
    cat = catalog()
    restart = cat.get("service_restart")
    assert restart is not None
    schema = restart.input_schema
    assert schema["additionalProperties"] is False and schema["required"] == ["service"]
    assert set(schema["properties"]) == {"region", "force", "wait", "grace", "service"}  # hidden flag gone
    assert schema["properties"]["force"]["type"] == "boolean"
    assert schema["properties"]["region"]["examples"] == ["us-east-1", "eu-west-1", "ap-south-1"]
    assert "enum" not in schema["properties"]["region"]
    assert "Default: 15s." in schema["properties"]["grace"]["description"]
    rollout = cat.get("deploy_rollout")
    assert rollout is not None
    assert rollout.input_schema["properties"]["set"]["type"] == "array"
    assert rollout.input_schema["properties"]["set"]["items"] == {"type": "string"}
    note = cat.get("incident_note")
    assert note is not None
    assert note.input_schema["properties"]["text"]["type"] == "array"
    assert note.input_schema["required"] == ["id", "text"]
    backup = cat.get("db_backup")
    assert backup is not None and backup.input_schema["properties"]["compress"]["type"] == "boolean"
    rollback = cat.get("deploy_rollback")
    assert rollback is not None and rollback.input_schema["required"] == ["reason", "service"]


def test_no_framework_flags_in_any_schema() -> None:
    for tool in catalog(global_flags=("context", "timeout", "verbose")):
        flags = set(tool.input_schema["properties"]) - {a.name for a in tool.command.args}
        for name in flags:
            assert not name.startswith(("help", "completion")) and name not in ("fisk-introspect", "version")


def test_precomputed_schema_is_used_without_hidden_parameters() -> None:
    raw = copy.deepcopy(RAW)
    restart = raw["commands"][0]["commands"][0]
    restart["schema"] = {"type": "object", "properties": {"everything": {"type": "string"}}}
    restart["restricted_schema"] = {
        "type": "object",
        "properties": {"service": {"type": "string", "enum": ["web", "api"]},
                       "skip-health-checks": {"type": "boolean"}},
        "required": ["service", "skip-health-checks"],
    }
    tool = catalog(raw=raw).get("service_restart")
    assert tool is not None
    assert tool.input_schema == {"type": "object", "properties": {"service": {"type": "string",
                                 "enum": ["web", "api"]}}, "required": ["service"], "additionalProperties": False}


def test_descriptions() -> None:
    cat = catalog()
    restart = cat.get("service_restart")
    assert restart is not None
    assert restart.description == (
        "Restart a service\n\nPerforms a rolling restart of every instance of <service>.\n"
        "Instances are drained first unless --force is given.\n\nTags: ai:confirm, impact:rw")
    listing = cat.get("incident_list")
    assert listing is not None and "Tags:" not in listing.description
    raw = copy.deepcopy(RAW)
    raw["commands"][0]["commands"][1]["help_long"] = "Show service status in detail"
    status = catalog(raw=raw).get("service_status")
    assert status is not None
    assert status.description == "Show service status in detail\n\nTags: ai:no_defer, impact:ro"


def test_tool_list_defers_at_ten_or_more() -> None:
    tools = list(catalog())
    params = build_tool_params(tools)
    assert params[-1] == TOOL_SEARCH_TOOL
    by_name = {p["name"]: p for p in params}
    assert "defer_loading" not in by_name["service_status"]  # ai:no_defer
    assert all(by_name[n].get("defer_loading") is True for n in ALL_TOOLS if n != "service_status")


def test_nine_tools_are_sent_directly_and_built_ins_count() -> None:
    nine = list(catalog())[:9]
    params = build_tool_params(nine)
    assert len(params) == 9 and not any("defer_loading" in p for p in params)
    extra = [{"name": "remote_lookup", "description": "x", "input_schema": {"type": "object"}}]
    params = build_tool_params(nine, extra_tools=extra)
    assert params[-1] == TOOL_SEARCH_TOOL and len(params) == 11
    assert params[-2]["name"] == "remote_lookup" and params[-2]["defer_loading"] is True


def test_tool_search_switch_off() -> None:
    params = build_tool_params(list(catalog()), tool_search=False)
    assert len(params) == 14 and not any("defer_loading" in p for p in params)


def test_framework_flags_are_filtered_from_commands_too() -> None:
    raw = copy.deepcopy(RAW)
    raw["flags"].append({"name": "help-long", "help": "x", "boolean": True, "cumulative": False})
    status = raw["commands"][0]["commands"][1]
    status["flags"].append({"name": "help", "help": "fw", "boolean": True, "cumulative": False})
    status["flags"].append({"name": "version", "help": "the command's own", "boolean": False, "cumulative": False})
    tool = catalog(raw=raw).get("service_status")
    assert tool is not None
    assert "help" not in tool.input_schema["properties"]
    assert "version" in tool.input_schema["properties"]  # a command's own flag, not fisk's
    with pytest.raises(CatalogError):
        catalog(raw=raw, global_flags=("help-long",))
