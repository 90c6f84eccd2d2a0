"""An echoed command that asks for a secret's value, and the bare value after it (issue #11, ``vendors``): the argv
judge of the runner (``secret_argv``) reads a command line the text shows after a prompt sign, and the lines it
printed are withheld up to the next echoed command or ``MAX_WITHHELD_LINES`` lines."""

from __future__ import annotations

import pytest

from bot.sanitize import redact, sanitize_output
from bot.sanitize.echoed import FREE_JUDGEMENTS, MAX_WITHHELD_LINES

VALUE = "Xk9#mQ2zLp7!vB"


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("$ terraform output -raw admin_password", "echoed_secret_field"),
        ("+ vault kv get -field=password secret/prod/db", "echoed_secret_field"),
        ("++ printenv DB_PASSWORD", "echoed_secret_command"),
        ("# kubectl get secret db -o jsonpath='{.data.password}'", "echoed_secret_query"),
        ("$ sudo -E env AWS_PROFILE=prod aws secretsmanager get-secret-value --secret-id db --query SecretString "
         "--output text", "echoed_secret_command"),
        ("$ aws ssm get-parameter --name /prod/db --with-decryption", "echoed_secret_reveal"),
    ],
)
def test_the_value_after_an_echoed_secret_command_is_withheld(command: str, kind: str) -> None:
    text = f"{command}\n{VALUE}\n$ echo done\ndone\n"
    assert redact(text) == (f"{command}\n[REDACTED:{kind}]\n$ echo done\ndone\n", 1)


def test_every_line_up_to_the_next_echoed_command_and_no_further() -> None:
    text = f"+ vault kv get -field=password secret/db\n{VALUE}\n\nsecond {VALUE}\n+ make deploy\nok\n"
    shown, count = redact(text)
    assert count == 2 and VALUE not in shown
    assert shown.endswith("\n\n[REDACTED:echoed_secret_field]\n+ make deploy\nok\n")


def test_the_lines_withheld_are_bounded() -> None:
    rows = "".join(f"line{i} x\n" for i in range(MAX_WITHHELD_LINES + 5))
    shown, count = redact("$ terraform output -raw admin_password\n" + rows)
    assert count == MAX_WITHHELD_LINES
    assert shown.endswith(f"line{MAX_WITHHELD_LINES} x\n" + "".join(
        f"line{i} x\n" for i in range(MAX_WITHHELD_LINES + 1, MAX_WITHHELD_LINES + 5)))


def test_every_text_is_judged_again() -> None:
    """The echoed line is a branch of the token pass, whose rejections are remembered across texts: a remembered
    rejection would leave the next text's value shown."""
    text = f"$ terraform output -raw admin_password\n{VALUE}\n"
    for _ in range(3):
        assert redact(text)[1] == 1
        assert VALUE not in sanitize_output(text.encode()).text


def test_a_token_on_the_echoed_line_is_still_found() -> None:
    ghp = "ghp_" + "A1b2C3d4E5" * 4
    shown, count = redact(f"$ GITHUB_TOKEN={ghp} gh secret list --json name,value --jq .value\nx\n")
    assert ghp not in shown and "[REDACTED:github_token]" in shown


@pytest.mark.parametrize(
    "text",
    [
        "$ terraform output -raw endpoint\ndb.acme.internal\n",
        "$ kubectl get secrets\nNAME   TYPE     DATA   AGE\ndb     Opaque   2      3d\n",
        "# show the password policy below\nminimum length 12\n",
        "+ echo reading the token file\nreading the token file\n",
        "see $ terraform output -raw admin_password in the docs\nnext line\n",
        "$ vault kv get -field=username secret/db\norders\n",
    ],
)
def test_commands_that_do_not_ask_for_a_secret_leave_their_output(text: str) -> None:
    assert redact(text) == (text, 0)


def test_echoed_commands_past_their_budget_withhold_what_follows_them() -> None:
    """Judging an echoed command costs tens of microseconds: a text may have ``FREE_JUDGEMENTS`` of them judged (plus
    one per ``BYTES_PER_JUDGEMENT`` bytes), and one past that is withheld unjudged (fails closed), so padding a text
    with other commands does not let a real one's value through (found by review: 1.5 MB/s on such a text)."""
    padding = "".join(f"$ tofu output out{i}\n" for i in range(FREE_JUDGEMENTS + 50))
    text = padding + f"$ terraform output -raw admin_password\n{VALUE}\n"
    shown, _ = redact(text)
    assert VALUE not in shown and shown.startswith(padding[:200])
    # a harmless command's verdict is remembered: the same line again and again is judged once, and shows
    repeated = "$ terraform output -raw db_host\ndb.internal\n" * (FREE_JUDGEMENTS + 50)
    assert redact(repeated) == (repeated, 0)


@pytest.mark.parametrize("line", ["+ read -r line\n+ :\n", "$ git show HEAD\n"])
def test_a_repeated_set_x_trace_passes_byte_identical(line: str) -> None:
    """Lines that start with a prompt sign and hold a bare word some shape uses (``read``, ``show``) are no echoed
    secret command: 64 KiB of them drew ``dense_candidates`` markers while every such line was a hint."""
    text = line * (65536 // len(line))
    assert redact(text) == (text, 0)
    assert sanitize_output(text.encode()).text == text


def test_a_token_on_a_withheld_line_is_one_marker_with_the_line() -> None:
    ghp = "ghp_" + "A1b2C3d4E5" * 4
    shown, count = redact(f"$ terraform output -raw admin_password\n{ghp} {VALUE}\n$ make\n")
    assert shown == "$ terraform output -raw admin_password\n[REDACTED:echoed_secret_field]\n$ make\n" and count == 1
