"""Approval policy: what needs a human, who may approve it, how many approvers.

Embedded in the application's YAML config under ``approval:``. Unknown keys are refused (``extra="forbid"``)
so a typo such as ``aproovers`` fails loudly instead of silently letting anyone approve.

Defaults are the safe ones: every call needs approval, approvals expire after 15 minutes. Where other people
can click (Slack), an empty approver list is refused at start-up unless the operator writes
``anyone_may_approve: true`` (a setting that widens access is written, never implied by an empty list), and the
requester may not approve their own call unless ``forbid_self_approval: false`` is written. The console (the
operator's own terminal, where the requester is the operator) keeps both open: see ``for_shared_workspace``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from bot.approvals.errors import NotAuthorized, PolicyError
from bot.approvals.records import CallRecord
from bot.tools.selection import DENY_TAG  # hides a tool from the model; checked here too as defence in depth

#: Tag a tool author sets to demand a human decision whatever the operator's rules say.
CONFIRM_TAG = "ai:confirm"


class ApproverSet(BaseModel):
    """Slack user ids and user-group ids; a user is in the set if listed or a member of a listed group."""

    model_config = ConfigDict(extra="forbid")

    users: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.users and not self.groups

    def allows(self, user_id: str, user_groups: Iterable[str]) -> bool:
        return user_id in self.users or bool(set(self.groups) & set(user_groups))


class AutoApprove(BaseModel):
    """Calls that run without a click: tool-name regexes (``re.search``) or tags."""

    model_config = ConfigDict(extra="forbid")

    tools: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)


CARD_MINUTES = (15.0, 30.0, 60.0, 120.0)  # what a card offers, up to approval.standing.max_minutes


class StandingApprovals(BaseModel):
    """``approval.standing``: an approver may approve a tool "for this thread" for a while (a grant). Off unless
    the operator turns it on: one click then approves calls nobody has seen yet, which widens what runs."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    default_minutes: float = Field(default=30, gt=0, description="how long a grant made from a card lasts")
    max_minutes: float = Field(default=120, gt=0, description="no grant lasts longer")
    allow_confirm_tags: bool = Field(
        default=False, description="also for tools tagged ai:confirm or a confirm tag (never two-person tools)"
    )

    @model_validator(mode="after")
    def _bounded(self) -> StandingApprovals:
        if self.default_minutes > self.max_minutes:
            raise PolicyError("approval.standing.default_minutes must not exceed approval.standing.max_minutes")
        return self

    def choices(self) -> list[float]:
        """The durations a card offers: the usual ones up to ``max_minutes``, and ``default_minutes`` always."""
        return sorted({m for m in CARD_MINUTES if m <= self.max_minutes} | {self.default_minutes})

    def chosen_minutes(self, chosen: str | None) -> float:
        """How long the grant an approver chose lasts: ``default_minutes`` when nothing was chosen, else a number
        of minutes from 1 to ``max_minutes`` (or the default itself). The value comes from the click's payload,
        which anyone can forge: anything else raises ``PolicyError`` so no longer grant is ever made."""
        if chosen is None or chosen == "":
            return self.default_minutes
        try:
            minutes = float(chosen)
        except ValueError:
            raise PolicyError(f"{chosen[:20]!r} is not a number of minutes") from None
        if minutes == self.default_minutes or 1 <= minutes <= self.max_minutes:
            return minutes
        raise PolicyError(f"a standing approval lasts from 1 to {self.max_minutes:g} minutes, not {minutes:g}")


