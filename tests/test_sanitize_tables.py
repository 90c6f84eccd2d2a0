"""A secret in a table's column (issue #11, ``vendors``): a header naming a secret's column makes that column's cells
in the rows below redacted when they look like secrets, until a blank line or a line that does not fit the table."""

from __future__ import annotations

import pytest

from bot.sanitize import redact, sanitize_output
from bot.sanitize.tables import FREE_LINES

KUBEADM = (
    "TOKEN                     TTL         EXPIRES                USAGES\n"
    "abcdef.0123456789abcdef   23h         2026-12-03T00:12:40Z   authentication,signing\n"
)


def test_a_bootstrap_token_under_token_is_redacted_and_the_other_columns_stay() -> None:
    shown, count = redact(KUBEADM)
    assert count == 1 and "0123456789abcdef" not in shown
    assert shown.endswith("[REDACTED:table_secret]   23h         2026-12-03T00:12:40Z   authentication,signing\n")


def test_every_text_with_the_same_header_is_read_again() -> None:
    """The header is found by the token pass, whose verdicts are remembered across texts: a remembered rejection of
    the header would hide the next table's tokens."""
    for _ in range(3):
        assert redact(KUBEADM)[1] == 1
        assert sanitize_output(KUBEADM.encode()).redactions == 1


def test_the_table_ends_at_a_blank_line_and_at_a_line_that_does_not_fit() -> None:
    after_blank = KUBEADM + "\nxK9mQ2zLp7vB3nR8   later output\n"
    assert redact(after_blank)[0].endswith("\nxK9mQ2zLp7vB3nR8   later output\n")
    after_prose = KUBEADM + "xK9mQ2zLp7vB3nR8 is the build id of this run\n"
    assert redact(after_prose)[0].endswith("\nxK9mQ2zLp7vB3nR8 is the build id of this run\n")


def test_a_separator_row_belongs_to_the_table() -> None:
    text = "NAME     SECRET\n----     ------\nci       xK9mQ2zLp7vB3nR8wT5y\n"
    assert redact(text) == ("NAME     SECRET\n----     ------\nci       [REDACTED:table_secret]\n", 1)


def test_a_misaligned_row_with_the_header_s_cell_count_is_read_by_position() -> None:
    text = "NAME  SECRET  AGE\nci-deploy-bot  xK9mQ2zLp7vB3nR8wT5y  3d\n"
    assert redact(text) == ("NAME  SECRET  AGE\nci-deploy-bot  [REDACTED:table_secret]  3d\n", 1)


def test_a_token_in_a_secret_column_keeps_its_own_kind_elsewhere_in_the_row() -> None:
    ghp = "ghp_" + "A1b2C3d4E5" * 4
    text = f"NAME     TOKEN                     OWNER\nci       xK9mQ2zLp7vB3nR8wT5y      {ghp}\n"
    shown, count = redact(text)
    assert count == 2 and "[REDACTED:github_token]" in shown and "[REDACTED:table_secret]" in shown


@pytest.mark.parametrize(
    "text",
    [
        "Key                  Value\n---                  -----\ntoken                s.notatoken\n",
        # a lower-case "header" is a row of a key/value table, not a header
        "token                none\ntoken_accessor       xK9mQ2zLp7vB3nR8wT5y\n",
        "NAME      SECRETS   AGE\ndefault   xK9mQ2zLp7vB3nR8wT5y   12d\n",  # Secrets: not a secret's column
        "NAME      SECRETNAME             AGE\ndefault   xK9mQ2zLp7vB3nR8wT5y   12d\n",
        "NAME      KEY                    AGE\ndefault   xK9mQ2zLp7vB3nR8wT5y   12d\n",
        "NAME   TOKEN    TTL\nci     <none>   24h\nbot    -        <forever>\nx      unset    2026-12-02 10:00\n",
        "USER   PASSWORD   LOCKED\napp    ********   no\nops    (hidden)   yes\n",
    ],
)
def test_tables_without_a_secret_in_a_secret_column_stay(text: str) -> None:
    assert redact(text) == (text, 0)


def test_many_headers_and_rows_are_read_once_each() -> None:
    """Hints inside a table already read are skipped, and every row is read once: a text of many tables with many
    header-like rows is cleaned whole (each table's secret found), not rescanned."""
    table = "NAME  TOKEN  AGE\n" + "ci  xK9mQ2zLp7vB3nR8wT5y  3d\n" * 50 + "\n"
    shown, count = redact(table * 5)  # within FREE_LINES (more short rows than that make a dense marker)
    assert count == 250 and "xK9mQ2z" not in shown


