"""Introspection runs the real binary: every failure has its own clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.fisk.introspect import (
    BinaryNotExecutable,
    BinaryNotFound,
    IntrospectionExitError,
    IntrospectionNotJSON,
    IntrospectionTimeout,
    IntrospectionTooLarge,
    NotAFiskModel,
    introspect,
    parse_application,
    run_introspection,
)
from tests.support.fisk_app import make_script


def test_real_fixture_round_trips(opsctl: Path, fixtures_dir: Path) -> None:
    assert run_introspection(str(opsctl)) == (fixtures_dir / "opsctl.introspect.json").read_bytes()
    app = introspect(str(opsctl))
    assert app.name == "opsctl" and app.version == "1.4.2"
    restart = app.find_command("service restart")
    assert restart is not None and restart.tags == ["ai:confirm", "impact:rw"]
    assert [f.name for f in app.flags] == ["context", "timeout", "verbose", "exit-code"]


def test_missing_binary(tmp_path: Path) -> None:
    with pytest.raises(BinaryNotFound, match="no such file"):
        introspect(str(tmp_path / "nope"))


def test_not_executable(tmp_path: Path) -> None:
    path = tmp_path / "plain"
    path.write_text("{}")
    with pytest.raises(BinaryNotExecutable, match="not an executable"):
        introspect(str(path))
    with pytest.raises(BinaryNotExecutable):
        introspect(str(tmp_path))


def test_non_zero_exit_names_code_and_stderr(tmp_path: Path) -> None:
    script = make_script(tmp_path, "bad", "import sys\nprint('boom: no config', file=sys.stderr)\nsys.exit(4)\n")
    with pytest.raises(IntrospectionExitError, match="exited with code 4: boom: no config"):
        introspect(str(script))


def test_timeout(tmp_path: Path) -> None:
    script = make_script(tmp_path, "slow", "import time\ntime.sleep(30)\n")
    with pytest.raises(IntrospectionTimeout, match="did not finish within 0.5s"):
        introspect(str(script), timeout=0.5)


def test_output_too_large(tmp_path: Path) -> None:
    script = make_script(tmp_path, "big", "import sys\nsys.stdout.write('x' * 5000)\n")
    with pytest.raises(IntrospectionTooLarge, match="more than 1000 bytes"):
        run_introspection(str(script), max_bytes=1000)


def test_not_json(tmp_path: Path) -> None:
    script = make_script(tmp_path, "text", "print('usage: text [flags]')\n")
    with pytest.raises(IntrospectionNotJSON, match="not JSON .*: is it a fisk application with --fisk-introspect"):
        introspect(str(script))


def test_no_output_says_so_and_asks_whether_it_is_a_fisk_program(tmp_path: Path) -> None:
    """`--app /bin/true` printed nothing; "Expecting value: line 1 column 1" did not tell a newcomer why."""
    script = make_script(tmp_path, "quiet", "pass\n")
    with pytest.raises(IntrospectionNotJSON) as caught:
        introspect(str(script))
    assert str(caught.value).endswith("--fisk-introspect: printed nothing, not JSON: is it a fisk application with "
                                      "--fisk-introspect?")


@pytest.mark.parametrize("body", ['[1, 2]', '{"version": "1"}', '{"name": "x", "commands": [{"help": "no name"}]}'])
def test_json_that_is_not_a_fisk_model(tmp_path: Path, body: str) -> None:
    script = make_script(tmp_path, "odd", f"print({body!r})\n")
    with pytest.raises(NotAFiskModel, match="not a fisk application model"):
        introspect(str(script))


@pytest.mark.parametrize(("model", "problem"), [
    ({"name": 7}, "name: expected a string, got int"),
    ({"name": "x", "commands": [{"help": "no name"}]}, "commands.0.name: field required"),
    ({"name": "x", "commands": [{"name": "c", "flags": [{"name": "f", "boolean": "yes"}]}]},
     "commands.0.flags.0.boolean: expected a boolean, got str"),
    ({"name": "x", "flags": [{"name": "f", "short": True}]}, "flags.0.short: expected an integer, got bool"),
    ({"name": "x", "commands": [{"name": "c", "tags": "ai:deny"}]}, "commands.0.tags: expected a list, got str"),
    ({"name": "x", "commands": [{"name": "c", "args": [{"name": "a", "default": [1]}]}]},
     "commands.0.args.0.default.0: expected a string, got int"),
    ({"name": "x", "cheats": {"c": None}}, "cheats.c: expected a string, got NoneType"),
    ({"name": "x", "commands": [None]}, "commands.0: expected an object, got NoneType"),
])
def test_a_known_field_of_the_wrong_type_is_named(model: dict[str, object], problem: str) -> None:
    """The model's readers check each known field's JSON type (as the pydantic models did) and say where."""
    with pytest.raises(NotAFiskModel, match=f"not a fisk application model: {problem}"):
        parse_application(json.dumps(model), "odd")


def test_null_is_read_where_go_leaves_a_value_out() -> None:
    app = parse_application(json.dumps({"name": "x", "flags": [{"name": "f", "short": None, "envar": None}]}))
    assert app.flags[0].short is None and app.flags[0].envar is None


def test_unknown_fields_are_tolerated(tmp_path: Path, fixtures_dir: Path) -> None:
    data = json.loads((fixtures_dir / "opsctl.introspect.json").read_text())
    data["future_field"] = {"x": 1}
    data["commands"][0]["commands"][0]["json_schema"] = {"type": "object", "properties": {}}
    path = tmp_path / "future.json"
    path.write_text(json.dumps(data))
    script = make_script(tmp_path, "future", f"print(open({str(path)!r}).read())\n")
    app = introspect(str(script))
    restart = app.find_command("service restart")
    assert restart is not None and restart.precomputed_schema() == {"type": "object", "properties": {}}


def test_introspection_environment_is_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-secret-value")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("REDIS_URL", "redis://:pw@host/0")
    monkeypatch.setenv("MY_DB_PASSWORD", "hunter2")
    body = "import json, os\nprint(json.dumps({'name': 'envapp', 'help': json.dumps(dict(os.environ))}))\n"
    script = make_script(tmp_path, "envapp", body)
    env = json.loads(introspect(str(script), sensitive_env_vars=["MY_DB_PASSWORD"]).help)
    for name in ("SLACK_BOT_TOKEN", "ANTHROPIC_API_KEY", "REDIS_URL", "MY_DB_PASSWORD"):
        assert name not in env
    assert env["LLMFORMAT"] == "1"
    assert "PATH" in env
