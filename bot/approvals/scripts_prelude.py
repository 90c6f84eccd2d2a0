"""The Lua prelude every transition script starts with: the shared arguments, and the helpers that keep the
indexes, streams, audit entries and hand-overs in step with a call's state (``move``). See ``scripts.py``.
"""

from __future__ import annotations

PRELUDE = r"""
local base = ARGV[1]
local now = ARGV[2]
local retention = tonumber(ARGV[3])
local minid = ARGV[4]
local TERMINAL = {denied=true, expired=true, finished=true, timed_out=true, failed_to_start=true,
                  interrupted=true, cancelled=true, rejected=true, refused=true}
-- non-terminal states a front end shows on the call's card as they happen (the progress stream)
local PROGRESS = {approved=true, auto_approved=true, running=true}

local kept = {}  -- keys given their TTL in this run (a hand-over's approval moves its call twice)
local function keep(key)
  if kept[key] then return end
  -- only a key that exists is remembered: one made later in this run (a thread's first open call) gets its TTL then
  if redis.call('EXPIRE', key, retention) == 1 then kept[key] = true end
end

-- the call's hash and body (records.py) as a script replies them: {flat HGETALL, body JSON or false}
local function record(id)
  return {redis.call('HGETALL', base .. 'call:' .. id), redis.call('GET', base .. 'body:' .. id)}
end

-- the call and its body live and expire together (EXPIRE of a missing body, an older record's, is a no-op)
local function keep_call(id)
  keep(base .. 'call:' .. id)
  keep(base .. 'body:' .. id)
end

-- the shown command when it is not argv joined with spaces (then '': readers join the record's argv, which
-- lives as long as the entry: both kept redis.retention_seconds; ~110 bytes per entry saved)
local function distinct_command(id)
  local command = redis.call('HGET', base .. 'call:' .. id, 'command')  -- a record of the previous layout
  if command then return command end
  local body = redis.call('GET', base .. 'body:' .. id)
  if body then
    local fixed = cjson.decode(body)
    return fixed.c or fixed.command or ''  -- records.compact_body's name, or a body of the previous layout
  end
  return ''
end

-- What a call's audit entries and moves read that never changes after proposal (thread, tool, requester, the
-- shown command), read once per script run: a hand-over's approval moves and audits its call twice, and every
-- redis.call costs a script more than the command itself.
local fixed = {}
local function fixed_of(id)
  local f = fixed[id]
  if not f then
    local c = redis.call('HMGET', base .. 'call:' .. id, 'conversation', 'tool', 'requester')
    f = {conversation = c[1], tool = c[2], requester = c[3]}
    fixed[id] = f
  end
  return f
end

local function audit(id, from, to, actor, reason)
  -- what a timeline needs without reading the call record: thread, tool, requester, a command not in argv
  local f = fixed_of(id)
  if f.command == nil then f.command = distinct_command(id) end
  redis.call('XADD', base .. 'audit', 'MINID', '~', minid, '*', 'call_id', id, 'from', from, 'to', to,
             'actor', actor, 'at', now, 'reason', reason, 'conversation', f.conversation or '', 'tool',
             f.tool or '', 'command', f.command, 'requester', f.requester or '')
end

local function progress(id, conv, state)
  redis.call('XADD', base .. 'progress', 'MINID', '~', minid, '*', 'call_id', id, 'conversation', conv,
             'state', state, 'at', now)
end

local function decide(key, actor, reason)
  redis.call('HSET', key, 'decision', cjson.encode({actor=actor, at=now, reason=reason}))
end

-- A hand-over's mark on the call ('handoff'): "<runner> <state claimed from>[ <token>]". The token is the parked
-- process's own (a random value per runner process, written with its park): then the element its wait moves
-- lands on that process's own list ('moved:<runner>:<token>'), and being there means it is being started or
-- runs (the move is the take: the process starts it without another round trip). Without a token (a runner of
-- the previous version) a moved element lands on 'taken:<runner>' and has not started until TAKE removes it.
local function handoff_mark(key)
  local handoff = redis.call('HGET', key, 'handoff')
  if not handoff then return nil end
  return string.match(handoff, '^(%S+) (%S+) ?(%S*)$')
end

local function element_on(list, id)
  for _, item in ipairs(redis.call('LRANGE', list, 0, -1)) do
    if string.sub(item, 1, #id + 1) == id .. ' ' then return item end
  end
  return nil
end

-- The handed-over run of call id that has not started: (its list, the element, the state it was claimed from),
-- or nil once it may have started. Not started: still on the runner's hand-over list, or on its taken list (a
-- previous version's wait moved it there, or a runner put it there itself to wait for a slot: it has not said
-- it starts it, TAKE). On a process's own moved list (a move of this version) or taken (TAKE) it may have
-- started, and the heartbeat rules apply.
local function waiting_handover(key, id)
  local runner, from = handoff_mark(key)
  if not runner then return nil end
  for _, list in ipairs({base .. 'handoff:' .. runner, base .. 'taken:' .. runner}) do
    local item = element_on(list, id)
    if item then return list, item, from end
  end
  return nil
end

-- A thread's open calls are one small hash (id -> 'p' awaiting approval, 'o' otherwise not terminal), which Redis
-- keeps as a listpack. A call an earlier version put in the sets ':open' and ':pending' moves to the hash here.
-- What this run already wrote of a call's indexes, so a second move of the same call (a hand-over: approved,
-- then running) does not write it again: taken out of the previous version's sets (nothing adds to them), out of
-- the awaiting index, its mark in the thread's hash of open calls.
local legacy_cleared = {}
local unawaited = {}
local marked = {}
-- the record a hand-over pushed, by call id: the approval's answer is the same record (nothing writes the call
-- after the push), so the script does not read it a second time
local handed = {}
local function move(key, id, from, to, actor, reason)
  local conv = fixed_of(id).conversation
  local hand = nil
  local calls = base .. 'conv:' .. conv .. ':calls'
  redis.call('HSET', key, 'state', to, 'updated_at', now)
  if not legacy_cleared[id] then
    redis.call('SREM', base .. 'conv:' .. conv .. ':open', id)
    redis.call('SREM', base .. 'conv:' .. conv .. ':pending', id)
    legacy_cleared[id] = true
  end
  if to == 'awaiting_approval' then
    redis.call('ZADD', base .. 'awaiting', redis.call('HGET', key, 'expires_at'), id)
    unawaited[id] = nil
    redis.call('HSET', calls, id, 'p')
    marked[id] = 'p'
  else
    if not unawaited[id] then
      redis.call('ZREM', base .. 'awaiting', id)
      unawaited[id] = true
    end
    if not TERMINAL[to] and marked[id] ~= 'o' then
      redis.call('HSET', calls, id, 'o')
      marked[id] = 'o'
    end
  end
  if to == 'running' then
    redis.call('ZADD', base .. 'running', now, id)
  else
    redis.call('ZREM', base .. 'running', id)
  end
  if to == 'approved' or to == 'auto_approved' then
    local parked = redis.call('GET', base .. 'parked')
    if parked then
      redis.call('DEL', base .. 'parked')  -- one hand-over per park: the runner parks again when it took it
      local runner, ttl, back, token = string.match(parked, '^(%S+) (%d+) ([%d.]+) ?(%S*)$')
      if runner then hand = {runner, ttl, back, token} end
    end
    if not hand then
      -- the decision rides along: a runner verifies its signature while its claim is in Redis (decisions.py
      -- verify_ahead; the claimed record must carry the same token, and is checked against it)
      redis.call('XADD', base .. 'run', 'MINID', '~', minid, '*', 'call_id', id,
                 'app', redis.call('HGET', key, 'app'), 'decision', redis.call('HGET', key, 'signed_decision') or '')
    end
  end
  audit(id, from, to, actor, reason)
  if PROGRESS[to] then
    progress(id, conv, to)
  end
  if TERMINAL[to] then
    if from == 'running' then  -- the claim's nonce and a hand-over end with the call
      local list, item = waiting_handover(key, id)  -- ended untaken (not by this version's scripts): no stray element
      if list then redis.call('LREM', list, 1, item) end
      local runner, _, token = handoff_mark(key)
      if token and token ~= '' then  -- the element its process's wait moved (it started it, or died meanwhile)
        local moved = base .. 'moved:' .. runner .. ':' .. token
        local item = element_on(moved, id)
        if item then redis.call('LREM', moved, 1, item) end
      end
      redis.call('HDEL', key, 'claim', 'handoff')
      redis.call('ZREM', base .. 'handoffs', id)
    end
    redis.call('HDEL', calls, id)
    marked[id] = nil
    kept[calls] = nil  -- the hash is gone when this was its last call; a later call of this run makes it again
    local left = redis.call('HLEN', calls) + redis.call('SCARD', base .. 'conv:' .. conv .. ':open')
    redis.call('DEL', base .. 'hb:' .. id)
    redis.call('XADD', base .. 'completions', 'MINID', '~', minid, '*', 'call_id', id,
               'conversation', conv, 'state', to, 'open', tostring(left), 'at', now)
  end
  keep_call(id)
  keep(calls)
  if hand then
    -- A runner waits for work (bot/approvals/worker.py, _handover_loop): claimed for it here, in the approval's
    -- own script, and handed over on its list with the record, so it starts the call when it is woken, without
    -- a run entry or a claim round trip. Parked as "<runner> <heartbeat ttl ms> <seconds before hand-back>
    -- <process token>" (no token: a runner of the previous version, which says TAKE before it starts): a runner
    -- that does not move it off its list in time (it died while parked) has it taken back (HANDBACK), never run.
    local runner, ttl, back, token = hand[1], hand[2], hand[3], hand[4]
    local mark = runner .. ' ' .. to
    if token ~= '' then mark = mark .. ' ' .. token end
    redis.call('HSET', key, 'runner', runner, 'started_at', now, 'handoff', mark)
    redis.call('SET', base .. 'hb:' .. id, runner, 'PX', ttl)
    move(key, id, to, 'running', 'runner:' .. runner, 'claimed (handed over)')
    handed[id] = record(id)
    redis.call('RPUSH', base .. 'handoff:' .. runner, id .. ' ' .. cjson.encode(handed[id]))
    redis.call('ZADD', base .. 'handoffs', tonumber(now) + tonumber(back), id)
  end
end

-- A write with no meaning of its own: a repeated click (or result) that changes nothing still writes this, so the
-- WAIT after the script has an offset to wait for, and it covers the earlier write being confirmed (replication
-- is in order). See bot/redis_durable.py.
local function confirm_write()
  redis.call('SET', base .. 'confirm', now, 'PX', 60000)
end

local function expired_now(key)
  return tonumber(redis.call('HGET', key, 'expires_at')) <= tonumber(now)
end

local function close_expired(key, id)
  decide(key, 'sweeper', 'approval window elapsed')
  move(key, id, 'awaiting_approval', 'expired', 'sweeper', 'approval window elapsed')
end
"""
