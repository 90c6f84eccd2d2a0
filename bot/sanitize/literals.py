"""Whether a literal is in a text, fast whatever its bytes: the gate before a whole-text search.

Kept apart (no detector in it) so that the modules that gate a search on a literal (``automata``'s literals,
``redact``'s private key blocks, ``structured``'s Secret manifests) share it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable

import re2

UNANCHORED = re2._Anchor.UNANCHORED
# Bytes of ordinary output, commonest first (roughly): a literal's byte not among them, or the last of them it holds,
# is asked first (``containment``).
_COMMON = b" etaoinsrhldcumfpgwybvk-_.:/=,\n\t0123456789"


def containment(literal: bytes) -> Callable[[bytes], bool]:
    """Whether ``literal`` is in a text, as ``literal in text`` says, but fast for a literal of several bytes: the
    ``in`` operator's search steps through a megabyte in about 2 ms when the literal's bytes are frequent or absent
    (``b"=="`` on an environment listing, ``b"://"`` on text without a URL; ``b"Secret"`` on 256 KiB without it:
    150 us), RE2's in a few microseconds where the first byte is rare (it looks for it with memchr). Latin-1, so
    that it compares bytes, whatever the text's encoding."""
    if len(literal) == 1:
        return lambda data: literal in data
    options = re2.Options()  # its own (a literal needs no DFA budget), never one shared through re2_options
    options.encoding = re2.Options.Encoding.LATIN1
    options.log_errors = False
    match = re2.compile(re2.escape(literal), options)._regexp.Match
    # RE2 steps from each occurrence of the literal's first byte: ``-----BEGIN`` on a psql table's rules cost 440 us
    # per 256 KiB, four times Python's search. Its rarest byte asked first (memchr; a present one is found at once)
    # answers most texts that lack the literal in a few microseconds.
    rare = bytes((max(literal, key=lambda byte: _COMMON.find(byte) if byte in _COMMON else len(_COMMON)),))
    return lambda data: rare in data and bool(match(UNANCHORED, data, 0, len(data))[0][0] >= 0)


Literal = bytes | tuple[bytes, ...]


def literal_containment(literal: Literal) -> Callable[[bytes], bool]:
    """``containment`` of a detector's literal: a tuple is a choice, in the text when any one of its strings is (a
    Key Vault id's domain: ``zure.`` in the public, China's and Germany's clouds, ``usgovcloudapi`` in the US
    Government's)."""
    if isinstance(literal, bytes):
        return containment(literal)
    choices = tuple(containment(choice) for choice in literal)
    return lambda data: any(contains(data) for contains in choices)


def literal_strings(literal: Literal) -> tuple[bytes, ...]:
    """The strings of a literal (one, or each of a choice)."""
    return (literal,) if isinstance(literal, bytes) else literal
