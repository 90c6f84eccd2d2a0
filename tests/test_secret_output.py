"""A call whose argv asks for a secret's value has its output redacted whole (issue #11: bare values with no
name beside them), through real subprocesses: ``run_argv`` and ``fisk-chatops exec``. The same application asked
for an ordinary field prints it untouched. The argv that runs is not changed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import ConfigError, parse_config
from bot.fisk.environment import scrub_environment
from bot.runner import CallResult, run_argv
from bot.sanitize import Captured, build_redactor, sanitize_captured
from bot.sanitize.secret_argv import SecretArgvShapes, judge_argv
from bot.sanitize.withheld import WithheldOutput
from bot.wiring import execution_limits
from tests.support.fisk_app import make_fisk_app_doing

ROOT = Path(__file__).resolve().parents[1]
SECRET = "Sup3r;S3cret"
MARKER = re.compile(r"\[REDACTED:(secret_[a-z]+)#[0-9a-f]{6}\]")

# A secret store's CLI as a fisk application: ``--field=F`` and ``--format={{.F}}`` print field F's value bare,
# as `vault kv get -field=` and a go-template do; ``STORE_LINES=n`` prints the password n times (a large output;
# not ``LINES``, which terminals and pytest-xdist workers set);
# anything else prints the whole record, one bare value per line (as `pass show` does).
STORE = f"""
record = {{"password": {SECRET!r}, "name": "db-primary", "api_token": "tok_8d7c6b5a4f3e2d1c"}}
args = sys.argv[1:]
lines = int(os.environ.get("STORE_LINES", "0") or 0)
fields = [a.split("=", 1)[1] for a in args if a.startswith(("--field=", "-field="))]
fields += [a[len("--format={{{{."):-2] for a in args if a.startswith("--format={{{{.")]
if lines:
    sys.stdout.write((record["password"] + "\\n") * lines)
elif fields:
    print(record[fields[0]])
else:
    print("\\n".join(record.values()))
"""


@pytest.fixture
def store_app(tmp_path: Path, fixtures_dir: Path) -> Path:
    """The secret store CLI above, answering ``--fisk-introspect`` with the real opsctl fixture."""
    return make_fisk_app_doing(tmp_path / "bin", fixtures_dir / "opsctl.introspect.json", "storectl", STORE)


async def _run(argv: list[str], env: dict[str, str] | None = None, **kwargs: object) -> CallResult:
    return await run_argv(argv, env={**scrub_environment().env, **(env or {})}, cwd=None, timeout=20.0,
                          **kwargs)  # type: ignore[arg-type]


async def test_a_secret_field_is_redacted_whole_and_the_result_says_why(store_app: Path) -> None:
    argv = [str(store_app), "secret", "describe", "db", "--field=password"]
    result = await _run(argv)
    assert result.status == "finished" and result.exit_code == 0
    assert SECRET not in result.output and "S3cret" not in result.output
    assert MARKER.fullmatch(result.output.rstrip("\n")) and result.output.endswith("\n")
    assert MARKER.match(result.output)[1] == "secret_field"  # type: ignore[index]
    assert result.redactions == 1 and result.output_withheld is not None
    assert "--field=password" in result.output_withheld and "redacted" in result.output_withheld
    assert result.argv_display == argv  # what ran is shown as it ran: the field's name is no secret
    assert result.total_bytes == len(SECRET) + 1


async def test_the_same_application_asked_for_an_ordinary_field_prints_it(store_app: Path) -> None:
    result = await _run([str(store_app), "secret", "describe", "db", "--field=name"])
    assert (result.output, result.redactions, result.output_withheld) == ("db-primary\n", 0, None)


async def test_a_secret_command_redacts_every_line_and_keeps_the_lines(store_app: Path) -> None:
    result = await _run([str(store_app), "secret", "get", "db"])
    lines = result.output.split("\n")
    assert len(lines) == 4 and lines[3] == "" and all(MARKER.fullmatch(line) for line in lines[:3])
    assert "db-primary" not in result.output and SECRET not in result.output and result.redactions == 3
    assert result.output_withheld is not None and "secret get" in result.output_withheld


async def test_large_output_is_withheld_in_head_and_tail(store_app: Path) -> None:
    """Over the inline limit (cleaned in a thread) and over the cap (head and tail): still no secret byte."""
    result = await _run([str(store_app), "secret", "describe", "db", "--field=password"], env={"STORE_LINES": "20000"},
                        output_limit=16384)
    assert result.truncated and result.total_bytes == 20000 * (len(SECRET) + 1)
    assert "S3cret" not in result.output and "bytes omitted" in result.output
    shown = [line for line in result.output.split("\n") if line and "omitted" not in line]
    markers = {line for line in shown if MARKER.fullmatch(line)}
    assert len(markers) == 1  # one value, one fingerprint
    # the cap counts bytes of the redacted text, so it may end the head and start the tail inside a marker
    (marker,) = markers
    assert all(line in marker for line in shown) and len([line for line in shown if line != marker]) <= 2


async def test_operator_shapes_add_to_the_built_in_ones(store_app: Path) -> None:
    argv = [str(store_app), "creds", "dump"]
    assert SECRET in (await _run(argv)).output  # a bare value no rule knows: what the setting is for
    result = await _run(argv, secret_output=SecretArgvShapes.of(commands=["creds dump"]))
    assert SECRET not in result.output and result.output_withheld is not None
    assert (await _run([str(store_app), "x", "--field=password"],
                       secret_output=SecretArgvShapes.of(commands=["creds dump"]))).output_withheld is not None


def _exec(tmp_path: Path, app: Path, tool: str, arguments: dict[str, object], execution: str = "") -> dict[str, object]:
    config = tmp_path / "c.yaml"
    config.write_text(f"applications: [{{binary: {app}}}]\n{execution}")
    done = subprocess.run([sys.executable, "-m", "bot.cli", "exec", "--config", str(config), tool,
                           json.dumps(arguments)], capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    parsed: dict[str, object] = json.loads(done.stdout)
    assert parsed["status"] == "finished", parsed
    return parsed


def test_exec_of_a_template_selecting_a_password_prints_no_secret(tmp_path: Path, store_app: Path) -> None:
    """`fisk-chatops exec` of opsctl's db_query with ``--format={{.password}}``: the JSON printed has the marker."""
    query = {"database": "main", "sql": "select 1"}
    secret = _exec(tmp_path, store_app, "db_query", {**query, "format": "{{.password}}"})
    assert SECRET not in json.dumps(secret) and MARKER.fullmatch(str(secret["output"]).strip())
    assert "--format={{.password}}" in str(secret["output_withheld"]) and secret["redactions"] == 1
    assert secret["argv_display"] == [str(store_app), "db", "query", "--format={{.password}}", "--", "main",
                                      "select 1"]
    plain = _exec(tmp_path, store_app, "db_query", {**query, "format": "{{.name}}"})
    assert (plain["output"], plain["output_withheld"], plain["redactions"]) == ("db-primary\n", None, 0)


