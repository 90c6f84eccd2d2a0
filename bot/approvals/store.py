"""``CallStore``: the tool-call lifecycle in Redis.

Every public transition is one Lua script (see ``scripts.py``) guarded by the current state, so two clicks,
two replicas or a retried delivery can never approve twice or run twice. Authorization (who may approve) is
checked here in Python against the policy before the script runs; the script re-checks everything that can
race (state, argv hash, who already approved, expiry).

The store keeps no state in memory: any replica can serve any call.

Decisions are signed here, where they are made (``approve`` for a click, ``propose`` for a policy
auto-approval), with the ``signer`` of the deciding role; a store without one (a runner's) records unsigned
decisions, which no runner executes (see ``decisions.py``).

Approve, claim, finish, deny and cancel wait for a replica's acknowledgement when the primary has replicas
(``bot/redis_durable.py``, ``redis.durability``), so what a user is told survives a failover. When the wait falls
short, the write is on the primary only and ``NotDurable`` says so: an approval or a result is confirmed by
doing it again (the scripts recognise the repeat and write nothing new but a marker to wait for); a claim is
given back (``RELEASE``) before anything is started, because a runner that ran a call whose claim a failover
then lost would leave it ``approved`` on the new primary, for a second runner to run again. A denial is
raised as ``NotDurable`` too (its record attached: the denier is told a failover could undo it).

The operations live in three parts, one side of the lifecycle each, on a shared base (``store_base.py``:
settings, scripts, reads): ``store_creation.py`` (propose, reject), ``store_decisions.py`` (approve, deny,
cancel, stop requests, expiry) and ``store_runs.py`` (claim, heartbeat, result, interruption). Script replies
map to records and exceptions in ``replies.py``.
"""

from __future__ import annotations

from bot.approvals.store_creation import CallCreation
from bot.approvals.store_decisions import HumanDecisions
from bot.approvals.store_runs import RunTransitions


class CallStore(CallCreation, HumanDecisions, RunTransitions):
    """Atomic lifecycle operations on call records (see DESIGN.md, "The tool-call lifecycle")."""


__all__ = ["CallStore"]
