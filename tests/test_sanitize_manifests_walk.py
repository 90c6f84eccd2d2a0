"""The Secret-manifest walk's speed (issue #11, ``secspeed``): it reads in Python only the lines that can change
something, takes a data block's lines and replaces their values together, and has a budget that fails closed.

Two oracles check that the first two change nothing: the walk with its search for the next line made to stop at
every line (the walk as it was, reading each line), and the values replaced one line at a time (an approval card's
way, whose markers differ per value) against the substitutions of a constant marker."""

from __future__ import annotations

import random
import re

import pytest

from bot.sanitize import sanitize_output, structured
from bot.sanitize.redact import build_redactor
from tests.corpora.secret_listings import SHAPES, listings, value_count

TOKEN = "c3VwZXItc2VjcmV0LXZhbHVl"  # base64, no shape any other detector knows


def _marker(kind: str, secret: bytes) -> bytes:
    return f"[REDACTED:{kind}]".encode()


_KEYS = ("kind", "apiVersion", "data", "stringData", "metadata", "name", "k", '"kind"', '"data"', "type", "items",
         "'k'")
_VALUES = ("", "Secret", "'Secret'", '"Secret"', "Secret,", "ConfigMap", "v1", "YWJj", '"YWJj",', "|", "|-", "{",
           "}", "{{ .Values.x }}", '"{{ x }}"', "a b", "5432,", "'b'", '""', "x # c", "a\r", '"a" ,', "}x", ">-",
           "&d", "# b64", "!!map", "{a: YWJj}", '{"a": "YWJj"},', "{}", "&d {a: YWJj} # c")


def _line(rng: random.Random) -> str:
    indent = rng.choice(["", "", " ", "  ", "  ", "    ", "      ", "\t"])
    roll = rng.random()
    if roll < 0.05:
        return rng.choice(["---", " ---", "\r---"])
    if roll < 0.1:
        return indent + rng.choice(["", "# kind: Secret", "\x0c", " \x0c#x", "}", "},", "- x"])
    if roll < 0.14:
        return indent + rng.choice(['{"kind":"Secret","data":{"a":"YWJj"}}', '"a":"YWJj"},"kind":"Secret"}',
                                    '{"apiVersion":"v1","data":{"x":"YWJj"'])
    item = rng.choice(["", "", "", "- "])
    return (indent + item + rng.choice(_KEYS) + rng.choice([": ", ":", " : ", ":\t"]) + rng.choice(_VALUES)
            + rng.choice(["", "", ",", " "]))


def _texts(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        lines: list[str] = []
        while len(lines) < rng.randint(0, 40):
            if rng.random() < 0.3:  # a Secret's data block, as often as anything else
                pad = rng.choice(["", "  ", "    "])
                lines += [pad + rng.choice(["kind: Secret", "apiVersion: v1", "kind: Other"]), pad + "data:"]
                lines += [pad + rng.choice(["  ", "\t"]) + f"k{i}: " + rng.choice(_VALUES)
                          for i in range(rng.randint(0, 6))]
            else:
                lines.append(_line(rng))
        texts.append(("\n".join(lines) + rng.choice(["", "\n"])).encode())
    return texts


def _walks(text: bytes, **cut: bool) -> list[tuple[bytes, int]]:
    return [structured.redact_secret_manifests(text, _marker, cut_start=start, cut_end=end, **cut)
            for start in (False, True) for end in (False, True)]


def test_passing_over_lines_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts(1500, seed=11)
    searched = [_walks(text) for text in texts]
    every_line = re.compile(rb"\n")  # the next line is always the one after: every line read, as before
    monkeypatch.setattr(structured, "_NEXT_LINES", {})
    monkeypatch.setattr(structured, "_next_line", lambda top_indent: every_line)
    assert sum(count for walks in searched for _, count in walks) > 1000  # (the texts hold many Secrets)
    for text, walks in zip(texts, searched, strict=True):
        assert _walks(text) == walks, text


def test_values_replaced_together_are_what_each_line_alone_makes_of_them() -> None:
    for text in _texts(1500, seed=12):
        assert _walks(text, constant_marker=True) == _walks(text), text


def test_an_approval_cards_markers_still_tell_two_values_apart() -> None:
    text = f"apiVersion: v1\ndata:\n  a: {TOKEN}\n  b: YWRtaW4=\nkind: Secret\n"
    shown, count = build_redactor().redact(text, fingerprints=True)
    markers = re.findall(r"\[REDACTED:k8s_secret#\w+\]", shown)
    assert count == 2 and len(set(markers)) == 2 and TOKEN not in shown


def test_a_text_of_nothing_but_secret_lines_is_hidden_past_the_budget() -> None:
    units = [f"kind: Secret\ndata:\n  k{i:x}: {TOKEN}{i:x}\n" for i in range(3000)]
    text = "".join(units)
    shown = sanitize_output(text.encode(), output_limit=1 << 30).text
    assert "[REDACTED:dense_candidates]" in shown and TOKEN not in shown
    kept = shown[: shown.index("[REDACTED:dense_candidates]")]
    assert kept.startswith("kind: Secret\ndata:\n  k0: [REDACTED:k8s_secret]\nkind: Secret\n")
    assert len(kept) > 10_000  # the walk read its free units' worth and one per 10 bytes before it stopped


def test_values_whose_kind_lies_past_the_budget_fail_closed() -> None:
    # The budget runs out inside the only object, before its kind: the values read so far are hidden anyway.
    text = "".join(f"data:\n  k{i:x}: {TOKEN}{i:x}\n" for i in range(3000)) + "kind: Secret\n"
    out, _ = structured.redact_secret_manifests(text.encode(), _marker)
    assert b"[REDACTED:dense_candidates]" in out and TOKEN.encode() not in out
    assert out.startswith(b"data:\n  k0: [REDACTED:k8s_secret]\n")


@pytest.mark.parametrize("shapes", [SHAPES, ("environment",)], ids=["mixed", "environment"])
def test_ordinary_secret_listings_stay_within_the_budget(shapes: tuple[str, ...]) -> None:
    # kubectl get secrets -A, about 256 KiB in each form: every value hidden, nothing else. (The walk alone: the
    # detector passes' own density budget reaches a few of the one-object-a-line form's pairs before it.)
    for form, text in listings(256 << 10, shapes=shapes).items():
        out, count = structured.redact_secret_manifests(text, _marker, constant_marker=True)
        assert b"dense_candidates" not in out, form
        assert count == out.count(b"[REDACTED:k8s_secret]") == value_count(text), form
