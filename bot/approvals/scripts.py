"""The Lua scripts that perform every lifecycle transition atomically.

One script per transition: it reads the current state, checks the guard, writes the new state, maintains the
indexes (awaiting / running sorted sets, the conversation's hash of open calls), appends the audit entry,
enqueues the run-stream entry (on approval) and the completion event (on a terminal state) -- all inside one
script, so no crash, retry or concurrent click can leave a half-done transition or a transition without its
audit line. Scripts answer with a status word the store maps to an exception, never with a Redis error, so a
script that wrote (e.g. expired a call on a late click) still reports what it did.

Common ARGV: 1 = shard key base (``fc:{s0}:``), 2 = now (epoch seconds), 3 = retention seconds, 4 = the
MINID under which stream entries are trimmed. Keys other than KEYS[1] are derived from the shard base, so they
share KEYS[1]'s hash slot (see ``keys.py``).
"""

from __future__ import annotations

from bot.approvals.scripts_handover import DEMOTE, HANDBACK, TAKE, UNPARK
from bot.approvals.scripts_prelude import PRELUDE

__all__ = ["APPROVE", "CANCEL", "CLAIM", "CLOSE", "CREATE", "DEMOTE", "FINISH", "HANDBACK", "HEARTBEAT", "INTERRUPT",
           "PRELUDE", "RELEASE", "SET_META", "TAKE", "UNPARK"]

# ARGV[5] = JSON list of {id, fields, body, target, actor, reason, decided[, grant, fallback_actor,
# fallback_reason]}: ``fields`` go into the call hash (empty values are not stored), ``body`` (a JSON string) is
# stored as is in the body key.
# Existing ids are left alone (idempotent). An item approved by a standing grant is checked against the grant
# here, atomically: a grant revoked or expired by now sends the call to awaiting_approval instead, and its
# signed token is dropped (no token of an approval that did not happen is left on the record).
CREATE = PRELUDE + r"""
local items = cjson.decode(ARGV[5])
local out = {}
for _, item in ipairs(items) do
  local f = item.fields
  local id = item.id
  local key = base .. 'call:' .. id
  if item.grant and redis.call('EXISTS', key) == 0 then
    local grant = base .. 'grant:' .. item.grant
    local until_ = redis.call('HGET', grant, 'expires_at')
    local revoked = redis.call('HGET', grant, 'revoked_by')
    if (not until_) or tonumber(until_) <= tonumber(now) or (revoked and revoked ~= '') then
      item.target, item.actor, item.reason, item.decided = 'awaiting_approval', item.fallback_actor,
        item.fallback_reason, false
      f.signed_decision = ''
    end
  end
  if redis.call('EXISTS', key) == 0 then
    for k, v in pairs(f) do
      if v ~= '' then redis.call('HSET', key, k, v) end
    end
    redis.call('SET', base .. 'body:' .. id, item.body)
    if item.decided then
      decide(key, item.actor, item.reason)
    end
    move(key, id, 'proposed', item.target, item.actor, item.reason)
  end
  out[#out + 1] = handed[id] or record(id)  -- an auto-approved call handed over: the record it was pushed with
end
return out
"""

