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

# KEYS[1] call, 2 heartbeat, 3 the runner's taken list; ARGV[1] shard base, 2 call id, 3 runner id, 4 heartbeat
# ttl ms, 5 nonce (random, one per handling: a retry whose
# first attempt's reply was lost is recognised). The runner that a hand-over's wait moved onto its taken list
# (BLMOVE) says it starts it, before it starts the child: the element leaves the taken list, so no hand-back can
# take the call any more (the heartbeat rules apply from here, as to a claim), and the heartbeat key is refreshed.
# 'gone' when the element is not there (given back, cancelled), 'invalid' when the call is not running for this
# runner as a hand-over it has not taken (the element is removed either way): then the runner does not start it.
TAKE = r"""
local base = ARGV[1]
local id = ARGV[2]
local runner = ARGV[3]
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
  if mine and ARGV[5] ~= '' and redis.call('HGET', key, 'claim') == ARGV[5] .. ' taken' then
    redis.call('SET', KEYS[2], runner, 'PX', ARGV[4])
    return {'ok'}
  end
  return {'gone', state}
end
redis.call('LREM', list, 1, found)
if not (mine and handed) then return {'invalid', state} end
redis.call('SET', KEYS[2], runner, 'PX', ARGV[4])
redis.call('ZADD', base .. 'handoffs', '+inf', id)
redis.call('HSET', key, 'claim', ARGV[5] .. ' taken')
redis.call('HDEL', key, 'handoff')
return {'ok'}
"""
