"""Secret detectors: one compiled alternation of hand-written patterns, plus exact credential values.

Why hand-written regexes and not a detector library: the output must be *redacted* (not just flagged), across
line breaks (PEM blocks), keeping the harmless part visible (the key of ``password=...``, the user of a URL),
on every tool result. detect-secrets 1.5.0 was measured against this set on ~1 MB of text (see
``bench/bench_execute.py --secrets``): it is line-oriented, reports but does not redact, misses multi-line PEM
blocks and URL credentials, and is slower. All single-line patterns are joined into one alternation; at a
given position the first listed detector wins (``anthropic_key`` before ``openai_key``).

Speed: Python's ``re`` tries such an alternation at every position (~0.7 s/MB). Every detector's match starts
on a line holding one of a few lowercase trigger literals (``xox``, ``sk-``, ``://``, ``password``...), so the
text is first lowercased and searched for triggers with one case-sensitive literal alternation (~30 ms/MB),
and the detectors run only on those lines plus the line after (for ``password:\n  value``).

Every redaction leaves ``[REDACTED:<kind>]`` so a reader (human or model) knows something was there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

MARKER = "[REDACTED:{kind}]"
# Exact credential values shorter than this are not redacted: "1", "true" or "dev" would shred the output.
MIN_SECRET_VALUE_LENGTH = 6

# Keywords that make the value after ``=`` or ``:`` a secret, and the kind each one is reported as.
_KEYWORD_KINDS = (
    ("passphrase", "password"),
    ("password", "password"),
    ("passwd", "password"),
    ("client_secret", "secret"),
    ("secret", "secret"),
    ("token", "token"),
    ("api_key", "api_key"),
    ("api-key", "api_key"),
    ("apikey", "api_key"),
    ("access_key", "access_key"),
    ("access-key", "access_key"),
    ("accesskey", "access_key"),
    ("private_key", "private_key"),
    ("private-key", "private_key"),
    ("credential", "credential"),
)
_AWS_KEY_ID_PREFIXES = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA", "ABIA", "ACCA")
_KEYWORDS = "|".join(re.escape(k) for k, _ in _KEYWORD_KINDS)
# Values that are clearly not secrets (small counters such as ``max_tokens: 1024``, booleans, nulls) or
# already redacted are left alone.
_NOT_A_SECRET = r"(?!\[REDACTED|(?:\d{1,5}|true|false|null|none|yes|no)(?![^\s,;&}\"'\]]))"

# (kind, pattern). Groups named ``keep``/``keep2`` stay visible; a group named ``val`` is the part replaced
# (when absent, the whole match is replaced); ``kw`` picks the kind from _KEYWORD_KINDS.
# Multi-line, so scanned over the whole text on its own (it starts with a literal, which ``re`` finds fast).
# An unterminated block (its END cut off by the capture) is redacted to the end of the text.
_PRIVATE_KEY = re.compile(
    r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)"
)
_GITLAB_PREFIXES = ("glpat", "glrt", "gldt", "glptt", "glsoat", "gloas", "glcbt", "glimt", "glagent", "glffct", "glft")
_DETECTORS: tuple[tuple[str, str], ...] = (
    ("slack_webhook", r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]+"),
    ("slack_token", r"(?<![A-Za-z0-9])xox[abposre](?:\.xox[a-z])?-[A-Za-z0-9-]{8,}"),
    ("slack_token", r"(?<![A-Za-z0-9])xapp-[A-Za-z0-9-]{10,}"),
    ("anthropic_key", r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{16,}"),
    ("openai_key", r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("github_token", r"(?<![A-Za-z0-9_])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}"),
    ("github_token", r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}"),
    (
        "gitlab_token",
        rf"(?<![A-Za-z0-9_-])(?:{'|'.join(_GITLAB_PREFIXES)})-[A-Za-z0-9_-]{{20,}}",
    ),
    ("stripe_key", r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("npm_token", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    ("sendgrid_key", r"(?<![A-Za-z0-9_.-])SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
    ("huggingface_token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}"),
    ("digitalocean_token", r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}"),
    (
        "password",
        # Environment-style names ending in PASS or PWD (DB_PASS=..., MYSQL_PWD=...).
        r"(?P<keep>\b[A-Za-z0-9_]*(?:_PASS|_PWD|_pass|_pwd|PASSWD)\s*=\s*[\"']?)(?P<val>(?!\[REDACTED)[^\s\"']+)",
    ),
    ("google_api_key", r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}"),
    (
        "aws_access_key_id",
        rf"(?<![A-Z0-9])(?:{'|'.join(_AWS_KEY_ID_PREFIXES)})[A-Z0-9]{{16}}(?![A-Z0-9])",
    ),
    ("jwt", r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"),
    (
        "aws_secret_key",
        # A 40-character base64 token within 60 characters after "aws" on the same line (not a hex digest).
        r"(?i:(?P<keep>aws[^\n]{0,60}?)(?<![A-Za-z0-9/+=_])(?![0-9a-f]{40})"
        r"(?P<val>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=]))",
    ),
    (
        "authorization",
        r"(?i:(?P<keep>\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest)\s+)?)"
        r"(?P<val>(?!\[REDACTED)[^\s\"',;]+))",
    ),
    ("bearer", r"(?i:(?P<keep>\bbearer\s+)(?P<val>(?!\[REDACTED)[A-Za-z0-9._~+/=-]{8,}))"),
    (
        "url_password",
        r"(?i:(?P<keep>\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@\"'<>]*:)(?P<val>(?!\[REDACTED)[^\s@/\"'<>]+)(?=@))",
    ),
    (
        "assignment",
        rf"(?i:(?P<keep>(?P<kw>{_KEYWORDS})[\w.-]*[\"']?\s*[:=]\s*(?P<q>[\"'])?)"
        rf"{_NOT_A_SECRET}(?P<val>(?(q)[^\"'\n]+|[^\s,;&}}\"'\]]+)))",
    ),
)

_KIND_OF_KEYWORD = dict(_KEYWORD_KINDS)
# Detectors whose kept context is free text that may itself contain a secret.
_FREE_CONTEXT_KINDS = frozenset({"aws_secret_key", "url_password"})
# Lowercase literals, one of which is on the line where any detector's match starts.
_TRIGGER_WORDS = (
    "xox", "xapp-", "hooks.slack.com", "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "aiza", "eyj", "aws", "authorization", "bearer", "://", *(f"{p}-" for p in _GITLAB_PREFIXES),
    "sk_", "rk_", "npm_", "sg.", "hf_", "_v1_", "_pass", "_pwd",
    *(p.lower() for p in _AWS_KEY_ID_PREFIXES),
    *(k for k, _ in _KEYWORD_KINDS),
)  # fmt: skip
_TRIGGERS = re.compile("|".join(re.escape(t) for t in sorted(set(_TRIGGER_WORDS), key=len, reverse=True)))


def _candidate_windows(text: str) -> list[tuple[int, int]]:
    """Spans (line with a trigger through the next line) where a detector match can start; merged, sorted."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a character lowercased to two: positions differ, scan everything
        return [(0, len(text))]
    windows: list[tuple[int, int]] = []
    pos = 0
    while (hit := _TRIGGERS.search(lowered, pos)) is not None:
        start = text.rfind("\n", 0, hit.start()) + 1
        line_end = text.find("\n", hit.end())
        end = len(text) if line_end < 0 else text.find("\n", line_end + 1)
        end = len(text) if end < 0 else end
        if windows and start <= windows[-1][1]:
            start = windows.pop()[0]
        windows.append((start, end))
        pos = max(end, hit.end())
    return windows


