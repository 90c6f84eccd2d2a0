"""The cap on output (issue #18): head and tail keep everything they may, and the omitted count is exact.

Output goes through the runner's own bounded capture (``OutputCapture.for_output_limit``) and then the
sanitizer, as in ``run_argv``, so the gap between the captured head and tail is exercised too.
"""

from __future__ import annotations

import base64
import json
import random
import re
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.runner import CallResult, run_argv
from bot.runner.output import OutputCapture
from bot.sanitize import Captured, SanitizedOutput, build_redactor, sanitize_captured, strip_controls

REDACTOR = build_redactor()
MARKER = re.compile(r"\n… \[(\d+) bytes omitted\] …\n")
COLOURS = ("\x1b[31m", "\x1b[1;32m", "\x1b[38;5;208m", "\x1b[38;2;10;200;30m", "\x1b[0m", "\x1b[m", "\x1b[K")
WORDS = ("INFO", "deploy", "web-1", "ready", "élan", "日本", "ok", "status=200", "latency_ms=12", "—")


def coloured(rng: random.Random, size: int, density: float) -> bytes:
    """About ``size`` bytes of log-like lines; each word is wrapped in ``density`` colour codes on average
    (``density`` 4 makes text that shrinks about tenfold when the codes are stripped)."""
    out = bytearray()
    line = 0
    while len(out) < size:
        words = []
        for _ in range(rng.randint(1, 12)):
            word = rng.choice(WORDS)
            for _ in range(int(density) + (rng.random() < density % 1)):
                word = rng.choice(COLOURS) + word + rng.choice(COLOURS)
            words.append(word)
        out += f"{line:06d} {' '.join(words)}\n".encode()
        line += 1
    return bytes(out)


def clean(raw: bytes) -> str:
    """The whole output as it would be shown without a cap."""
    return REDACTOR.redact(strip_controls(raw.decode("utf-8", "replace")))[0]


def capture_of(raw: bytes, output_limit: int, chunk: int = 4096) -> OutputCapture:
    """What the runner's bounded capture keeps of ``raw`` read in pipe-sized chunks."""
    capture = OutputCapture.for_output_limit(output_limit)
    for start in range(0, len(raw), chunk):
        capture.feed(raw[start : start + chunk])
    return capture


def run_through_cap(raw: bytes, output_limit: int, chunk: int = 4096) -> SanitizedOutput:
    return sanitize_captured(capture_of(raw, output_limit, chunk).captured(), REDACTOR, output_limit)


def split_shown(result: SanitizedOutput) -> tuple[str, int, str]:
    """(head, omitted bytes, tail) of a truncated result."""
    (match,) = list(MARKER.finditer(result.text))
    return result.text[: match.start()], int(match.group(1)), result.text[match.end() :]


def assert_accounts_for_every_byte(raw: bytes, result: SanitizedOutput, output_limit: int) -> None:
    whole = clean(raw)
    assert len(result.text.encode()) <= output_limit
    if not result.truncated:
        assert result.text == whole
        return
    head, omitted, tail = split_shown(result)
    assert whole.startswith(head)
    assert whole.endswith(tail)
    assert len(head.encode()) + omitted + len(tail.encode()) == len(raw)
    if len(result.text.encode()) >= output_limit - 8:  # the cap is filled (up to a character at each cut)
        return
    # Not filled: then the head and tail must hold every whole line the capture kept; nothing was thrown away.
    captured = capture_of(raw, output_limit).captured()
    assert captured.omitted > 0
    assert head.startswith(clean(captured.head[: captured.head.rfind(b"\n") + 1]))
    assert tail.endswith(clean(captured.tail[captured.tail.find(b"\n") + 1 :]))