# KEYS[1] = call; ARGV[5] id, 6 user, 7 argv hash or '', 8 approvals needed now, 9 reason,
# 10 the approver ids the token in 11 was signed for (newline-joined; '*' = this store signs nothing),
# 11 the signed decision token, 12 the approval's seal (seals.py; '' without a signer).
# The approval that completes the call must carry a token signed for exactly
# the approvers recorded; otherwise nothing is written and the caller re-signs for the ids returned.
APPROVE = PRELUDE + r"""
local key = KEYS[1]
local id = ARGV[5]
local user = ARGV[6]
-- everything the checks below read, in one call (each redis.call costs the script more than its command)
local call = redis.call('HMGET', key, 'state', 'approvals', 'expires_at', 'argv_hash', 'approvals_needed')
local state = call[1]
if not state then return {'not_found'} end
local approvals = cjson.decode(call[2] or '[]')
local function approved_by(user)
  for _, a in ipairs(approvals) do
    if a.user == user then return true end
  end
  return false
end
if state ~= 'awaiting_approval' then
  -- the same approver again (a double click, or confirming an approval no replica had acknowledged): it took
  -- effect, so it is answered as such, with a write for the WAIT to wait for
  if approved_by(user) and state ~= 'denied' and state ~= 'expired' and state ~= 'rejected' then
    confirm_write()
    return {'repeat', record(id)}
  end
  return {'invalid', state}
end
if tonumber(call[3]) <= tonumber(now) then
  close_expired(key, id)
  return {'invalid', 'expired'}
end
if ARGV[7] ~= '' and ARGV[7] ~= call[4] then return {'argv_mismatch'} end
if approved_by(user) then
  confirm_write()
  return {'already', user}
end
approvals[#approvals + 1] = {user=user, at=now, seal=ARGV[12]}
-- approvals_needed is not stored when it is 1 (records.new_call)
local needed = math.max(tonumber(ARGV[8]), tonumber(call[5] or '1'))
if #approvals >= needed then
  -- the token, the approvals and the decision in one write (the fields in the order they were written one by one)
  local fields = {}
  if ARGV[10] ~= '*' then
    local ids = {}
    for _, a in ipairs(approvals) do ids[#ids + 1] = a.user end
    local signed_for = table.concat(ids, '\n')
    if ARGV[11] == '' or ARGV[10] ~= signed_for then return {'resign', signed_for} end
    fields = {'signed_decision', ARGV[11]}
  end
  fields[#fields + 1] = 'approvals'
  fields[#fields + 1] = cjson.encode(approvals)
  fields[#fields + 1] = 'decision'
  fields[#fields + 1] = cjson.encode({actor=user, at=now, reason=ARGV[9]})  -- as decide() writes it
  redis.call('HSET', key, unpack(fields))
  move(key, id, state, 'approved', user, ARGV[9])
else
  redis.call('HSET', key, 'approvals', cjson.encode(approvals), 'updated_at', now)
  keep_call(id)
  audit(id, state, state, user, 'approval ' .. #approvals .. ' of ' .. needed)
end
return {'ok', handed[id] or record(id)}
"""

# KEYS[1] = call; ARGV[5] id, 6 actor, 7 reason, 8 comma-separated allowed states, 9 target state,
# 10 mode: 'live' (a late click on an expired card expires it), 'due' (only if expires_at <= now), 'any'.
CLOSE = PRELUDE + r"""
local key = KEYS[1]
local id = ARGV[5]
local state = redis.call('HGET', key, 'state')
if not state then return {'not_found'} end
local allowed = false
for s in string.gmatch(ARGV[8], '[^,]+') do
  if s == state then allowed = true end
end
if not allowed then return {'invalid', state} end
if state == 'awaiting_approval' and ARGV[10] ~= 'any' then
  local due = expired_now(key)
  if ARGV[10] == 'due' and not due then return {'invalid', state} end
  if ARGV[10] == 'live' and due then
    close_expired(key, id)
    return {'invalid', 'expired'}
  end
end
decide(key, ARGV[6], ARGV[7])
move(key, id, state, ARGV[9], ARGV[6], ARGV[7])
return {'ok', record(id)}
"""

