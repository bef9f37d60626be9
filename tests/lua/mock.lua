-- tests/lua/mock.lua: a mock boot ctx in virtual time. Each launch takes `latency` virtual
-- seconds (per node: latency_of[i]); nodes can fail at a stage, hang (never answer) or be refused
-- at once. It records every call and checks the contract: every wait has a finite timeout, a
-- node is started once, and `via` is always an agent that is up.
local M = {}
M.__index = M

-- new{latency=0.1, fail={[i]={stage=, err=, exit=}}, hang={[i]=true}, refuse={[i]="why"},
--     info={[i]={version=, cpus=}}}
function M.new(o)
  o = o or {}
  local c = setmetatable({
    t = 0, latency = o.latency or 0.1, latency_of = o.latency_of or {}, fail = o.fail or {},
    hang = o.hang or {}, refuse = o.refuse or {}, info = o.info or {}, queue = {}, starts = {},
    started = {}, up = {}, cancelled = {}, violations = {}, logs = {}, progress_calls = 0,
    last_progress = nil, out_origin = 0, max_out_origin = 0, children = {}, groups = {},
    waits = 0, outstanding = {},
  }, M)
  return c
end

function M:violate(msg) self.violations[#self.violations + 1] = msg end

function M:now() return self.t end

function M:agent_args(i)
  if i == nil then return { "agent", "--boot", "10.0.0.1:4711", "--node", "by-name" } end
  return { "agent", "--boot", "10.0.0.1:4711", "--node", tostring(i - 1) }
end

function M:schedule(i)
  if self.hang[i] then return end
  local ev = { index = i, ok = true }
  local f = self.fail[i]
  if f then
    ev = { index = i, ok = false, stage = f.stage or "launch", err = f.err or "failed",
      exit = f.exit }
  else
    for k, v in pairs(self.info[i] or {}) do ev[k] = v end
  end
  local at = self.t + (self.latency_of[i] or self.latency)
  table.insert(self.queue, { at = at, ev = ev })
end

-- opts = {again = true, ship = PATH}: a node that failed started once more from the origin
-- with a binary on its stdin (lua/boot/fetch.lua); that clears a fail[i] marked `shippable`.
function M:start(i, via, argv, opts)
  if opts and opts.again then
    if via ~= nil or self.outstanding[i] or not self.started[i] then
      self:violate("node " .. i .. " started again while not failed, or via an agent")
    end
    self.started[i] = nil
    self.reships = (self.reships or 0) + 1
    if self.fail[i] and self.fail[i].shippable and opts.ship then self.fail[i] = nil end
  end
  if self.started[i] then self:violate("node " .. i .. " started twice") end
  if via ~= nil and not self.up[via] then
    self:violate("node " .. i .. " started via " .. tostring(via) .. " which is not up")
  end
  self.started[i] = true
  self.starts[#self.starts + 1] = { index = i, via = via, argv = argv, at = self.t }
  local key = via or 0
  self.children[key] = (self.children[key] or 0) + 1
  if self.refuse[i] then return false, self.refuse[i] end
  self.outstanding[i] = via or 0
  if via == nil then
    self.out_origin = self.out_origin + 1
    if self.out_origin > self.max_out_origin then self.max_out_origin = self.out_origin end
  end
  self:schedule(i)
  return true
end

function M:start_group(list, argv, hosts)
  self.groups[#self.groups + 1] = { list = list, argv = argv, hosts = hosts, at = self.t }
  for _, i in ipairs(list) do
    if self.started[i] then self:violate("node " .. i .. " started twice") end
    self.started[i] = true
    self.outstanding[i] = 0
    self:schedule(i)
  end
  return true
end

function M:settle(i)
  if self.outstanding[i] == 0 and self.out_origin > 0 then self.out_origin = self.out_origin - 1 end
  self.outstanding[i] = nil
end

function M:wait(timeout)
  self.waits = self.waits + 1
  if type(timeout) ~= "number" or timeout ~= timeout or timeout < 0 or timeout == math.huge then
    self:violate("wait without a finite timeout: " .. tostring(timeout))
    error("mock: wait without a finite timeout")
  end
  if self.waits > 1000000 then error("mock: too many waits (a busy loop?)") end
  local best, bi
  for k, q in ipairs(self.queue) do
    if not self.cancelled[q.ev.index] and (not best or q.at < best.at) then best, bi = q, k end
  end
  if best and best.at <= self.t + timeout then
    table.remove(self.queue, bi)
    if best.at > self.t then self.t = best.at end
    if best.ev.ok then self.up[best.ev.index] = true end
    self:settle(best.ev.index)
    return best.ev
  end
  self.t = self.t + timeout
  return nil
end

function M:cancel(i)
  self.cancelled[i] = true
  self:settle(i)
end

function M:log(level, msg) self.logs[#self.logs + 1] = level .. ": " .. msg end

function M:progress(up, total)
  self.progress_calls = self.progress_calls + 1
  self.last_progress = { up, total }
end

-- A schema-shaped table with n nodes named n1..nK.
function M.nodes(n)
  local s = { nodes = {}, file = "mock", lines = {}, options = {} }
  for i = 1, n do s.nodes[i] = { host = "n" .. i, cpu = 1 } end
  return s
end

return M
