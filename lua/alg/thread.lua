-- lua/alg/thread.lua: LAM's "threaded" boot as an overlapping tree. Every launcher (the origin,
-- and each agent as soon as it is up) keeps up to k launches in flight (k = p.fanout, default
-- 4) and takes the next node of the list whenever one of its launches ends. Unlike `tree`, no
-- node owns a fixed subtree: a launcher whose children are up goes on starting nodes, so after
-- d rounds (k+1)^d - 1 nodes can be up instead of k + k^2 + ... + k^d, and a slow or failed node
-- holds nobody up (its would-be children are started by whoever is free).
local common = require("alg.common")

local M = {}

function M.run(ctx, schema, p)
  p = p or {}
  local k = p.fanout or 4
  local t = common.tracker(ctx, schema.nodes, p)
  local nxt, inflight, launchers = 1, { [0] = 0 }, { 0 }

  -- start nodes from launcher l (0 = the origin) while it has room and nodes are left
  local function fill(l)
    while nxt <= t.total and inflight[l] < k do
      local i = nxt
      nxt = nxt + 1
      inflight[l] = inflight[l] + 1
      t:start(i, l ~= 0 and l or nil)
    end
  end

  return common.loop(t, function()
    for _, l in ipairs(launchers) do fill(l) end
  end, function(_, d)
    local l = t.via[d.index] or 0
    inflight[l] = inflight[l] - 1
    if d.ok then
      inflight[d.index] = 0
      launchers[#launchers + 1] = d.index
    end
  end)
end

return M
