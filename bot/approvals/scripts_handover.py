"""The Lua scripts of hand-overs that are not a transition of their own (see ``scripts.move`` for the hand-over
itself, and the README's *Hand-overs*)."""

from __future__ import annotations

from bot.approvals.scripts_prelude import PRELUDE

# KEYS[1] = call, KEYS[2] = heartbeat; ARGV[5] id, 6 reason, 7 '' (the sweeper) or the runner giving it back. A call
# handed over to a parked runner (move) that the runner has not taken from its list (it died while parked, or
# stopped): taken out of the list and given back, running -> the state it was claimed from, as a fresh run entry (or
# a hand-over to another parked runner, never the one giving it back). Once the runner took it, it may have
# started: 'taken', and the heartbeat rules apply (it stays in 'handoffs', never due again: the queue depth counts
# it as running without a run entry), unless that runner itself gives it back unstarted (ARGV[7]: no room, or
# stopping), in this one script: never pushed onto its list again, where its own wait would take it at once. A
# stop requested after it was taken cancels it here (it never ran).
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
elseif ARGV[7] ~= '' and ARGV[7] == runner then
  from = string.match(redis.call('HGET', key, 'handoff') or '', '^%S+ (%S+)$')
  if not from then return {'taken'} end  -- claimed from a run entry, not handed over: not given back here
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