class ApprovalPolicy(BaseModel):
    """The ``approval:`` section of the configuration."""

    model_config = ConfigDict(extra="forbid")

    approvers: ApproverSet = Field(default_factory=ApproverSet)
    per_tag: dict[str, ApproverSet] = Field(default_factory=dict)
    confirm_tags: list[str] = Field(default_factory=list)
    auto_approve: AutoApprove = Field(default_factory=AutoApprove)
    anyone_may_approve: bool = Field(
        default=False, description="with no approvers listed, anyone who sees a Slack card may approve it"
    )
    forbid_self_approval: bool | None = Field(
        default=None, description="the requester may not approve their own call; unset: true in Slack, false at "
        "the console"
    )
    two_person_tags: list[str] = Field(default_factory=list)
    expire_after_seconds: float = Field(default=900, gt=0)
    standing: StandingApprovals = Field(default_factory=StandingApprovals)

    _tool_patterns: list[re.Pattern[str]] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _compile(self) -> ApprovalPolicy:
        patterns = []
        for index, pattern in enumerate(self.auto_approve.tools):
            try:
                patterns.append(re.compile(pattern))
            except re.error as exc:
                raise PolicyError(
                    f"approval.auto_approve.tools[{index}]: invalid regex {pattern!r}: {exc}"
                ) from exc
        for tag, approvers in self.per_tag.items():
            if approvers.empty:
                raise PolicyError(
                    f"approval.per_tag.{tag}: list at least one user or group (an empty entry would let"
                    " nobody approve; remove the entry to fall back to the global approvers)"
                )
        if self.anyone_may_approve and not self.approvers.empty:
            raise PolicyError(
                "approval.anyone_may_approve: true contradicts the approvers listed in approval.approvers; keep one"
            )
        self._tool_patterns = patterns
        return self

    def for_shared_workspace(self) -> ApprovalPolicy:
        """The policy as a front end where other people click (Slack) applies it.

        Raises ``PolicyError`` (one line naming the setting) when nobody is listed as approver and the operator
        did not write ``anyone_may_approve: true``; self-approval is forbidden unless written otherwise.
        """
        if self.approvers.empty and not self.anyone_may_approve:
            raise PolicyError(
                "approval.approvers is empty: list the Slack users or user groups who may approve calls, or set "
                "approval.anyone_may_approve: true to let anyone who sees a card approve it"
            )
        if self.forbid_self_approval is not None:
            return self
        return self.model_copy(update={"forbid_self_approval": True})

    def decide_trigger(self, tool_name: str, tags: Iterable[str]) -> tuple[bool, str]:
        """Whether a call needs a human click, and the reason shown on the card and in the audit trail.

        Order matters: the confirm rules (``ai:confirm``, ``confirm_tags``, two-person tags) win over
        ``auto_approve`` because they express "a human must look at this", which an operator's broad
        auto-approve regex must not silently override.
        """
        tag_list = list(tags)
        if DENY_TAG in tag_list:
            return True, f"tag {DENY_TAG}"
        if CONFIRM_TAG in tag_list:
            return True, CONFIRM_TAG
        for tag in self.confirm_tags:
            if tag in tag_list:
                return True, f"confirm tag {tag}"
        for tag in self.two_person_tags:
            if tag in tag_list:
                return True, f"two-person tag {tag}"
        for index, pattern in enumerate(self._tool_patterns):
            if pattern.search(tool_name):
                return False, f"auto_approve rule tools[{index}] {pattern.pattern!r}"
        for tag in self.auto_approve.tags:
            if tag in tag_list:
                return False, f"auto_approve rule tag {tag}"
        return True, "default policy"

    def standing_refusal(self, tags: Iterable[str]) -> str | None:
        """Why a tool with these tags may not be approved "for this thread" (None when it may): never for a
        two-person tool (one person's grant would stand in for two), by default not for a tool that demands a
        human look at every call (``ai:confirm``, ``confirm_tags``)."""
        tag_list = list(tags)
        if not self.standing.enabled:
            return "standing approvals are turned off (approval.standing.enabled)"
        if DENY_TAG in tag_list:
            return f"the tool is tagged {DENY_TAG}"
        if set(tag_list) & set(self.two_person_tags):
            return "the tool needs two approvers for every call"
        confirm = CONFIRM_TAG in tag_list or bool(set(tag_list) & set(self.confirm_tags))
        if confirm and not self.standing.allow_confirm_tags:
            return "the tool needs a human decision for every call (ai:confirm or a confirm tag)"
        return None

    def check_approver(self, record: CallRecord, user_id: str, user_groups: Iterable[str]) -> None:
        """Raise ``NotAuthorized`` unless ``user_id`` may approve ``record``.

        The global allowlist applies to every call (empty = anyone); each ``per_tag`` entry matching one of
        the call's tags must ALSO allow the user, so a tag can only narrow who approves, never widen it.
        """
        groups = list(user_groups)
        if self.forbid_self_approval and user_id == record.requester:
            raise NotAuthorized("self-approval is forbidden: another person must approve this call")
        if not self.approvers.empty and not self.approvers.allows(user_id, groups):
            raise NotAuthorized(f"{user_id} is not an approver")
        for tag in record.tool_tags:
            allowed = self.per_tag.get(tag)
            if allowed is not None and not allowed.allows(user_id, groups):
                raise NotAuthorized(f"{user_id} may not approve calls tagged {tag}")

    def approvals_needed(self, record_or_tags: CallRecord | Iterable[str]) -> int:
        """2 when a tag of the call is in ``two_person_tags`` (two distinct approvers), else 1."""
        tags = record_or_tags.tool_tags if isinstance(record_or_tags, CallRecord) else list(record_or_tags)
        return 2 if set(tags) & set(self.two_person_tags) else 1
