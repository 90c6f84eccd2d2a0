"""A cheap screen that clears an echoed command line no rule of ``echoed.py`` can judge as asking for a secret.

leaks15's rule (``echoed_names``) made every echoed command line ending in a secret's word a hint: a ``set -x`` trace
echoes thousands, each different (``+ git push origin feature/auth17``, ``+ ./deploy.sh --token-file
/etc/app/token``), and the full judge (``shlex``, ``secret_argv.judge_argv``, the name rules: ~13 us) is rationed by
a density budget; past it, the lines after an unjudged command were withheld whole (``echoed_dense_commands``) and
ordinary output was lost (found by review, issue #11). Every rule needs something this screen looks for with set
lookups over the line's words: a program of its own (``terraform``, ``printenv``, ``jq``, ``echo``, ``cat``,
``consul``, an interpreter ...), a store's command word (``secretsmanager``, ``op``, ``pass``, ``secret`` ...), one
of its options (``--field``, ``--query``, ``-o``, ``--reveal`` ...), or, for ``echoed_names``' last words, a program
that is not a naming one (``git``, ``ls``) with a positional word that holds a secret. A line with none of those is
cleared; any other goes on to the judge and its budget, which still fails closed.

Quotes: a line without any is split at blanks, exactly as the judge splits it (``echoed._argv``). With quotes, the
words before the first quote character are still the shell's, so the program is known when one of them is; the
rest is read as the quote characters removed and split at blanks, which cuts a quoted word at its blanks: every word
the rules compare (no blank in it) is still one of those pieces, so looking at every piece only clears less.
"""

from __future__ import annotations

import re

from bot.sanitize.echoed_names import (
    CREDENTIAL_TABLES,
    FILE_PRINTERS,
    INTERPRETERS,
    NAMING_PROGRAMS,
    named_command,
)
from bot.sanitize.secret_argv import BUILT_IN, OUTPUT_EXPRESSIONS, OUTPUT_OPTIONS, PROGRAMS_JUDGED

# The programs some rule judges by (``secret_argv``'s, from its own tables; ``echoed``'s echo/printf/consul/wg/etcdctl,
# which tests/test_sanitize_screen_programs.py holds to ``echoed``'s tables; ``echoed_names``' file printers and
# interpreters), and the first words of ``secret_argv``'s command shapes.
_ASKING_PROGRAMS = (frozenset({"echo", "printf", "consul", "wg", "etcdctl"}) | PROGRAMS_JUDGED | FILE_PRINTERS
                    | INTERPRETERS)
_COMMAND_WORDS = frozenset(command[0] for command in BUILT_IN.commands)
_ASKING_OPTIONS = BUILT_IN.field_options | BUILT_IN.query_options | BUILT_IN.reveal_options | OUTPUT_OPTIONS
_QUOTING = re.compile(r"['\"\\]")
_PREFIX_WORDS = frozenset({"sudo", "env", "time", "command", "exec", "nohup"})  # as ``echoed._argv`` drops them
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# An option's name (``--field=x``: ``field``; dashes and a value left out, as ``secret_argv`` reads it), and kubectl's
# ``-o`` glued to an expression (``-ojsonpath=...``).
_OPTION_NAME = re.compile(r"(?<!\S)-+([^\s=]*)")
_OUTPUT_EXPRESSION = re.compile(r"(?<!\S)-o(?:" + "|".join(re.escape(e) for e in OUTPUT_EXPRESSIONS) + ")")
# The words of a line whose last words ``screen`` judges (``echoed_names.named_command`` loops over them all).
_MAX_WORDS = 32
# Words before the program that ``_program`` reads past (``sudo``, ``FOO=bar``): a bound on its loop.
_MAX_PREFIX_WORDS = 16
# What ``screen`` says when it cannot tell: the judge (and its budget) decides.
UNSURE = "unsure"


def _program(words: list[str]) -> str | None:
    """The first word that is not a prefix (``sudo``, ``FOO=bar``), as ``echoed._argv`` finds it; None if none."""
    for word in words[:_MAX_PREFIX_WORDS]:
        if word not in _PREFIX_WORDS and not _ASSIGNMENT.match(word):
            return word
    return None


def _asks_by_program(program: str) -> bool:
    """A program some rule judges by, or the first word of a store's command (``/usr/bin/op read``)."""
    base = program.rpartition("/")[2]
    return (program in _ASKING_PROGRAMS or base in _ASKING_PROGRAMS or base.lower() in _ASKING_PROGRAMS
            or base.lower() in _COMMAND_WORDS)


def _asks_by_words(text: str) -> bool:
    """A store's command word, or one of the judge's options (``--field=x``, ``-ojsonpath=...``), among the words:
    set and regular-expression operations over the whole line (a loop over its words cost 0.25 us a word)."""
    lowered = text.lower()
    return (not _COMMAND_WORDS.isdisjoint(lowered.split())
            or not _ASKING_OPTIONS.isdisjoint(_OPTION_NAME.findall(lowered))
            or _OUTPUT_EXPRESSION.search(lowered) is not None)


def _names_table(command: str) -> bool:
    """A path to a credential table among the words (``grep vpn /etc/ppp/chap-secrets``: ``echoed_names`` judges
    a grep of one, though grep is a naming program)."""
    return "-secrets" in command and any(
        word.strip("'\"").rpartition("/")[2] in CREDENTIAL_TABLES for word in command.split())


def screen(command: str) -> str | None:
    """The marker's kind ``echoed._judged`` would give this echoed command line (after its prompt) when it can be
    told cheaply (see the module): None when no rule can judge it as asking for a secret, ``echoed_named_command``
    when only the last words' rule can and does; ``UNSURE`` otherwise."""
    quote = _QUOTING.search(command)
    if quote is None:
        pieces = command.split()
        program = _program(pieces)
    else:
        before = command[: quote.start()]
        shell_words = before.split() if before[-1:].isspace() else before.split()[:-1]  # the last may go on
        pieces, program = shell_words, _program(shell_words)
    if program is None or _asks_by_program(program):
        return UNSURE
    naming = program in NAMING_PROGRAMS  # (``echoed_names.named_command`` judges no such line)
    if not naming and (quote is not None or len(pieces) > _MAX_WORDS):
        return UNSURE  # a quoted word's blanks: what the last words are is the shell's to say (and a bound on cost)
    if _asks_by_words(command if quote is None else _QUOTING.sub("", command)) or _names_table(command):
        return UNSURE
    if naming:
        return None  # no rule can judge it
    # Only the last words' rule is left, on the very words the judge reads (``echoed._argv``: split at blanks).
    verdict = named_command(pieces[pieces.index(program) :])
    return None if verdict is None else f"echoed_{verdict.kind}"
