-- lua/alg/common.lua: the bookkeeping every launch algorithm shares: start nodes through ctx,
-- wait for their events with a deadline per node, time out and cancel the late ones, and build
-- the result table. Algorithms only decide who starts what, and when.
local M = {}

local Tracker = {}
Tracker.__index = Tracker

-- tracker(ctx, nodes, p): p.timeout = seconds per node (default 30); p.preset = {[i] = {stage=,
-- err=}} marks nodes that must not be started (they fail as soon as an algorithm reaches them).
function M.tracker(ctx, nodes, p)
  local now = ctx.now and function() return ctx:now() end or lamkit.time
  local t = setmetatable({
    ctx = ctx, nodes = nodes, total = #nodes, timeout = p.timeout or 30, preset = p.preset or {},
    now = now, t0 = now(), state = {}, deadline = {}, started = {}, via = {}, npending = 0,
    ready = {}, up = {}, failed = {}, times = {}, events = {}, nup = 0,
  }, Tracker)
  return t
end

function Tracker:host(i)
  return self.nodes[i] and self.nodes[i].host or ("#" .. tostring(i))
end

function Tracker:via_name(i)
  local v = self.via[i]
  return v and self:host(v) or "origin"
end

-- Record the end of node i (an event table from ctx:wait, or one we made up).
function Tracker:finish(i, ev)
  if self.deadline[i] then
    self.deadline[i] = nil
    self.npending = self.npending - 1
  end
  local dt = self.now() - (self.started[i] or self.t0)
  self.times[i] = dt
  self.events[i] = ev
  local ctx = self.ctx
  if ev.ok then
    self.state[i] = "up"
    self.nup = self.nup + 1
    self.up[#self.up + 1] = i
    ctx:log("info", string.format("%s up (%.2f s, started by %s)", self:host(i), dt,
      ev.started_by or self:via_name(i)))
  else
    self.state[i] = "failed"
    local rec = { index = i, host = self:host(i), stage = ev.stage or "launch",
      err = tostring(ev.err or "failed"):gsub("%s*\n.*", ""), via = self.via[i] }
    self.failed[#self.failed + 1] = rec
    ctx:log("warn", string.format("%s failed at %s: %s (started by %s)", rec.host, rec.stage,
      rec.err, self:via_name(i)))
  end
  self.ready[#self.ready + 1] = { index = i, ok = ev.ok == true }
  ctx:progress(self.nup, self.total)
end

function Tracker:begin(i, via)
  assert(self.state[i] == nil, "node started twice")
  self.state[i] = "starting"
  self.via[i] = via
  self.started[i] = self.now()
  if self.preset[i] then
    self:finish(i, { index = i, ok = false, stage = self.preset[i].stage, err = self.preset[i].err })
    return false
  end
  self.deadline[i] = self.started[i] + self.timeout
  self.npending = self.npending + 1
  return true
end

-- Start node i from the origin (via = nil) or from the running agent `via`. Non-blocking.
function Tracker:start(i, via)
  if not self:begin(i, via) then return end
  local ok, err = self.ctx:start(i, via)
  if ok == false or (ok == nil and err) then
    self:finish(i, { index = i, ok = false, stage = "launch", err = err or "launch refused" })
  end
end

-- Start every index of `list` with one launch (ctx:start_group).
function Tracker:start_group(list)
  local go = {}
  for _, i in ipairs(list) do
    if self:begin(i, nil) then go[#go + 1] = i end
  end
  if #go == 0 then return end
  local ok, err = self.ctx:start_group(go)
  if ok == false or (ok == nil and err) then
    for _, i in ipairs(go) do
      self:finish(i, { index = i, ok = false, stage = "launch", err = err or "launch refused" })
    end
  end
end

function Tracker:busy()
  return self.npending > 0 or #self.ready > 0
end

-- Wait (never longer than the earliest node deadline) and return the nodes that finished since
-- the last call: a list of {index=, ok=}. Returns {} at once when nothing is outstanding.
function Tracker:step()
  if #self.ready == 0 and self.npending > 0 then
    local first
    for _, d in pairs(self.deadline) do
      if not first or d < first then first = d end
    end
    local ev = self.ctx:wait(math.max(0, first - self.now()))
    if type(ev) == "table" then
      local i = math.tointeger(ev.index)
      if i and self.deadline[i] then
        self:finish(i, ev)
      else
        self.ctx:log("debug", "ignoring an event for node " .. tostring(ev.index) ..
          " (not being started)")
      end
    end
    self:expire()
  end
  local out = self.ready
  self.ready = {}
  return out
end

-- Time out every node whose deadline has passed; ctx:cancel(i) lets the C side kill its launch.
function Tracker:expire()
  local now = self.now()
  local late = {}
  for i, d in pairs(self.deadline) do
    if d <= now then late[#late + 1] = i end
  end
  table.sort(late)
  for _, i in ipairs(late) do
    if self.ctx.cancel then self.ctx:cancel(i) end
    self:finish(i, { index = i, ok = false, stage = "timeout",
      err = string.format("no answer within %g s", self.timeout) })
  end
end

-- {up = {i...}, failed = {{index=, host=, stage=, err=, via=}...}, parent = {[i] = via or 0},
--  times = {[i] = seconds}, events = {[i] = last event}, elapsed = seconds}
function Tracker:result()
  table.sort(self.up)
  table.sort(self.failed, function(a, b) return a.index < b.index end)
  local parent = {}
  for i in pairs(self.state) do parent[i] = self.via[i] or 0 end
  return { up = self.up, failed = self.failed, parent = parent, times = self.times,
    events = self.events, elapsed = self.now() - self.t0 }
end

-- Drive a loop until nothing is outstanding; on_done(t, {index=, ok=}) may start more nodes.
-- refill(t) is called before each wait. The loop ends: every started node ends by its deadline.
function M.loop(t, refill, on_done)
  while true do
    if refill then refill(t) end
    if not t:busy() then break end
    for _, d in ipairs(t:step()) do
      if on_done then on_done(t, d) end
    end
  end
  return t:result()
end

return M