# KEYS[1] = call, KEYS[2] = heartbeat; ARGV[5] id, 6 runner id, 7 heartbeat ttl ms, 8 the claim's nonce (random,
# one per run entry a runner handles, reused by its retries; '' for none). The reply's third element is the state
# claimed from (what RELEASE goes back to). A retry whose first attempt's reply was lost (Redis ran it, the runner
# never heard back) finds the call running with its own runner id and nonce: it gets the record back as its claim
# (no second audit entry; its heartbeat is refreshed, a write the durability WAIT covers the first one with), so
# the call runs once instead of never. Any other runner, entry or nonce is refused as before. The nonce is kept
# in the 'claim' field with the state claimed from ("<nonce> <state>") only while the call runs (move and RELEASE
# delete it).
CLAIM = PRELUDE + r"""
local key = KEYS[1]
local id = ARGV[5]
local nonce = ARGV[8] or ''
local state = redis.call('HGET', key, 'state')
if not state then return {'not_found'} end
if state == 'running' and nonce ~= '' and redis.call('HGET', key, 'runner') == ARGV[6] then
  local held = redis.call('HGET', key, 'claim') or ''
  local mine, was = string.match(held, '^(%S+) (%S+)$')
  if mine == nonce then
    redis.call('SET', KEYS[2], ARGV[6], 'PX', ARGV[7])
    return {'ok', record(id), was}
  end
end
if state ~= 'approved' and state ~= 'auto_approved' then return {'invalid', state} end
if nonce ~= '' then
  redis.call('HSET', key, 'runner', ARGV[6], 'started_at', now, 'claim', nonce .. ' ' .. state)
else
  redis.call('HSET', key, 'runner', ARGV[6], 'started_at', now)
end
redis.call('SET', KEYS[2], ARGV[6], 'PX', ARGV[7])
move(key, id, state, 'running', 'runner:' .. ARGV[6], 'claimed')
return {'ok', record(id), state}
"""

# KEYS[1] = call, KEYS[2] = heartbeat; ARGV[1] runner id, 2 ttl ms. Returns 1 if still ours and running, 2 if
# so and a human asked to stop it (the runner then signals the process), 0 if no longer ours.
HEARTBEAT = r"""
if redis.call('HGET', KEYS[1], 'state') ~= 'running' then return 0 end
if redis.call('HGET', KEYS[1], 'runner') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
local cancel = redis.call('HGET', KEYS[1], 'cancel')
if cancel and cancel ~= '' then return 2 end
return 1
"""

# KEYS[1] = call; ARGV[5] id, 6 user, 7 reason. The one place a stop request meets the call's own progress, so
# a cancel racing the call's end has exactly one outcome: approved but not claimed -> cancelled now (it never
# runs: the claim refuses it); running -> the request is recorded and the owning runner stops the process
# (its FINISH then says whether the stop or the tool's own exit came first); anything else -> 'invalid' with
# the state the call reached first.
CANCEL = PRELUDE + r"""
local key = KEYS[1]
local id = ARGV[5]
local state = redis.call('HGET', key, 'state')
if not state then return {'not_found'} end
local request = cjson.encode({actor=ARGV[6], at=now, reason=ARGV[7]})
local list, item = nil, nil
if state == 'running' then list, item = waiting_handover(key, id) end
if list then  -- handed over, and its runner has not taken it: it never started, so it is cancelled now
  redis.call('LREM', list, 1, item)
end
if list or state == 'approved' or state == 'auto_approved' then
  redis.call('HSET', key, 'cancel', request, 'result',
             cjson.encode({status='cancelled', error='cancelled before it started; it never ran'}))
  move(key, id, state, 'cancelled', ARGV[6], ARGV[7])
  return {'ok', record(id)}
end
if state ~= 'running' then return {'invalid', state} end
local earlier = redis.call('HGET', key, 'cancel')
if earlier and earlier ~= '' then return {'already', cjson.decode(earlier).actor} end
redis.call('HSET', key, 'cancel', request, 'updated_at', now)
audit(id, state, state, ARGV[6], 'cancel requested: ' .. ARGV[7])
progress(id, redis.call('HGET', key, 'conversation'), state)
keep_call(id)
return {'ok', record(id)}
"""

