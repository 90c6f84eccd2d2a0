"""Each rule of the approval policy, without Redis."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from bot.approvals.errors import NotAuthorized, PolicyError
from bot.approvals.policy import ApprovalPolicy, StandingApprovals
from bot.approvals.records import CallRecord, CallState


def record(tags: list[str] | None = None, requester: str = "U_REQ") -> CallRecord:
    now = datetime.now(UTC)
    return CallRecord(
        id="0-x", conversation="c", tool="t", app="a", arguments="{}", argv=["t"], argv_hash="h",
        requester=requester, tool_tags=tags or [], state=CallState.awaiting_approval,
        created_at=now, expires_at=now, updated_at=now,
    )


def test_default_everything_needs_approval():
    assert ApprovalPolicy().decide_trigger("anything", []) == (True, "default policy")


def test_auto_approve_by_regex_and_tag():
    p = ApprovalPolicy(auto_approve={"tools": ["^opsctl_(status|list)"], "tags": ["impact:ro"]})
    needs, trigger = p.decide_trigger("opsctl_status_host", [])
    assert not needs and trigger == "auto_approve rule tools[0] '^opsctl_(status|list)'"
    assert p.decide_trigger("opsctl_restart", ["impact:ro"]) == (False, "auto_approve rule tag impact:ro")
    assert p.decide_trigger("opsctl_restart", []) == (True, "default policy")


def test_confirm_wins_over_auto_approve():
    p = ApprovalPolicy(auto_approve={"tools": [".*"]}, confirm_tags=["impact:rw"], two_person_tags=["prod"])
    assert p.decide_trigger("x", ["ai:confirm"]) == (True, "ai:confirm")
    assert p.decide_trigger("x", ["impact:rw"]) == (True, "confirm tag impact:rw")
    assert p.decide_trigger("x", ["prod"]) == (True, "two-person tag prod")
    assert p.decide_trigger("x", ["ai:deny"])[0] is True


def test_invalid_regex_names_the_rule():
    with pytest.raises(ValidationError, match=r"auto_approve.tools\[1\]: invalid regex '\('"):
        ApprovalPolicy(auto_approve={"tools": ["ok", "("]})


def test_unknown_keys_and_empty_per_tag_refused():
    with pytest.raises(ValidationError):
        ApprovalPolicy.model_validate({"aproovers": {"users": ["U"]}})
    with pytest.raises(ValidationError, match="per_tag.rw"):
        ApprovalPolicy(per_tag={"rw": {}})


def test_empty_approvers_means_anyone():
    ApprovalPolicy().check_approver(record(), "U_ANYONE", [])


def test_global_allowlist_users_and_groups():
    p = ApprovalPolicy(approvers={"users": ["U1"], "groups": ["S1"]})
    p.check_approver(record(), "U1", [])
    p.check_approver(record(), "U2", ["S1"])
    with pytest.raises(NotAuthorized):
        p.check_approver(record(), "U3", ["S2"])


def test_per_tag_narrows():
    p = ApprovalPolicy(approvers={"groups": ["S_ONCALL"]}, per_tag={"db": {"users": ["U_DBA"]}})
    p.check_approver(record(["db"]), "U_DBA", ["S_ONCALL"])
    with pytest.raises(NotAuthorized, match="tagged db"):
        p.check_approver(record(["db"]), "U_OTHER", ["S_ONCALL"])
    with pytest.raises(NotAuthorized):  # per-tag does not widen the global list
        p.check_approver(record(["db"]), "U_DBA", [])
    p.check_approver(record(["web"]), "U_OTHER", ["S_ONCALL"])


def test_self_approval_rule():
    with pytest.raises(NotAuthorized, match="self-approval"):
        ApprovalPolicy(forbid_self_approval=True).check_approver(record(), "U_REQ", [])
    ApprovalPolicy().check_approver(record(), "U_REQ", [])


def test_approvals_needed():
    p = ApprovalPolicy(two_person_tags=["prod"])
    assert p.approvals_needed(record(["prod", "x"])) == 2
    assert p.approvals_needed(record(["x"])) == 1
    assert p.approvals_needed(["prod"]) == 2


def test_standing_durations_offered_and_accepted() -> None:
    odd = StandingApprovals(default_minutes=45, max_minutes=90)
    assert odd.choices() == [15, 30, 45, 60]  # the default is always offered, nothing over max_minutes
    assert odd.chosen_minutes(None) == odd.chosen_minutes("") == 45  # no choice: the default
    assert odd.chosen_minutes("90") == 90 and odd.chosen_minutes("1") == 1
    for bad in ("91", "0.99", "inf", "nan", "1e9", "-30", "soon"):
        with pytest.raises(PolicyError):
            odd.chosen_minutes(bad)
    short = StandingApprovals(default_minutes=0.5, max_minutes=10)  # an operator may set a default under a minute
    assert short.chosen_minutes("0.5") == 0.5 and short.choices() == [0.5]
