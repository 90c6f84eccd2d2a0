# ruff: noqa: E501  (output lines as tools print them; splitting them would hide their shape)
"""The families ``accept6`` closed after its acceptance check (issue #11), each as the shape an operator meets from
several tools, not as the one string of the corpus. Each case goes through the public ``sanitize_output`` and must
lose every secret and keep every line without one byte-identical; each look-alike must come out byte-identical."""

from __future__ import annotations

import pytest

from bot.sanitize import sanitize_output

PW = "Zq7xK2mP9vL4wT8n"
TOKEN = "k3X9qLm2Wp8ZrT5vYc7NbQ4d"


def _hidden(text: str, *secrets: str) -> None:
    shown = sanitize_output(text.encode()).text
    assert [s for s in secrets if s in shown] == [] and "[REDACTED:" in shown, shown
    for before, after in zip(text.splitlines(), shown.splitlines(), strict=True):
        if not any(secret in before for secret in secrets):
            assert after == before, shown


def _whole(text: str) -> None:
    assert sanitize_output(text.encode()).text == text


# --- a user flag ends its line: the next line's first word is no "user:password" ------------------------------------

@pytest.mark.parametrize("text", [
    "$ grep -hoE '(https?|postgres)://[^ \"]+' docs/*.md | sort -u\nhttps://github.com/acme/platform/blob/main/docs/secrets.md#rotating-the-api-key\n",
    "$ cut -d' ' -f7 access.log | uniq -u\nhttp://127.0.0.1:9090/api/v1/query?query=up\n",
    "set -u\nroot:x:0:0:root:/root:/bin/bash\n",
    "$ ps -u\nUSER:PID\n",
])
def test_a_line_ending_in_a_user_flag_leaves_the_next_line_whole(text: str) -> None:
    _whole(text)


@pytest.mark.parametrize("text", [
    f"curl -u admin:{PW} https://nexus.acme.io/service/rest/v1/status\n",
    f"curl -u\tadmin:{PW} https://nexus.acme.io/\n",
    f"curl --user=admin:{PW} https://nexus.acme.io/\n",
    f"wget --user ci:{PW} https://files.acme.io/x.tgz\n",
])
def test_the_user_flag_with_its_value_on_the_same_line_is_still_hidden(text: str) -> None:
    _hidden(text, PW)

