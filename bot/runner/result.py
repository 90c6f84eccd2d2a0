"""The outcome of one tool call, as stored, posted to Slack and returned to the model."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CallStatus = Literal["finished", "timed_out", "failed_to_start", "refused", "cancelled"]


class CallResult(BaseModel):
    """One executed (or unstartable) call. ``output`` is already sanitized: show it as is, never raw bytes.

    A non-zero ``exit_code`` is a normal ``finished`` result: the model needs to see failures to reason about
    them. ``cancelled``: a human asked to stop it and the runner's signal (``stopped_by``) ended it.
    ``exit_code`` is negative (``-signal``) when the process died by a signal, and None when it never
    started. ``total_bytes`` counts everything the tool wrote, including what the cap left out.
    """

    model_config = ConfigDict(frozen=True)

    status: CallStatus
    exit_code: int | None = None
    output: str = ""
    truncated: bool = False
    total_bytes: int = Field(default=0, ge=0)
    duration_seconds: float = Field(default=0.0, ge=0)
    redactions: int = Field(default=0, ge=0)
    argv_display: list[str] = Field(default_factory=list)
    error: str | None = None
    stopped_by: str | None = Field(default=None, description="SIGTERM or SIGKILL when a stop request ended it")
    output_withheld: str | None = Field(
        default=None, description="why every line of the output is redacted: the argv asked for a secret's value")
