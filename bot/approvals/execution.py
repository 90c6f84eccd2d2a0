"""The runner's side of a decision: verify the signed decision of a claimed call, then execute it.

Nothing reaches ``bot.runner`` without a decision that verifies (``decisions.py``); the binary digest the
runner checks the bytes against is the one from the verified token, not a field anyone with Redis access
could rewrite. Every refusal is counted (``fisk_chatops_decisions_refused_total``) and becomes the call's
``refused`` state, with the reason in the audit trail.
"""

from __future__ import annotations

from bot.approvals.decisions import DecisionRefused, DecisionVerifier
from bot.approvals.records import CallRecord
from bot.metrics import DECISIONS_REFUSED
from bot.runner.binary import BinarySnapshots
from bot.runner.call import ChildEnvironments, ExecutionLimits, execute_approved_call
from bot.runner.result import CallResult
from bot.sanitize import redact_argv
from bot.tools.catalog import Catalog


async def execute_decided_call(
    record: CallRecord,
    catalog: Catalog,
    limits: ExecutionLimits,
    verifier: DecisionVerifier,
    binaries: BinarySnapshots,
    environments: ChildEnvironments | None = None,
) -> CallResult:
    """Run ``record`` only if its decision verifies and its binary is the approved one."""
    try:
        claims = verifier.consume(record)
    except DecisionRefused as exc:
        DECISIONS_REFUSED.labels("decision").inc()
        display = redact_argv(list(record.argv), (), limits.redact_patterns)
        return CallResult(status="refused", argv_display=display, error=f"refused: {exc.reason}; not run")
    result = await execute_approved_call(
        catalog, record.tool, record.arguments, record.argv, limits, binaries, claims.binary_digest, environments
    )
    if result.status == "refused":
        DECISIONS_REFUSED.labels("binary").inc()
    return result
