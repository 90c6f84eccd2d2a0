"""JSON logs, one object per line, carrying conversation and call ids when a log call passes them.

Secrets never reach a log line: every message and extra value goes through the same redactor as tool output,
and the known credential values of this process are redacted by value.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Iterable
from typing import Any

from bot.fisk.environment import is_credential_name
from bot.logcontext import current
from bot.sanitize import build_redactor

CONTEXT_FIELDS = ("conversation", "call_id", "role", "tool", "user")


class JsonFormatter(logging.Formatter):
    def __init__(self, secret_values: list[str] | None = None, sensitive_env_vars: Iterable[str] = (),
                 redact_patterns: Iterable[str] = ()) -> None:
        """``secret_values`` default: the values of this process's credential variables, including the
        operator's ``sensitive_env_vars`` (the same set a tool's environment never gets). ``redact_patterns``:
        the operator's ``execution.redact_patterns``, redacted from log lines as from tool output."""
        super().__init__()
        sensitive = tuple(sensitive_env_vars)
        values = secret_values if secret_values is not None else [
            v for k, v in os.environ.items() if is_credential_name(k, sensitive) and len(v) >= 6
        ]
        self._redactor = build_redactor(values, tuple(redact_patterns))

    def _clean(self, text: str) -> str:
        return self._redactor.redact(text)[0]

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": self._clean(record.getMessage()),
        }
        context = current()
        for name in CONTEXT_FIELDS:
            value = getattr(record, name, None)
            if value is None:
                value = context.get(name)
            if value is not None:
                entry[name] = self._clean(str(value))
        if record.exc_info:
            entry["exception"] = self._clean(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False)


QUIET_LIBRARIES = ("httpx", "httpx2", "httpcore", "httpcore2")


def configure_logging(level: str = "INFO", json_logs: bool = True, sensitive_env_vars: Iterable[str] = (),
                      redact_patterns: Iterable[str] = ()) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if json_logs:
        handler.setFormatter(JsonFormatter(sensitive_env_vars=sensitive_env_vars, redact_patterns=redact_patterns))
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # HTTP client libraries log every request at INFO ("HTTP Request: GET .../v1/models"): noise at our INFO
    quiet = max(logging.WARNING, root.level)
    for name in QUIET_LIBRARIES:
        logging.getLogger(name).setLevel(quiet)
