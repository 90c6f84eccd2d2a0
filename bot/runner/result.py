"""The outcome of one tool call, as stored, posted to Slack and returned to the model.

A plain frozen dataclass, not a pydantic model: the runner builds one per call and a runner process imports no
pydantic (its import and schema machinery are ~9 MiB of a runner's RSS: README, runner RSS). The runner is the
only writer; ``from_json`` reads a stored result back with the same checks the constructor makes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, cast, get_args

CallStatus = Literal["finished", "timed_out", "failed_to_start", "refused", "cancelled"]
CALL_STATUSES: frozenset[str] = frozenset(get_args(CallStatus))


@dataclass(frozen=True)
class CallResult:
    """One executed (or unstartable) call. ``output`` is already sanitized: show it as is, never raw bytes.

    A non-zero ``exit_code`` is a normal ``finished`` result: the model needs to see failures to reason about
    them. ``cancelled``: a human asked to stop it and the runner's signal (``stopped_by``) ended it.
    ``exit_code`` is negative (``-signal``) when the process died by a signal, and None when it never
    started. ``total_bytes`` counts everything the tool wrote, including what the cap left out.
    ``stopped_by``: SIGTERM or SIGKILL when a stop request ended it. ``output_withheld``: why every line of the
    output is redacted (the argv asked for a secret's value).
    """

    status: CallStatus
    exit_code: int | None = None
    output: str = ""
    truncated: bool = False
    total_bytes: int = 0
    duration_seconds: float = 0.0
    redactions: int = 0
    argv_display: list[str] = field(default_factory=list)
    error: str | None = None
    stopped_by: str | None = None
    output_withheld: str | None = None

    def __post_init__(self) -> None:
        if self.status not in CALL_STATUSES:
            raise ValueError(f"status: {self.status!r} is not one of {', '.join(sorted(CALL_STATUSES))}")
        for name in ("total_bytes", "duration_seconds", "redactions"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: must be >= 0, got {getattr(self, name)!r}")

    def as_json(self) -> dict[str, Any]:
        """Every field, JSON-ready (what ``finish`` stores and the front ends read)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CallResult:
        """A stored result; unknown keys are refused, so a misspelt field is an error rather than lost."""
        unknown = set(data) - _FIELDS
        if unknown:
            raise ValueError(f"unknown result fields: {', '.join(sorted(unknown))}")
        values = dict(data)
        if "argv_display" in values:
            values["argv_display"] = list(values["argv_display"])
        return cls(**cast(dict[str, Any], values))


_FIELDS = frozenset(f.name for f in fields(CallResult))
