"""Safe execution of one approved tool call: no shell, bounded time and memory, sanitized output."""

from bot.runner.execute import run_argv
from bot.runner.result import CallResult, CallStatus
from bot.runner.sanitize import SanitizedOutput, redact_argv, sanitize_output, strip_controls
from bot.runner.secrets import build_redactor, redact

__all__ = [
    "CallResult",
    "CallStatus",
    "SanitizedOutput",
    "build_redactor",
    "redact",
    "redact_argv",
    "run_argv",
    "sanitize_output",
    "strip_controls",
]
