"""What the sixth review of the sanitizer found (issue #11), through the public path (``sanitize_output``).

A ``set -x`` trace or a pasted shell session echoes many different command lines whose last word holds a secret's
word by accident (``+ git push origin feature/auth17``, ``-m 'release auth'``, ``git checkout fix-token17``).
leaks15's rule (``echoed_names``) made each such line a hint, and past the judging budget the lines after an
unjudged command were withheld whole (``echoed_dense_commands``): ordinary output lost. A last word holding "/" is
no hint now, and a command whose verdict a cheap screen can tell (``echoed_screen``) is not rationed by the judge's
budget; a command it cannot tell still fails closed past the budget.
"""

from __future__ import annotations

import pytest

from bot.sanitize import sanitize_output


def _trace(line: str, size: int = 60_000) -> str:
    """``line`` for i = 0, 1, ... (each different, so the verdicts' memory spares no judgement), whole lines up to
    ``size`` bytes: past the judging budget, under the output cap."""
    text = "".join(line.format(i=i) for i in range(size // len(line.format(i=0)) + 1))[:size]
    return text[: text.rindex("\n") + 1]


_TRACES = {
    "a branch pushed": "+ git push origin feature/auth{i}\nEverything up-to-date\n",
    "a path last": "+ ./deploy.sh --service api-{i} --config /etc/app/token\ndeployed revision 7f3a9c{i}\n",
    "a quoted message": "+ git tag -a v1.{i} -m 'release auth'\n+ git push origin v1.{i}\nTotal 0 (delta 0)\n",
    "a branch checked out": "+ git checkout fix-token{i}\nSwitched to branch 'fix-token{i}'\n"
                            "Your branch is up to date with 'origin/fix-token{i}'.\n",
}


@pytest.mark.parametrize("name", sorted(_TRACES))
def test_a_long_trace_of_ordinary_commands_naming_a_secret_word_stays_whole(name: str) -> None:
    text = _trace(_TRACES[name])
    assert sanitize_output(text.encode()).text == text


# Padding whose commands the screen cannot tell (a quoted word, not a naming program): past the judging budget.
_UNTOLD = "+ curl -sf https://api.example.com/v1/items/{i} -H 'Authorization: Bearer $TOKEN'\n"


@pytest.mark.parametrize("padding", [_TRACES["a quoted message"], _UNTOLD], ids=["told", "untold"])
@pytest.mark.parametrize(("command", "value"), [
    ("$ terraform output -raw db_password", "Qm7vX2kL9pR4zzT"),
    ("$ wg show wg0 private-key", "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="),
    ("$ gh auth token", "gho_Qm7vX2kL9pR4zzT"),
    ("+ bat /srv/app/api.pass", "Qm7vX2kL9pR4zzT"),
    ("$ python3 -c 'import os; print(os.environ[\"DB_PASSWORD\"])'", "Qm7vX2kL9pR4zzT"),
    ("$ echo \"$DB_PASSWORD\"", "Qm7vX2kL9pR4zzT"),
])
def test_a_command_asking_for_a_secret_after_such_a_trace_is_still_withheld(padding: str, command: str,
                                                                            value: str) -> None:
    text = f"{_trace(padding, 56_000)}{command}\n{value}\n"
    shown = sanitize_output(text.encode()).text
    assert value not in shown and "[REDACTED:" in shown.splitlines()[-1], shown[-300:]