# KEYS[1] = call; ARGV[5] id, 6 runner id, 7 final state, 8 result JSON, 9 reason; optional: 10 the run stream's
# consumer group and 11 the run entry that brought the call (acknowledged here, whatever the answer: the call was
# claimed, so the entry has done its work; one round trip fewer per call; and deleted, with the decision token it
# carries), 12 '1' to answer without the record
# (a caller that does not read it: the runner worker).
FINISH = PRELUDE + r"""
local key = KEYS[1]
local id = ARGV[5]
if ARGV[10] and ARGV[10] ~= '' then
  redis.call('XACK', base .. 'run', ARGV[10], ARGV[11])
  redis.call('XDEL', base .. 'run', ARGV[11])  -- done with: its decision token is not kept for the retention
end
local function answer(status)
  if ARGV[12] == '1' then return {status} end
  return {status, record(id)}
end
local state = redis.call('HGET', key, 'state')
if not state then return {'not_found'} end
if state ~= 'running' or redis.call('HGET', key, 'runner') ~= ARGV[6] then
  -- this runner's result stored already (a retry because no replica had acknowledged it): confirm it
  if state == ARGV[7] and redis.call('HGET', key, 'runner') == ARGV[6] then
    confirm_write()
    return answer('repeat')
  end
  return {'invalid', state}
end
redis.call('HSET', key, 'result', ARGV[8])
local actor, reason = 'runner:' .. ARGV[6], ARGV[9]
local cancel = redis.call('HGET', key, 'cancel')
if cancel and cancel ~= '' then
  local who = cjson.decode(cancel).actor
  if ARGV[7] == 'cancelled' then
    actor, reason = who, 'stopped at the request of ' .. who .. ' (' .. ARGV[9] .. ')'
  else
    reason = reason .. '; the stop requested by ' .. who .. ' came after the call had ended'
  end
elseif ARGV[7] == 'cancelled' then
  return {'invalid', 'not_cancelled'}
end
move(key, id, state, ARGV[7], actor, reason)
return answer('ok')
"""

# KEYS[1] = call, KEYS[2] = heartbeat; ARGV[5] id, 6 runner id, 7 the state claimed from (approved or
# auto_approved), 8 reason. A claim no replica acknowledged is given back before anything started: running -> the
# state it was claimed from, with no new run entry (the runner leaves its entry pending, so a runner takes it over
# later), or -> cancelled when a stop was asked for meanwhile (it never ran).
RELEASE = PRELUDE + r"""
local key = KEYS[1]
local id = ARGV[5]
local state = redis.call('HGET', key, 'state')
if not state then return {'not_found'} end
if state ~= 'running' or redis.call('HGET', key, 'runner') ~= ARGV[6] then return {'invalid', state} end
if ARGV[7] ~= 'approved' and ARGV[7] ~= 'auto_approved' then return {'invalid', ARGV[7]} end
redis.call('DEL', KEYS[2])
local cancel = redis.call('HGET', key, 'cancel')
if cancel and cancel ~= '' then
  redis.call('HSET', key, 'result',
             cjson.encode({status='cancelled', error='cancelled before it started; it never ran'}))
  move(key, id, state, 'cancelled', cjson.decode(cancel).actor, 'stopped before it started')
  return {'ok', record(id)}
end
redis.call('HDEL', key, 'runner', 'started_at', 'claim')
redis.call('HSET', key, 'state', ARGV[7], 'updated_at', now)
redis.call('ZREM', base .. 'running', id)
audit(id, state, ARGV[7], 'runner:' .. ARGV[6], ARGV[8])
progress(id, redis.call('HGET', key, 'conversation'), ARGV[7])
keep_call(id)
return {'ok', record(id)}
"""

# KEYS[1] = call, KEYS[2] = heartbeat; ARGV[5] id, 6 actor, 7 reason, 8 '1' = only if the heartbeat is gone,
# 9 result JSON
INTERRUPT = PRELUDE + r"""
local key = KEYS[1]
local id = ARGV[5]
local state = redis.call('HGET', key, 'state')
if not state then return {'not_found'} end
if state ~= 'running' then return {'invalid', state} end
if ARGV[8] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then return {'invalid', state} end
-- a hand-over its runner never took did not start: HANDBACK gives it back, the sweeper does not interrupt it
if ARGV[8] == '1' and waiting_handover(key, id) then return {'invalid', state} end
redis.call('HSET', key, 'result', ARGV[9])
move(key, id, state, 'interrupted', ARGV[6], ARGV[7])
return {'ok', record(id)}
"""

# KEYS[1] = call; ARGV = field, value, field, value... Only on an existing record (no stray keys).
SET_META = r"""
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""