def test_a_tail_that_shrinks_below_its_budget_after_stripping_is_kept_whole() -> None:
    """Issue #18's case: the captured tail is colour-heavy, so its cleaned form is far below its half of the cap;
    all of it must be shown (today's code kept only its last few KB, starting mid-line)."""
    limit = 65536
    rng = random.Random(18)
    plain_head = coloured(rng, 200_000, 0.0)
    heavy_tail = coloured(rng, 200_000, 1.5)
    raw = plain_head + heavy_tail
    result = run_through_cap(raw, limit)
    head, omitted, tail = split_shown(result)
    capture = OutputCapture.for_output_limit(limit)
    capture.feed(raw)
    captured_tail = capture.captured().tail
    cleaned_tail = clean(captured_tail[captured_tail.index(b"\n") + 1 :])  # from the first whole line
    assert len(cleaned_tail.encode()) < limit // 2  # the situation of the issue: shrunk below its budget
    assert tail.endswith(cleaned_tail)  # every whole line of the captured tail is shown
    assert len(tail.encode()) >= len(cleaned_tail.encode())
    # the head takes what the tail could not use, so the cap is filled
    assert len(head.encode()) > limit // 2
    assert len(result.text.encode()) > limit - 200
    assert len(head.encode()) + omitted + len(tail.encode()) == len(raw)


def test_coloured_output_of_sizes_around_the_cap() -> None:
    limit = 4096
    rng = random.Random(7)
    for density in (0.0, 0.3, 1.0, 4.0):
        base = coloured(rng, 40 * limit, density)
        for size in (limit - 1, limit, limit + 1, 2 * limit, 2 * limit + 8192, 2 * (limit + 4096) + 1, 30 * limit):
            raw = base[:size]
            result = run_through_cap(raw, limit)
            assert_accounts_for_every_byte(raw, result, limit)
            if capture_of(raw, limit).captured().omitted == 0:  # all captured: cut only if it does not fit
                assert result.truncated == (len(clean(raw).encode()) > limit)


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(0, 60_000),
    density=st.floats(0.0, 5.0),
    limit=st.integers(64, 8192),
    chunk=st.integers(1, 9000),
)
def test_head_and_tail_are_a_prefix_and_a_suffix_and_account_for_every_byte(
    seed: int, size: int, density: float, limit: int, chunk: int
) -> None:
    raw = coloured(random.Random(seed), size, density)[:size]
    result = run_through_cap(raw, limit, chunk)
    assert_accounts_for_every_byte(raw, result, limit)


ANTHROPIC_KEY = "sk-" + "ant-api03-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-" * 2 + "AAAAAAAAAAAAAAAAAAAAAAAAA"


@settings(max_examples=200, deadline=None)
@given(offset=st.integers(-200, 200), glue=st.sampled_from(["", "x" * 3000, "=" * 5000, "/" * 70000]),
       lines=st.booleans())
def test_the_gap_never_shows_part_of_a_secret(offset: int, glue: str, lines: bool) -> None:
    """A secret straddling the gap between the captured head and tail, with no whitespace near it (or none at
    all for tens of KB), never survives in part: no 8 characters of it are shown. (Old code: cut at whitespace
    only within 1 KiB, so a key glued to 3 KB of text kept its first half.)"""
    limit = 8192
    capture_head = limit + 4096
    # Colour-heavy filler shrinks tenfold when cleaned, so the head and tail are shown up to the gap itself.
    colour = "\x1b[38;5;208m\x1b[1m\x1b[48;2;10;20;30m"
    filler = (f"{colour}ordinary line{colour}\n" if lines else f"{colour}word{colour} ") * 2000
    # (the reset ends any escape sequence the slice cut, so none can swallow the key's first character)
    before = filler[: capture_head + offset - len(glue) // 2 - 4] + "\x1b[0m"
    raw = (before + glue[: len(glue) // 2] + ANTHROPIC_KEY + glue[len(glue) // 2 :] + filler * 3).encode()
    result = run_through_cap(raw, limit)
    assert result.truncated
    for start in range(0, len(ANTHROPIC_KEY) - 8):
        assert ANTHROPIC_KEY[start : start + 8] not in result.text, (offset, len(glue))
    head, omitted, tail = split_shown(result)
    whole = clean(raw)
    assert whole.startswith(head) and whole.endswith(tail)
    assert len(head.encode()) + omitted + len(tail.encode()) == len(raw)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*"ab ;[]m0123\n\t\x1b\x07\x9b\x9d\u202e\x00\x7f\\P", "\x1b[31m", "\x1b]0;t\x07"]),
                max_size=200).map("".join))
