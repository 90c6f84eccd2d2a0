# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""What the cap's head knows and its tail lost: the tail is read after the lines that give it its meaning.

A capped output keeps a head and a tail and cleans each alone (``cap.sanitize_captured``). Where the head ends inside
something that decides what the next lines are, the tail's first lines lost it: a Kubernetes Secret's
``stringData:`` block opened under ``kind: Secret`` (plain values, no base64 to go by), an echoed command asking for a
secret whose printed value lands in the tail, a name on one line and its value on the next (``- name: DB_PASSWORD``
then ``value: ...``). ``cut_context`` carries the head's deciding lines and its last lines before the tail for the
redaction and takes them off again. Checked through ``fisk-chatops exec`` (real subprocess, default cap) and through
the runner's own bounded capture.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bot.runner.output import CAPTURE_MARGIN, OutputCapture
from bot.sanitize import build_redactor, sanitize_captured
from bot.sanitize.cap import DEFAULT_OUTPUT_LIMIT
from bot.sanitize.cut_context import tail_context
from tests.support.exec_printing import exec_printing

KEPT = DEFAULT_OUTPUT_LIMIT + CAPTURE_MARGIN  # the bytes of head and of tail the runner keeps


def _filler(size: int, seed: int = 1) -> bytes:
    """Exactly ``size`` bytes of ordinary log lines, ending with a newline."""
    rng = random.Random(seed)
    out = bytearray()
    while len(out) < size - 80:
        out += f"2026-12-02T08:{rng.randint(0, 59):02d}:00Z INFO web-{rng.randint(1, 9)} GET /healthz 200 3ms\n".encode()
    return bytes(out) + b"." * (size - len(out) - 1) + b"\n"


def _coloured(size: int) -> bytes:
    """Exactly ``size`` bytes of a CI log's coloured lines: stripped of their colour codes they shrink to a fifth, so
    the cap shows the tail from its start (only then is a tail's first line shown at all)."""
    out = bytearray()
    step = 0
    while len(out) < size - 120:
        out += b"\x1b[38;5;208m" * 6 + f"step {step} ok\x1b[0m\n".encode()
        step += 1
    return bytes(out) + b"." * (size - len(out) - 1) + b"\n"


def _layout(head_end: bytes, omitted: bytes, tail_start: bytes) -> bytes:
    """An output whose capture keeps a head ending with ``head_end`` and a tail starting with ``tail_start`` (its
    first line is the partial one the cut drops: start it with a line that may go), ``omitted`` between them. The
    tail's lines after ``tail_start`` are coloured (``_coloured``), so the cap shows ``tail_start``."""
    head = _filler(KEPT - len(head_end), 2) + head_end
    tail = tail_start + _coloured(KEPT - len(tail_start))
    assert len(head) == KEPT and len(tail) == KEPT
    return head + omitted + tail


def _capped(data: bytes) -> str:
    capture = OutputCapture.for_output_limit(DEFAULT_OUTPUT_LIMIT)
    for start in range(0, len(data), 4096):
        capture.feed(data[start : start + 4096])
    result = sanitize_captured(capture.captured(), build_redactor(), DEFAULT_OUTPUT_LIMIT)
    assert result.truncated
    return result.text


def _plain(rng: random.Random) -> str:
    return "P" + "".join(rng.choice("abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQR23456789!#%") for _ in range(17))


def _string_data(values: list[str], *, indent: str = "", kind_first: bool = True) -> str:
    entries = "".join(f"{indent}  entry-{i:05d}: {v}\n" for i, v in enumerate(values))
    kind = f"{indent}kind: Secret\n"
    return (f"{indent}apiVersion: v1\n" + (kind if kind_first else "") + f"{indent}metadata:\n{indent}  name: app\n"
            + f"{indent}type: Opaque\n{indent}stringData:\n" + entries + ("" if kind_first else kind))


