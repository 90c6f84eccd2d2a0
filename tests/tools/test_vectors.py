"""fisk's golden ArgsFromJSON vectors: every one must pass, and the bot refuses those marked bot_expect."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.fisk.arguments import ArgumentsError, args_from_json
from bot.fisk.model import ApplicationModel
from bot.tools.catalog import AppSpec, Catalog, build_catalog
from bot.tools.tool import AppSettings
from tests.conftest import FIXTURES

VECTORS: list[dict[str, Any]] = json.loads((FIXTURES / "argsfromjson.vectors.json").read_text())
APP = ApplicationModel.from_data(json.loads((FIXTURES / "opsctl.introspect.json").read_bytes()))


def _id(v: dict[str, Any]) -> str:
    return f"{v['command']}: {v['description']}"


def _catalog() -> Catalog:
    return build_catalog([AppSpec(AppSettings(binary="/opt/opsctl"))], lambda _s: APP)


def test_fixture_has_all_65_vectors() -> None:
    assert len(VECTORS) == 65


@pytest.mark.parametrize("vector", VECTORS, ids=_id)
def test_vector_matches_fisk(vector: dict[str, Any]) -> None:
    """With hidden parameters allowed (fisk's own behaviour) the conversion reproduces Go exactly."""
    command = APP.find_command(vector["command"])
    assert command is not None
    if "error_kind" in vector:
        with pytest.raises(ArgumentsError) as info:
            args_from_json(command, vector["input_raw"], fisk_exact=True)
        assert info.value.kind == vector["error_kind"]
    else:
        assert args_from_json(command, vector["input_raw"], fisk_exact=True) == vector["argv"]


@pytest.mark.parametrize("vector", VECTORS, ids=_id)
def test_vector_through_the_bot(vector: dict[str, Any]) -> None:
    """The bot's path: the tool looked up by name, then render_argv; stricter where bot_expect says so."""
    catalog = _catalog()
    path = vector["command"].split()
    tool = catalog.get("_".join(path))
    command = APP.find_command(path)
    assert command is not None
    if command.commands or command.hidden or "ai:deny" in command.tags:
        assert tool is None, "groups, hidden and denied commands are never tools"
        return
    assert tool is not None
    if "bot_expect" in vector or "error_kind" in vector:
        with pytest.raises(ArgumentsError) as info:
            tool.render_argv(vector["input_raw"])
        if "error_kind" in vector:
            assert info.value.kind == vector["error_kind"]
        elif "bot_error_kind" in vector:
            assert info.value.kind == vector["bot_error_kind"]
        elif "hidden" in vector["bot_expect"]:
            assert info.value.kind == "unknown_property"
        else:
            assert info.value.kind == "missing_required"
            assert "required:" in str(info.value) and "optional:" in str(info.value)
    else:
        assert tool.render_argv(vector["input_raw"]) == ["/opt/opsctl", *path, *vector["argv"]]


def test_numbers_keep_their_literal_text() -> None:
    tool = _catalog().get("service_logs")
    assert tool is not None
    argv = tool.render_argv('{"service":"web","lines":12345678901234567890}')
    assert argv[-3:] == ["--lines=12345678901234567890", "--", "web"]


@pytest.mark.parametrize(
    "raw, kind",
    [
        ('{"service":"web"} {"force":true}', "invalid_json"),
        ('{"service":"web","lines":NaN}', "invalid_json"),
        ('{"service":"web","lines":Infinity}', "invalid_json"),
        ("[1]", "invalid_json"),
        ('{"service":"web","grep":[{"a":1}]}', "unsupported_value_type"),
        ('{"service":"web","colour":"x"}', "unknown_property"),
        ('{"service":"web","context":"dev"}', "unknown_property"),
    ],
)
def test_the_bot_refuses(raw: str, kind: str) -> None:
    tool = _catalog().get("service_logs")
    assert tool is not None
    with pytest.raises(ArgumentsError) as info:
        tool.render_argv(raw)
    assert info.value.kind == kind


def test_values_starting_with_dashes_never_become_flags() -> None:
    tool = _catalog().get("service_logs")
    assert tool is not None
    argv = tool.render_argv({"service": "--help", "grep": ["--follow", "-rf"], "level": "--x"})
    assert argv[argv.index("--") + 1 :] == ["--help"]
    assert "--grep=--follow" in argv and "--grep=-rf" in argv and "--level=--x" in argv
    assert "--follow" not in argv