@dataclass(frozen=True)
class _Branch:
    kind: str
    has_val: bool


@dataclass(frozen=True)
class Redactor:
    """A compiled detector set: exact values first, then the patterns. Build once, reuse for every text."""

    values: re.Pattern[str] | None
    patterns: re.Pattern[str]
    custom: tuple[re.Pattern[str], ...]
    branches: dict[str, _Branch]

    def redact(self, text: str) -> tuple[str, int]:
        """Return ``text`` with every secret replaced by its marker, and the number of redactions."""
        count = 0

        def sub(pattern: re.Pattern[str], text: str, repl: Callable[[re.Match[str]], str]) -> str:
            nonlocal count
            new, n = pattern.subn(repl, text)
            count += n
            return new

        if self.values is not None:
            text = sub(self.values, text, lambda m: MARKER.format(kind="secret_value"))
        for pattern in self.custom:
            text = sub(pattern, text, lambda m: MARKER.format(kind="custom"))
        text = sub(_PRIVATE_KEY, text, lambda m: MARKER.format(kind="private_key"))
        text, found = self._scan(text)
        return text, count + found

    def _scan(self, text: str) -> tuple[str, int]:
        """The pattern detectors over the candidate windows of ``text``."""
        count = 0
        pieces: list[str] = []
        last = 0
        for start, end in _candidate_windows(text):
            for match in self.patterns.finditer(text, start, end):
                replacement, found = self._replace(match)
                pieces += (text[last : match.start()], replacement)
                last = match.end()
                count += found
        pieces.append(text[last:])
        return "".join(pieces), count

    def _replace(self, m: re.Match[str]) -> tuple[str, int]:
        """The marker for one match, and how many secrets it covered.

        A context detector keeps its context visible. Where that context is free text (``aws ... <key>``, the
        user of ``scheme://user:<password>@``) it is scanned too: one match wins per position, and the context
        may hold another secret (an AWS key id before the secret key, a token used as the URL's user name)."""
        name = m.lastgroup or ""
        branch = self.branches[name]
        if not branch.has_val:
            return MARKER.format(kind=branch.kind), 1
        kind = branch.kind
        kw = m.group(f"{name}_kw") if kind == "assignment" else None
        if kw is not None:
            kind = _KIND_OF_KEYWORD.get(kw.lower(), "secret")
        start, end = m.span()
        vstart, vend = m.span(f"{name}_val")
        whole = m.string
        before, after, found = whole[start:vstart], whole[vend:end], 1
        if kind in _FREE_CONTEXT_KINDS:
            (before, n_before), (after, n_after) = self._scan(before), self._scan(after)
            found += n_before + n_after
        return before + MARKER.format(kind=kind) + after, found