def test_a_token_right_after_a_secret_s_column_name_is_still_found() -> None:
    """The header's hint ends at the next column's first letter: the token pass resumes at that letter, so a token
    there (a key/value line, not a header) is still a candidate."""
    ghp = "ghp_" + "A1b2C3d4E5" * 4
    assert redact(f"Token  {ghp}\n") == ("Token  [REDACTED:github_token]\n", 1)
    assert redact(f"NAME  TOKEN  {ghp}\n") == ("NAME  TOKEN  [REDACTED:github_token]\n", 1)


def test_table_lines_past_their_budget_are_one_dense_marker_and_no_cell_shows() -> None:
    """Reading a row costs microseconds: a text may have ``FREE_LINES`` header and row lines read (plus one per
    ``BYTES_PER_LINE`` bytes); past that a dense marker covers the lines (fails closed), as the passes' own budget
    does (found by review: 3 MB/s on a header repeated on every line)."""
    rows = "".join(f"r{i}  aZ{i}9kQ2vL8pW4nR7s\n" for i in range(FREE_LINES * 2))
    shown, _ = redact("NAME  TOKEN\n" + rows)
    assert "9kQ2vL8pW4nR7s" not in shown and "[REDACTED:dense_candidates]" in shown
    assert shown.startswith("NAME  TOKEN\nr0  [REDACTED:table_secret]\n")


@pytest.mark.parametrize("name", ["api-example-com-tls-2024", "wildcard-prod-k8s-io-tls", "grafana-tls-v2",
                                  "letsencrypt-prod-7h2kq", "db-credentials-v2", "sh.helm.release.v1.web.v12",
                                  "default-token-x7k2p", "tls-4f3a9c2e"])
def test_a_secret_s_name_in_a_secret_column_stays(name: str) -> None:
    """``kubectl get certificates`` (cert-manager), External Secrets and service accounts list the Secret object's
    name under SECRET or TOKEN: a Kubernetes name with a word among its parts is no secret (found by review)."""
    header = "NAME                READY   SECRET                          AGE\n"
    text = f"{header}web                 True    {name:<32}2m\n"
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("value", ["4f3a9c2e1b7d0e5f6a8b9c0d1e2f3a4b5c6d7e8f", "0b5c9e1d-8a3f-4c2e-9d7b-6e5f4a3b2c1d",
                                   "q8x2-kd93-zm4t-77ab-x0p1"])
def test_a_generated_value_in_a_secret_column_is_still_redacted(value: str) -> None:
    text = f"NAME    SECRET                                      AGE\napp     {value:<44}3d\n"
    shown, count = redact(text)
    assert count == 1 and value not in shown


def test_a_lower_case_secret_word_between_blanks_is_no_header_hint() -> None:
    """A header writes its names with capitals (``_header_style``): ``password  x`` is no hint to read as one."""
    import re

    from bot.sanitize.tables import HEADER_HINT

    hint = re.compile(HEADER_HINT)
    assert hint.search("password  x\n") is None and hint.search("token  hvs.x  24h\n") is None
    assert hint.search("NAME  TOKEN  AGE\n") and hint.search("SID  Secret\n") and hint.search("x  API Key\n")


def test_remembered_headers_and_hints_give_the_verdicts_read_afresh_and_stay_bounded() -> None:
    """A header's columns and a hint's verdict are remembered by their bytes (a table printed again and again): the
    second reading of a table must hide what the first did, a psql table's too, and the memos start over when full
    instead of growing with every distinct header."""
    from bot.sanitize import psql_tables, tables

    psql = " name  | password\n-------+------------------\n alice | Xk9mQ2vL7pRt4wZ8\n"
    first = [redact(KUBEADM), redact(psql)]
    assert first[0][1] == 1 and first[1][1] == 1 and "Xk9mQ2vL7pRt4wZ8" not in first[1][0]
    assert [redact(KUBEADM), redact(psql)] == first
    for i in range(psql_tables.MEMO_ENTRIES + 10):
        redact(f"TOKEN{'  ' * (1 + i % 7)}TTL{i}\nabcdef.0123456789abcdef   23h\n")
        redact(f" name{' ' * (i % 9)}|  password\n------+---------\n a{i}   | Xk9mQ2vL7pRt4wZ8\n")
    assert 0 < len(tables._HEADERS) <= psql_tables.MEMO_ENTRIES
    assert 0 < len(tables._HINT_ENDS) <= psql_tables.MEMO_ENTRIES
    assert 0 < len(psql_tables._HEADERS) <= psql_tables.MEMO_ENTRIES
    assert [redact(KUBEADM), redact(psql)] == first