def test_strip_controls_fast_path_equals_the_plain_substitution(text: str) -> None:
    """The per-sequence path (few controls) removes exactly what one ``sub`` of the alternation removes."""
    from bot.sanitize.controls import _CONTROLS

    padded = text + "x" * (64 * len(text))  # sparse enough for the per-sequence path
    assert strip_controls(padded) == _CONTROLS.sub("", padded)
    assert strip_controls(text) == _CONTROLS.sub("", text)


PRINTER = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"


async def print_through_the_runner(raw: bytes, path: Path) -> CallResult:
    """``raw`` printed by a real child process and captured by the runner with a 16 KiB cap."""
    path.write_bytes(raw)
    return await run_argv([sys.executable, "-c", PRINTER, str(path)], env={}, cwd=None, timeout=30,
                          output_limit=16384)


def _big_secret(fmt: str, keys: int) -> tuple[bytes, list[str]]:
    """``kubectl get secret -o yaml|json`` of one Secret whose data block is larger than the cap."""
    values = [base64.b64encode(f"cut-secret-value-{i:05d}".encode()).decode() for i in range(keys)]
    data = {f"key{i:05d}": v for i, v in enumerate(values)}
    manifest = {"apiVersion": "v1", "data": data, "kind": "Secret", "metadata": {"name": "bundle"}, "type": "Opaque"}
    if fmt == "json":
        return (json.dumps({"apiVersion": "v1", "items": [manifest], "kind": "List"}, indent=4) + "\n").encode(), values
    lines = "".join(f"    {k}: {v}\n" for k, v in data.items())
    text = f"apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n{lines}  kind: Secret\n  metadata:\n    name: bundle\n"
    return (text + "kind: List\n").encode(), values


async def test_a_secret_cut_from_its_kind_by_the_cap_is_still_redacted(tmp_path: Path) -> None:
    """kubectl prints data: before kind:, so a data block longer than the cap loses "kind: Secret" from the head
    and "data:" from the tail: both halves must still be recognised (issue #11, cap)."""
    for fmt in ("yaml", "json"):
        raw, values = _big_secret(fmt, 2000)
        result = await print_through_the_runner(raw, tmp_path / f"cut-secret-{fmt}.txt")
        assert result.status == "finished" and "bytes omitted" in result.output
        assert not [v for v in values if v in result.output], fmt
        assert result.output.count("[REDACTED:k8s_secret]") > 100


def test_a_configmap_cut_at_its_start_stays_visible() -> None:
    tail = b'\n            "k1": "aGVsbG8=",\n        },\n        "kind": "ConfigMap",\n        "metadata": {\n'
    captured = Captured(head=b"", tail=tail, total_bytes=100000)
    assert "aGVsbG8=" in sanitize_captured(captured, build_redactor(), 65536).text


def _kind_first_or_one_line(fmt: str, keys: int) -> tuple[bytes, list[str]]:
    """Secrets the cap cuts where the other half cannot say "Secret": ``kind:`` before ``data:`` (manifests as
    people write them, ``helm template``), and one-line JSON (``kubectl get secret -o json | jq -c``)."""
    values = [base64.b64encode(f"cut-secret-value-{i:05d}".encode()).decode() for i in range(keys)]
    data = {f"key{i:05d}": v for i, v in enumerate(values)}
    if fmt == "yaml-kind-first":
        lines = "".join(f"  {k}: {v}\n" for k, v in data.items())
        return f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: bundle\ndata:\n{lines}type: Opaque\n".encode(), values
    kind_first = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bundle"}, "data": data}
    if fmt == "json-kind-first":
        return (json.dumps(kind_first, indent=2) + "\n").encode(), values
    if fmt == "compact-kind-first":
        return (json.dumps(kind_first, separators=(",", ":")) + "\n").encode(), values
    kubectl_order = {"apiVersion": "v1", "data": data, "kind": "Secret", "metadata": {"name": "bundle"}}
    return (json.dumps(kubectl_order, separators=(",", ":")) + "\n").encode(), values