def _renamed(index: int, pattern: str) -> str:
    """Give a detector's inner named groups a per-branch prefix so all of them fit in one alternation."""
    pattern = re.sub(r"\(\?P<(\w+)>", lambda m: f"(?P<b{index}_{m.group(1)}>", pattern)
    pattern = re.sub(r"\(\?\((\w+)\)", lambda m: f"(?(b{index}_{m.group(1)})", pattern)
    return pattern


def build_redactor(secret_values: Iterable[str] = (), patterns: Iterable[str] = ()) -> Redactor:
    """Compile the detectors for one call: its scrubbed credential values and the operator's patterns.

    ``patterns`` are operator-configured regular expressions; an invalid one raises ``re.error`` so a bad
    configuration is noticed at startup rather than silently letting a secret through.
    """
    values = sorted({v for v in secret_values if len(v) >= MIN_SECRET_VALUE_LENGTH}, key=len, reverse=True)
    values_re = re.compile("|".join(re.escape(v) for v in values)) if values else None
    custom = tuple(re.compile(p) for p in patterns if p)
    parts: list[str] = []
    branches: dict[str, _Branch] = {}
    for index, (kind, pattern) in enumerate(_DETECTORS):
        name = f"b{index}"
        parts.append(f"(?P<{name}>{_renamed(index, pattern)})")
        branches[name] = _Branch(kind=kind, has_val="(?P<val>" in pattern)
    return Redactor(values=values_re, patterns=re.compile("|".join(parts)), custom=custom, branches=branches)


DEFAULT_REDACTOR = build_redactor()


def redact(text: str, secret_values: Iterable[str] = (), patterns: Iterable[str] = ()) -> tuple[str, int]:
    """Convenience: redact ``text`` with a redactor built for these values and patterns."""
    values, extra = tuple(secret_values), tuple(patterns)
    redactor = DEFAULT_REDACTOR if not values and not extra else build_redactor(values, extra)
    return redactor.redact(text)
