"""Approval cards of argv items whose secret only the reading without invisible characters finds (issue #11,
accept6's ``slack-token-split-by-shy``): the whole span that reading hides is hidden in the item as it is, the
invisible characters inside it included, for every token kind; look-alikes are shown as they are, escaped. And
nmcli's ``-s`` (``--show-secrets``) makes its output withheld (accept6's ``nmcli-show-secrets``), and so does a
grep of ppp's chap-secrets or pap-secrets (accept6's ``keepalived-auth-pass``)."""

from __future__ import annotations

import shlex

import pytest

from bot.sanitize import redact
from bot.sanitize.argv import display_command_line, redact_argv
from bot.sanitize.secret_argv import judge_argv

INVISIBLES = {"zwsp": "\u200b", "zwj": "\u200d", "shy": "\u00ad", "vs16": "\ufe0f"}
SLACK_HEAD, SLACK_TAIL = "xoxb-123456789012-1234567890123-", "Qw7Rt2Yp9Lk3Hs6Df1Gj8Zx4"
TOKENS = {
    # (head, tail): the invisible character goes between them; the tail is what must not show
    "slack": (SLACK_HEAD, SLACK_TAIL),
    "slack-mid": ("xoxb-123456789012-1234567890123-Qw7Rt2Yp", "9Lk3Hs6Df1Gj8Zx4"),
    "github": ("ghp_Ab3De6Gh9Jk2", "Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6"),
    "aws": ("AKIAQ7RT", "2YP9LK3HS6DF"),
    "stripe": ("sk_live_4eC39HqLyjW", "DarjtT1zdp7dcQz8Wq3"),
}


@pytest.mark.parametrize("invisible", INVISIBLES)
@pytest.mark.parametrize("token", TOKENS)
def test_a_token_split_by_an_invisible_character_is_hidden_whole(token: str, invisible: str) -> None:
    head, tail = TOKENS[token]
    item = f"token={head}{INVISIBLES[invisible]}{tail}"
    text, warns = display_command_line(["curl", "-d", item, "https://api.example.com/x"])
    assert warns
    assert tail not in text and head[-6:] not in text and "[REDACTED:" in text
    assert text.startswith("curl -d 'token=[REDACTED:") and text.endswith("' https://api.example.com/x")
    shown = redact_argv(["curl", "-d", item])[2]
    assert tail not in shown and shown.startswith("token=[REDACTED:")


@pytest.mark.parametrize("invisible", INVISIBLES)
def test_a_password_after_its_flag_split_by_an_invisible_character_is_hidden_whole(invisible: str) -> None:
    text, warns = display_command_line(["opsctl", f"--password=Tr0ub4dor{INVISIBLES[invisible]}Horse9"])
    assert warns and "Tr0ub4dor" not in text and "Horse9" not in text
    assert text.startswith("opsctl '--password=[REDACTED:")


def test_the_invisible_characters_at_a_hidden_tokens_edge_go_under_its_marker() -> None:
    item = f"\u200b{SLACK_HEAD}\u00ad{SLACK_TAIL}\u200b"
    text, warns = display_command_line(["curl", "-d", item])
    assert warns and SLACK_TAIL not in text
    assert text.startswith("curl -d '[REDACTED:slack_token#") and text.endswith("]'")


def test_what_the_items_own_reading_hides_beside_the_tokens_span_stays_hidden() -> None:
    item = f"ghp_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6:{SLACK_HEAD}\u00ad{SLACK_TAIL}"
    text, _ = display_command_line(["x", item])
    assert "Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6" not in text and SLACK_TAIL not in text and "[REDACTED:" in text


@pytest.mark.parametrize("item", [
    "ghp_short\u200bthing", "AKIA\u00adnope", "xoxb-12-\u200dfoo", "sk_test\ufe0f_docs", "mode=fa\u200bst",
    "--pass\u200bive=yes", "release-2024\u00ad-notes",
])
def test_look_alikes_with_an_invisible_character_are_shown_unchanged_but_escaped(item: str) -> None:
    text, warns = display_command_line(["echo", item])
    assert warns and "[REDACTED" not in text
    escaped = item.encode("ascii", "backslashreplace").decode().replace("\\xad", "\\xad")
    assert escaped in text
    assert redact_argv(["echo", item])[1] == item


# nmcli's -s is its --show-secrets (accept6's nmcli-show-secrets): the PSK printed bare after an echoed command
# line, or by the argv the runner ran, is withheld; other programs' -s and nmcli without it are not read so.
NMCLI_PSK = "correct horse battery 9"


@pytest.mark.parametrize("command", [
    "$ nmcli -s -g 802-11-wireless.ssid,802-11-wireless-security.psk connection show office-5g",
    "user@host:~$ sudo nmcli -s connection show office",
    "+ nmcli connection show office -s",
    "$ nmcli --show-secrets -g 802-11-wireless-security.psk connection show office",
])
def test_nmcli_asked_for_its_secrets_has_its_output_withheld(command: str) -> None:
    shown, count = redact(f"{command}\nACME-Office\n{NMCLI_PSK}\n$ echo done\ndone\n")
    assert NMCLI_PSK not in shown and count == 2
    assert shown.endswith("[REDACTED:echoed_secret_reveal]\n$ echo done\ndone\n")
    argv = shlex.split(command.partition(" ")[2])
    assert judge_argv(argv[1:] if argv[0] == "sudo" else argv) is not None


@pytest.mark.parametrize("command", [
    "$ nmcli -g 802-11-wireless.ssid connection show office-5g", "$ nmcli -t -f NAME,TYPE connection show",
    "$ du -s -h /var", "$ ls -s /srv", "$ nmcli device status",
])
def test_other_s_flags_and_nmcli_without_it_leave_the_output_as_it_is(command: str) -> None:
    text = f"{command}\nACME-Office\n{NMCLI_PSK}\n"
    assert redact(text) == (text, 0)
    assert judge_argv(shlex.split(command.partition(" ")[2])) is None


CHAP_ROW = 'vpnuser  *  "Xk9mQ2zLp7vBw3Rt5y"  *'


@pytest.mark.parametrize("command", [
    "$ sudo grep -i secret /etc/ppp/chap-secrets", "+ grep vpnuser /etc/ppp/chap-secrets",
    "$ egrep -e vpn /etc/ppp/pap-secrets",
])
def test_a_grep_of_a_ppp_secrets_table_has_its_rows_withheld(command: str) -> None:
    shown, count = redact(f"{command}\n{CHAP_ROW}\n$ echo done\ndone\n")
    assert count == 1 and shown == f"{command}\n[REDACTED:echoed_secret_file]\n$ echo done\ndone\n"


@pytest.mark.parametrize("command", [
    "$ grep -c vpnuser /etc/ppp/chap-secrets", "$ grep -l vpnuser /etc/ppp/chap-secrets",
    "+ grep -q vpn /etc/ppp/chap-secrets", "$ grep -rl chap-secrets /etc", "$ ls -l /etc/ppp/chap-secrets",
    "$ grep -i secret /etc/app.conf", "$ grep vpnuser /etc/ppp/options",
])
def test_a_grep_printing_names_or_counts_or_of_another_file_leaves_the_output_as_it_is(command: str) -> None:
    text = f"{command}\n{CHAP_ROW}\n"
    assert redact(text) == (text, 0)