def test_a_tail_inside_a_long_string_data_block_shows_none_of_its_plain_values(tmp_path: Path, fixtures_dir: Path) -> None:
    rng = random.Random(11)
    values = [_plain(rng) for _ in range(6000)]
    shown = str(exec_printing(tmp_path, fixtures_dir, _string_data(values).encode(), truncated=True)["output"])
    head, tail = shown.split("bytes omitted]")
    assert "[REDACTED:" in head and tail.count("[REDACTED:") > 500
    assert [v for v in values if v in shown] == []
    assert "entry-05999: [REDACTED:" in tail  # the keys stay, only the values go


@pytest.mark.parametrize("form", ["list item", "json", "short base64 data"])
def test_other_forms_of_an_open_secret_block_hide_the_tails_values(form: str) -> None:
    rng = random.Random(5)
    values = [_plain(rng) for _ in range(6000)]
    if form == "list item":  # a List of objects (kubectl get -o yaml of hand-written Secrets, kind first)
        text = "apiVersion: v1\nitems:\n- kind: Secret\n  apiVersion: v1\n  stringData:\n" + "".join(
            f"    entry-{i:05d}: {v}\n" for i, v in enumerate(values)) + "kind: List\n"
    elif form == "json":  # a hand-written JSON manifest, kind before stringData
        text = '{\n    "apiVersion": "v1",\n    "kind": "Secret",\n    "stringData": {\n' + "".join(
            f'        "entry-{i:05d}": "{v}",\n' for i, v in enumerate(values)) + '        "last": "x"\n    }\n}\n'
    else:  # base64 of six bytes: eight characters, no padding, nothing that tells base64 apart from a word
        values = ["".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))
                  for _ in range(9000)]
        text = "apiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n" + "".join(
            f"  k{i:05d}: {v}\n" for i, v in enumerate(values))
    shown = _capped(text.encode())
    tail = shown.split("bytes omitted]")[1]
    assert tail.count("[REDACTED:") > 500, tail[:400]
    assert [v for v in values if v in shown] == []


def test_values_whose_secret_block_closed_in_the_head_and_other_kinds_stay_whole() -> None:
    rng = random.Random(9)
    values = [_plain(rng) for _ in range(6000)]
    config_map = _string_data(values).replace("kind: Secret", "kind: ConfigMap").replace("stringData:", "data:")
    tail = _capped(config_map.encode()).split("bytes omitted]")[1]
    assert "[REDACTED" not in tail and tail.split("\n", 2)[2] in config_map
    # a Secret whose block closed before the head's end: the next object's indented lines are no values of it
    closed = _string_data(values[:3]) + "---\n" + config_map.replace("apiVersion: v1\n", "apiVersion: v1\n", 1)
    tail = _capped(closed.encode()).split("bytes omitted]")[1]
    assert "[REDACTED" not in tail


def test_the_carried_context_names_the_kind_and_the_block() -> None:
    head = _string_data([f"a{i}!x" for i in range(100)]).encode()
    assert tail_context(head).lines == b"kind: Secret\nstringData:"
    assert tail_context(head).opened
    assert not tail_context(head + b"---\nkind: ConfigMap\n").opened  # the Secret ended before the head did
    config_map = head.replace(b"kind: Secret", b"kind: ConfigMap")
    assert not tail_context(config_map).opened


RECOVERY = ["Zq9mW3xR7tY2", "Abq9mW3xR7tY", "hT5sW1eR6tY0", "Kp8vN2cX4zQ7", "Wm3nB6vC9xZ1"]


@pytest.mark.parametrize("command", [
    "$ kubectl get secret app -o jsonpath='{.data.recovery_codes}' | base64 -d",
    "$ vault kv get -field=password secret/app",
    "+ terraform output -raw admin_password",
    "\x1b[32;1m$ terraform output -raw admin_password\x1b[0;m",  # as GitLab CI colours it
])
def test_an_echoed_command_on_the_heads_last_line_withholds_what_the_tail_prints(
        tmp_path: Path, fixtures_dir: Path, command: str) -> None:
    values = "\n".join(RECOVERY) + "\n"
    data = _layout(f"{command}\n".encode(), b"Pm9zQ2", f"vL8pR4\n{values}$ date\n".encode())
    shown = str(exec_printing(tmp_path, fixtures_dir, data, truncated=True)["output"])
    tail = shown.split("bytes omitted]")[1]
    assert [v for v in RECOVERY if v in shown] == [] and "[REDACTED:echoed_" in tail
    assert "\n$ date\n" in tail  # the next echoed command ends what is withheld


