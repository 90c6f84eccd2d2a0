"""The Lua scripts of hand-overs that are not a transition of their own (see ``scripts.move`` for the hand-over
itself, and the README's *Hand-overs*)."""

from __future__ import annotations

from bot.approvals.scripts_prelude import PRELUDE

# KEYS[1] = call, KEYS[2] = heartbeat; ARGV[5] id, 6 reason, 7 '' (the sweeper) or the runner giving it back. A call
# handed over to a parked runner (move) that the runner has not taken (TAKE) is given back, whoever asks: still on
# its hand-over list (it died while parked, or stopped) or on its taken list (its wait moved it there and then the
# runner died, lost the reply, has no room or is stopping: it never started). Taken out of the list, running ->
# the state it was claimed from, as a fresh run entry (or a hand-over to another parked runner, never the one
# giving it back). Once the runner took it, it may have started: 'taken', and the heartbeat rules apply (it stays
# in 'handoffs', never due again: the queue depth counts it as running without a run entry). A stop requested
# while it waited is honoured here (it never ran).
HANDBACK = PRELUDE + r"""
local key = KEYS[1]
local id = ARGV[5]
local state = redis.call('HGET', key, 'state')
redis.call('ZREM', base .. 'handoffs', id)
if not state then return {'not_found'} end
if state ~= 'running' then return {'invalid', state} end
local runner = redis.call('HGET', key, 'runner') or ''
local list, item, from = waiting_handover(key, id)
if list then
  redis.call('LREM', list, 1, item)
else
  if redis.call('HEXISTS', key, 'handoff') == 1 then redis.call('ZADD', base .. 'handoffs', '+inf', id) end
  return {'taken'}
end
redis.call('DEL', KEYS[2])
local parked = redis.call('GET', base .. 'parked')
if parked and string.match(parked, '^(%S+)') == runner then redis.call('DEL', base .. 'parked') end
redis.call('HDEL', key, 'runner', 'started_at', 'handoff')
local cancel = redis.call('HGET', key, 'cancel')
if cancel and cancel ~= '' then
  local request = cjson.decode(cancel)
  local never_ran = {status='cancelled', error='cancelled before it started; it never ran'}
  redis.call('HSET', key, 'result', cjson.encode(never_ran))
  move(key, id, state, 'cancelled', request.actor, request.reason)
else
  move(key, id, state, from, 'runner:' .. runner, ARGV[6])
end
return {'ok', record(id)}
"""

# KEYS[1] = the shard's parked key; ARGV[1] runner id. Stops parking, unless another runner parked since.
UNPARK = r"""
local parked = redis.call('GET', KEYS[1])
if parked and string.match(parked, '^(%S+)') == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
"""

# KEYS[1] call, 2 heartbeat, 3 the runner's taken list; ARGV[1-4] the common ones, 5 call id, 6 runner id, 7
# heartbeat ttl ms, 8 nonce (random, one per handling: a retry whose first attempt's reply was lost is recognised).
# The runner whose hand-over waits on its taken list (moved there by a previous version's wait, or by DEMOTE) says
# it starts it, before it starts the child: the element leaves the taken list, so no hand-back can take the call
# any more (the heartbeat rules apply from here, as to a claim), and the heartbeat key is refreshed.
# 'gone' when the element is not there (given back, cancelled), 'invalid' when the call is not running for this
# runner as a hand-over it has not taken (the element is removed either way): then the runner does not start it.
# A stop requested while the element waited on its process's own list (before DEMOTE) ends it cancelled, never run.
TAKE = PRELUDE + r"""
local id = ARGV[5]
local runner = ARGV[6]
local key = KEYS[1]
local list = KEYS[3]
local found = nil
for _, item in ipairs(redis.call('LRANGE', list, 0, -1)) do
  if string.sub(item, 1, #id + 1) == id .. ' ' then found = item break end
end
local state = redis.call('HGET', key, 'state') or ''
local mine = state == 'running' and redis.call('HGET', key, 'runner') == runner
-- handed over to this runner and not taken yet: a call claimed from a run entry has no 'handoff', one taken has
-- none any more (an element copied onto the list by hand does not start it a second time)
local handed = string.sub(redis.call('HGET', key, 'handoff') or '', 1, #runner + 1) == runner .. ' '
if not found then
  if mine and ARGV[8] ~= '' and redis.call('HGET', key, 'claim') == ARGV[8] .. ' taken' then
    redis.call('SET', KEYS[2], runner, 'PX', ARGV[7])
    return {'ok'}
  end
  return {'gone', state}
end
redis.call('LREM', list, 1, found)
if not (mine and handed) then return {'invalid', state} end
local cancel = redis.call('HGET', key, 'cancel')
if cancel and cancel ~= '' then
  -- asked to stop while its process's own list held it (a stop request, as to a started call: see DEMOTE), and
  -- it has not started: it never runs
  local request = cjson.decode(cancel)
  local never_ran = {status='cancelled', error='cancelled before it started; it never ran'}
  redis.call('HSET', key, 'result', cjson.encode(never_ran))
  move(key, id, state, 'cancelled', request.actor, request.reason)
  return {'gone', 'cancelled'}
end
redis.call('SET', KEYS[2], runner, 'PX', ARGV[7])
redis.call('ZADD', base .. 'handoffs', '+inf', id)
redis.call('HSET', key, 'claim', ARGV[8] .. ' taken')
redis.call('HDEL', key, 'handoff')
return {'ok'}
"""

# KEYS[1] the runner process's own list of what its wait moved ('moved:<runner>:<token>'), 2 the runner's taken
# list, 3 the shard's hand-over index; ARGV[1] the element, 2 call id, 3 when it is due for the hand-back sweep.
# The runner process will not start this element at once (no free slot, stopping, an element it did not see
# itself move, a second element of one call): it says so in one step, moving it to its taken list, where a
# hand-over has not started until TAKE (so a stop cancels it there, the sweep may give it back after its time,
# TAKE and HANDBACK exclude each other). Only if the element is still on its own list: the call's end removed it
# otherwise (0). A retry whose first answer was lost finds it on the taken list already (1, nothing written).
DEMOTE = r"""
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then
  if redis.call('LPOS', KEYS[2], ARGV[1]) then return 1 end
  return 0
end
redis.call('RPUSH', KEYS[2], ARGV[1])
if redis.call('ZSCORE', KEYS[3], ARGV[2]) then redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2]) end
return 1
"""
