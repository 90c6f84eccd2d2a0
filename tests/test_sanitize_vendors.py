"""Vendor tokens that name themselves by a prefix (issue #11, ``vendors``): each shape is found alone in a log line,
with its own kind, and what only resembles one (too short, glued into a word, a name about the token) stays."""

from __future__ import annotations

import pytest

from bot.sanitize import redact
from tests.corpora import leaks_vendors as v

KINDS = [
    (v.doppler_service, "doppler_token"), (v.doppler_personal, "doppler_token"), (v.doppler_cli, "doppler_token"),
    (v.doppler_account, "doppler_token"), (v.doppler_scim, "doppler_token"), (v.doppler_audit, "doppler_token"),
    (v.linear, "linear_key"), (v.linear_oauth, "linear_key"), (v.terraform, "terraform_token"),
    (v.sentry_org, "sentry_token"), (v.sentry_user, "sentry_token"), (v.grafana_cloud, "grafana_token"),
    (v.databricks, "databricks_token"), (v.postman, "postman_key"), (v.pulumi, "pulumi_token"),
    (v.buildkite, "buildkite_token"), (v.tailscale, "tailscale_key"), (v.planetscale, "planetscale_token"),
    (v.planetscale_pw, "planetscale_token"),
]


@pytest.mark.parametrize(("token", "kind"), KINDS, ids=[kind + str(i) for i, (_, kind) in enumerate(KINDS)])
def test_a_vendor_token_alone_is_redacted_whole_with_its_kind(token: str, kind: str) -> None:
    text = f"retrying with {token} (attempt 2)\n"
    assert redact(text) == (f"retrying with [REDACTED:{kind}] (attempt 2)\n", 1)


@pytest.mark.parametrize(
    "text",
    [
        "doppler setup --config dp.st.prd\n",  # a config's name after the prefix, no 40-character secret
        "dp.pt." + "a" * 39 + "\n",  # one character short
        "lin_api_" + "A1b2" * 9 + "\n",  # 36: short of Linear's 40
        "berlin_api_" + "A1b2" * 10 + "\n",  # glued into a longer identifier
        "run-CZcmD7eagjhyXavN.atlasv2." + "x" * 64 + "\n",  # not atlasv1
        "dapi" + "0123456789abcdef" * 2 + "0\n",  # 33 hex: not Databricks' 32
        "dapi" + "0123456789abcdeg" * 2 + "\n",  # not hex
        "pul-request merged: " + "0" * 39 + "\n",
        "bkua_runner_01 registered\n",
        "PMAK-import-2024 ran\n",
        "tskey-auth-... expired\n",
        "pscale_tkn_id=svc-deploy-01\n",
        "sntrys_ (org acme) valid\n",
        "glc_metrics_prod updated\n",
    ],
)
def test_what_only_resembles_a_vendor_token_stays(text: str) -> None:
    assert redact(text) == (text, 0)


def test_a_fixed_length_token_stops_at_its_length() -> None:
    """A Databricks, Postman, Pulumi or Buildkite token has one length: what is glued after it is no part of it."""
    assert redact(f"see {v.databricks}.log\n") == ("see [REDACTED:databricks_token].log\n", 1)
    assert redact(f"{v.pulumi}/stack\n") == ("[REDACTED:pulumi_token]/stack\n", 1)


@pytest.mark.parametrize(("token", "kind"), [*KINDS, ("AKIAIOSFODNN7EXAMPL2", "aws_access_key_id")])
@pytest.mark.parametrize("before", ["é", "日本語", "naïve:", "→"])
def test_a_token_right_after_a_multi_byte_character_is_redacted(token: str, kind: str, before: str) -> None:
    """RE2 reads the boundary class before a token (``[^A-Za-z0-9_-]``) as one character, two to four bytes here, and
    the pass's Python parser read it as one byte, so the candidate could not be parsed and the token showed (found
    by review; the parser now reads such a boundary as a UTF-8 character)."""
    shown, _ = redact(f"{before}{token} done\n")
    assert token[-12:] not in shown and f"[REDACTED:{kind}]" in shown, shown


@pytest.mark.parametrize("around", ["`{}`", "{{{}}}", "|{}|", "~{}"])
def test_a_token_after_punctuation_past_the_boundary_class_dash_is_redacted(around: str) -> None:
    # "[^A-Za-z0-9_-]" read as UTF-8 must not turn "_-" into a range with the non-ASCII bytes added after it
    token = "ghp_" + "A1b2C3d4E5" * 4
    shown, _ = redact(around.format(token) + "\n")
    assert "A1b2C3d4E5" not in shown, shown