def test_a_few_lines_after_the_command_in_the_head_and_an_ordinary_command_before_the_tail() -> None:
    values = "\n".join(RECOVERY) + "\n"
    data = _layout(b"$ vault kv get -field=password secret/app\nfirst\nsecond\n", b"x", f"y\n{values}".encode())
    tail = _capped(data).split("bytes omitted]")[1]
    assert [v for v in RECOVERY if v in tail] == []
    plain = _layout(b"$ kubectl get pods -o wide\n", b"x", f"y\n{values}".encode())
    assert _capped(plain).split("bytes omitted]")[1].startswith(f" …\n\n{values}")


def test_a_key_vault_id_in_the_heads_last_lines_and_its_value_a_few_lines_on_in_the_tail() -> None:
    """az keyvault secret show: the id, then kid, managed (the line the cut drops), name and tags, then the value."""
    head_end = b'{\n  "id": "https://kv-prod.vault.azure.net/secrets/app/3c1b0e9d8f7a4b2c9e1d0f6a5b4c3d2e",\n  "kid": null,\n'
    tail_start = b'll,\n  "name": "orders-db",\n  "tags": {},\n  "value": "Zq9m!W3xR7tY2"\n}\n'
    shown = _capped(_layout(head_end, b'  "managed": nu', tail_start))
    tail = shown.split("bytes omitted]")[1]
    assert "Zq9m!W3xR7tY2" not in shown and '"value": "[REDACTED:secret]"' in tail and '"name": "orders-db"' in tail


def test_the_tail_is_shown_as_before_when_the_head_gives_it_nothing() -> None:
    data = _layout(b"done\n", b"x", b"y\nvalue: 12\nsecond line\n")
    tail = _capped(data).split("bytes omitted]")[1]
    assert tail.startswith(" …\n\nvalue: 12\nsecond line\n"), tail[:80]


def test_a_tail_that_starts_by_closing_a_json_object_keeps_its_ordinary_lines() -> None:
    """The manifest walk's orphan mapping of such a tail (indentation unknown, -1) was taken for its search's "none
    chosen yet" and every later line was read one by one: 400 lines of a log ran the walk out of budget, and the
    tail's end became a ``dense_candidates`` marker, its orphans ``k8s_secret`` markers (fails closed, shows less)."""
    data = _layout(b"done\n", b'{\n  "na', b'me": "orders-db",\n  "tags": {},\n  "note": "Zq9m!W3xR7tY2"\n}\n')
    tail = _capped(data).split("bytes omitted]")[1]
    assert "[REDACTED" not in tail and '"note": "Zq9m!W3xR7tY2"\n}\nstep 0 ok\n' in tail


def test_a_staircase_of_indentations_is_read_up_to_a_bound() -> None:
    """Each line indented less than the one after it is a search of its own (and a pattern for its indentation):
    ``MAX_DEPTH`` of them are read, then the head gives nothing (the tail is read alone, as before)."""
    from bot.sanitize.cut_manifests import MAX_DEPTH, open_secret_block

    deep = "kind: Secret\nstringData:\n" + "".join(" " * (i + 1) + f"k{i}: |\n" for i in range(MAX_DEPTH + 1))
    assert open_secret_block(deep.encode()) is None
    shallow = "kind: Secret\nstringData:\n" + "".join(" " * (i + 1) + f"k{i}: |\n" for i in range(MAX_DEPTH - 2))
    assert open_secret_block(shallow.encode()) is not None