async def test_a_secret_whose_kind_is_on_the_other_side_of_the_cut_is_still_redacted(tmp_path: Path) -> None:
    """Review of issue #11: the tail of a kind-first Secret and both halves of a one-line JSON Secret went out
    raw (hundreds of values), since nothing left in that half said "Secret". A half that may belong to a
    Secret whose kind was cut off fails closed when its values are base64, as every Secret's data is."""
    for fmt in ("yaml-kind-first", "json-kind-first", "compact-kind-first", "compact-kubectl-order"):
        raw, values = _kind_first_or_one_line(fmt, 2000)
        result = await print_through_the_runner(raw, tmp_path / f"cut-secret-{fmt}.txt")
        assert result.status == "finished" and "bytes omitted" in result.output
        assert not [v for v in values if v in result.output], fmt


def test_a_cut_tail_of_ordinary_mappings_stays_visible() -> None:
    # the fail-closed rule for a kind-less tail takes only base64 values: labels and specs stay readable
    tail = b"\n    app: web\n    tier: frontend\n    name: test\nspec:\n  replicas: 3\n"
    captured = Captured(head=b"", tail=tail, total_bytes=100000)
    text = sanitize_captured(captured, build_redactor(), 65536).text
    assert "app: web" in text and "name: test" in text and "REDACTED" not in text
    # a one-line JSON tail (over LINE_GUARD, so its first line is kept from its first whole token)
    compact = b"".join(b'"k%d":"web-frontend",' % i for i in range(400)) + b'"a":"ok"},"kind":"Deployment"}\n'
    assert "web-frontend" in sanitize_captured(Captured(b"", compact, 100000), build_redactor(), 65536).text
    secret = b"".join(b'"k%d":"d2ViLWZyb250ZW5k",' % i for i in range(400)) + b'"a":"b2s="},"type":"Opaque"}\n'
    assert "d2ViLWZyb250ZW5k" not in sanitize_captured(Captured(b"", secret, 100000), build_redactor(), 65536).text


def test_a_url_password_holding_a_comma_cut_at_the_gap_shows_no_part() -> None:
    """Review of #11: on a line over LINE_GUARD the head was cut at the last "," (a JSON delimiter) inside a URL's
    password, so "postgres://admin:Sup3rPrefix," was shown with no "@" left to find it by; the tail likewise
    started at ",S3cretTail@db". The URL is dropped at the gap instead."""
    secret = "postgres://admin:Sup3rPrefix,S3cretTail,more@db.internal/x"
    line = ("x" * 6000 + " " + secret + " " + "y" * 6000).encode()
    for part in ("S3cretTail", ",more"):  # the gap right after each comma
        cut = line.index(part.encode()) + (0 if part[0] != "," else 1)
        captured = Captured(line[:cut], line[cut + 2 :], len(line) + 100)
        text = sanitize_captured(captured, build_redactor(), 65536).text
        for piece in ("Sup3rPrefix", "S3cretTail", "more@"):
            assert piece not in text, (part, piece, text[5990:6100])
        assert "x" * 100 in text and "y" * 100 in text
    minified = ('{"a":"b",' * 1000 + '"url":"https://example.com/a,b,c"}').encode()
    kept = sanitize_captured(Captured(minified[:-10], b"", len(minified) + 10), build_redactor(), 65536).text
    assert kept.startswith('{"a":"b",') and kept.count('"a":"b"') > 900  # minified JSON still cut at a comma


def test_a_head_cut_inside_a_one_line_secrets_value_hides_the_values_before_the_cut() -> None:
    """The head of a one-line JSON Secret cut inside a value (after a plain byte, after the backslash of an escape):
    the data object is still read as open, so every whole value before the cut is hidden (leaks8's escaped-quote
    reading once required that value's closing quote, and the whole head went out raw)."""
    from bot.sanitize.manifest_compact import redact_open_compact

    def marker(kind: str, value: bytes) -> bytes:
        return b"[REDACTED:" + kind.encode() + b"]"

    line = (b'{"apiVersion":"v1","kind":"Secret","data":{"a":"c2VjcmV0LW9uZQ==","b":"dHdv\\"IHNlY3JldA==",'
            b'"c":"dGhyZWUtc2Vj')
    for cut in (line, line + b"\\"):
        redacted, count = redact_open_compact(cut, marker)
        assert count == 2, redacted
        assert b"c2VjcmV0LW9uZQ==" not in redacted and b"IHNlY3JldA==" not in redacted
