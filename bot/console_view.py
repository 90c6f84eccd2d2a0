"""What the console shows, with ``rich``: colour, rendered Markdown, a spinner with elapsed time, and prompts
that nothing prints into.

The view owns the bottom of the screen. At any moment it shows one of: nothing, a spinner (``thinking… 3s``,
``running service_status… 2s``), or a prompt waiting for the user (``you>`` or an approval card ending in
``Approve? [y/N]``). Everything else (answers, results, notices) goes through :meth:`ConsoleView.emit`, which
prints *above* the spinner, or erases the open prompt line, prints, and shows the prompt again: a result never
lands in the middle of a question. On a pipe (not a terminal) there is no colour, no spinner and no Markdown
rendering: plain lines that scripts can read.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TextIO

from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.control import Control
from rich.live import Live
from rich.markdown import Markdown
from rich.segment import ControlType
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from bot.approvals.describe import state_sentence
from bot.approvals.records import CallRecord
from bot.sanitize import display_command_line

OUTPUT_LINES = 60
STATE_STYLES = {"finished": "green", "denied": "red", "expired": "red", "rejected": "red", "timed_out": "red",
                "failed_to_start": "red", "interrupted": "yellow", "refused": "red", "cancelled": "yellow"}
Label = Callable[[], "tuple[str, float] | None"]


def local_time(moment: datetime) -> str:
    """``14:03:07 CET``: people read times in their own zone (the record keeps UTC)."""
    return moment.astimezone().strftime("%H:%M:%S %Z").strip()


INVISIBLE_WARNING = ("⚠ The command contains invisible or control characters, shown as escapes"
                     " (\\n, \\x1b, \\u202e, \\u3164...). Check them before approving.")


def command_line(argv: list[str], redact_patterns: Sequence[str] = ()) -> tuple[str, bool]:
    """The command line as people see it, the same as on a Slack card (``display_command_line``): secrets as
    fingerprinted markers, the operator's ``execution.redact_patterns`` too (as the Slack card applies them),
    every invisible or control character escaped (a raw escape sequence or bidi override would rewrite the
    terminal line the approver reads); and whether anything was escaped."""
    return display_command_line(argv, redact_patterns)


def card_text(record: CallRecord, redact_patterns: Sequence[str] = ()) -> Text:
    """The approval card: the command line as shown to people, why approval is needed, when it expires, the
    question; a warning line when the command holds characters shown as escapes."""
    shown, revealed = command_line(record.argv, redact_patterns)
    warning: list[str | tuple[str, str]] = [("│ ", "yellow"), (INVISIBLE_WARNING, "bold red"), "\n"] if revealed else []
    return Text.assemble(
        ("\n┌ ", "yellow"), ("approval needed: ", "bold yellow"), (record.tool, "bold"), f" ({record.trigger})\n",
        ("│ ", "yellow"), ("$ ", "dim"), (shown, "bold"), "\n", *warning,
        ("└ ", "yellow"), f"expires {local_time(record.expires_at)}. ", ("Approve? [y/N] ", "bold yellow"),
    )  # fmt: skip


def result_text(record: CallRecord) -> Text:
    """How a call ended: the same human sentence as the Slack card (``bot.approvals.describe``), then output."""
    result: dict[str, Any] = record.result or {}
    state = str(record.state)
    exit_code = result.get("exit_code")
    style = "red" if state == "finished" and exit_code not in (0, None) else STATE_STYLES.get(state, "")
    head = Text.assemble("\n[", (record.tool, "bold"), "] ", (state.replace("_", " "), style), " · ",
                         state_sentence(record, when=local_time))
    if result.get("output_withheld"):
        head.append(f"\n  output withheld: {result['output_withheld']}", style="yellow")
    lines = str(result.get("output", "")).splitlines()
    if len(lines) > OUTPUT_LINES:
        lines = [*lines[: OUTPUT_LINES // 2], f"… {len(lines) - OUTPUT_LINES} lines …", *lines[-OUTPUT_LINES // 2:]]
    for line in lines:
        head.append("\n  " + line)
    return head


class _Waiting:
    """The spinner's renderable: label and elapsed seconds are read at every refresh."""

    def __init__(self, label: Label) -> None:
        self.label = label
        self.spinner = Spinner("dots", style="cyan")

    def __rich__(self) -> RenderableType:
        current = self.label()
        if current is None:
            return Text("")
        what, since = current
        self.spinner.update(text=Text.assemble((f"{what}… ", "cyan"), (f"{time.monotonic() - since:.0f}s", "dim")))
        return self.spinner


class ConsoleView:
    """The screen of one console session (see the module docstring)."""

    def __init__(self, out: TextIO | None = None, *, terminal: bool | None = None) -> None:
        self.console = Console(file=out, force_terminal=terminal, highlight=False, soft_wrap=True,
                               emoji=False, markup=False)
        self.prompt: Text | None = None
        self._live: Live | None = None

    @property
    def terminal(self) -> bool:
        return bool(self.console.is_terminal)

    # -------------------------------------------------------------- the bottom of the screen

    def show_prompt(self, prompt: Text) -> None:
        """Show ``prompt`` and wait there for the user (stops the spinner)."""
        self.spin(None)
        self.prompt = prompt
        self.console.print(prompt, end="")

    def close_prompt(self) -> None:
        """The user answered (pressed Enter): the prompt line is finished."""
        self.prompt = None

    def spin(self, label: Label | None) -> None:
        """Show a spinner with ``label()`` -> (text, since) while no prompt is open; None stops it."""
        if label is None or not self.terminal or self.prompt is not None:
            if self._live is not None:
                self._live.stop()
                self._live = None
            return
        if self._live is None:
            self._live = Live(_Waiting(label), console=self.console, transient=True, refresh_per_second=10)
            self._live.start()
        else:
            self._live.update(_Waiting(label))

    # -------------------------------------------------------------- everything else

    def emit(self, renderable: RenderableType) -> None:
        """Print above the spinner, or around the open prompt (erased, then shown again below)."""
        prompt = self.prompt
        if prompt is not None:
            if self.terminal:
                self._erase(prompt)
            else:
                self.console.print()
        self.console.print(renderable)
        if prompt is not None:
            self.console.print(prompt, end="")

    def _erase(self, prompt: Text) -> None:
        """Remove the prompt's rows (a card spans several, a long command line wraps) and leave the cursor at
        the start of its first row."""
        width = max(1, self.console.width)
        rows = sum(max(1, math.ceil(cell_len(line) / width)) for line in prompt.plain.split("\n"))
        erase = Control((ControlType.ERASE_IN_LINE, 2))
        controls = [Control.move_to_column(0), erase]
        for _ in range(rows - 1):
            controls += [Control.move(0, -1), erase]
        self.console.control(*controls)

    def reply(self, text: str, kind: str = "answer") -> None:
        if not text.strip():
            return
        label = Text("bot>", style="bold magenta" if kind != "notice" else "bold yellow")
        if not self.terminal:
            self.emit(Text.assemble(label, " ", text))
            return
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column()
        grid.add_row(label, Markdown(text) if kind != "notice" else Text(text, style="yellow"))
        self.emit(grid)

    def note(self, text: str, style: str = "dim") -> None:
        self.emit(Text(text, style=style))

    def close(self) -> None:
        self.spin(None)
