"""Safe execution of one approved tool call: no shell, bounded time and memory, sanitized output."""

from bot.runner.execute import run_argv
from bot.runner.result import CallResult, CallStatus

__all__ = ["CallResult", "CallStatus", "run_argv"]
