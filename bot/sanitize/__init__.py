"""Text hygiene shared by runner, agent and logs: control characters, secret redaction, the output cap.

Knows nothing of Slack, Redis, subprocesses or the model (DESIGN.md package table): pure functions over text.
"""

from bot.sanitize.argv import display_command_line, redact_argv
from bot.sanitize.cap import DEFAULT_OUTPUT_LIMIT, Captured, SanitizedOutput, sanitize_captured, sanitize_output
from bot.sanitize.controls import reveal_invisible, strip_controls
from bot.sanitize.offload import clean_model_text, clean_text
from bot.sanitize.redact import Redactor, build_redactor, redact

__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "Captured",
    "Redactor",
    "SanitizedOutput",
    "build_redactor",
    "clean_model_text",
    "clean_text",
    "display_command_line",
    "redact",
    "redact_argv",
    "reveal_invisible",
    "sanitize_captured",
    "sanitize_output",
    "strip_controls",
]