def test_exec_applies_the_operators_shapes(tmp_path: Path, store_app: Path) -> None:
    leaked = _exec(tmp_path, store_app, "service_status", {"service": "db"})
    assert SECRET in str(leaked["output"])
    added = "execution:\n  secret_output:\n    commands: ['service status']\n"
    withheld = _exec(tmp_path, store_app, "service_status", {"service": "db"}, added)
    assert SECRET not in json.dumps(withheld) and "service status" in str(withheld["output_withheld"])


def test_configuration_of_added_shapes_reaches_the_runner_and_bad_entries_are_named() -> None:
    config = parse_config({"applications": [], "execution": {"secret_output": {
        "commands": ["creds show"], "field_options": ["-f"], "query_options": ["--select"],
        "reveal_options": ["--decrypt"]}}})
    shapes = execution_limits(config).secret_output
    assert shapes == SecretArgvShapes.of(["creds show"], ["-f"], ["--select"], ["--decrypt"])
    assert judge_argv(["credctl", "get", "-f", "password"], shapes) is not None
    assert execution_limits(parse_config({"applications": []})).secret_output == SecretArgvShapes()
    for section, message in (({"commands": ["creds --all"]}, "no options"), ({"commands": [" "]}, "no options"),
                             ({"field_options": ["field"]}, "with its dashes"),
                             ({"reveal_options": ["--a b"]}, "with its dashes"),
                             ({"turn_off": True}, "turn_off")):
        with pytest.raises(ConfigError, match=message) as error:
            parse_config({"applications": [], "execution": {"secret_output": section}}, "c.yaml")
        assert "secret_output" in str(error.value)


def test_the_example_configuration_adds_no_shape() -> None:
    from bot.config import load_config

    config = load_config(ROOT / "config" / "fisk-chatops.yaml")
    assert execution_limits(config).secret_output == SecretArgvShapes()


@pytest.mark.parametrize("limit", [333, 4000, 65500, 65536])
def test_the_cap_never_shows_half_a_marker(limit: int) -> None:
    """A withheld output is markers only: the byte budget cut one at the gap (``[REDACTED:secr``, reported by
    its author); a redacted output's markers are kept whole or dropped the same way."""
    # 5,000 lines: withheld, they are 155 kB of markers, past every limit here (20,000 lines only made each of
    # the 112 sanitizing rounds four times slower); redacted, the identical marker lines shrink to 15 kB, past the
    # two small limits, as the 57 kB of 20,000 lines were past those two only.
    withheld = b"".join(b"line %d of the secret value\n" % i for i in range(5000))
    redacted = b"".join(b"db_password: Xk9#mQ2vL8pR%d\n" % i for i in range(5000))
    for data, redactor in ((withheld, WithheldOutput("secret_field")), (redacted, build_redactor())):
        for shift in range(0, 40, 3):  # the cut at every byte of a marker
            text = sanitize_captured(Captured(head=data[shift:], tail=b"", total_bytes=len(data) - shift),
                                     redactor, limit).text
            rest = re.sub(r"\[REDACTED:[a-z_]+(?:#[0-9a-f]{6})?\]|… \[\d+ bytes omitted\] …", "", text)
            assert "[RED" not in rest and "ACTED" not in rest and "]" not in rest, rest[:200]
            assert len(text.encode()) <= limit
