-- lua/alg/tree.lua: a k-ary launch tree (k = p.fanout, default 4). Positions follow the node
-- list: the origin starts nodes 1..k; node i, once up, starts nodes k*i+1 .. k*i+k through its
-- agent. When node i fails, whoever started it (a live agent or the origin) starts i's children
-- instead, so a failed node's subtree is still attempted.
local common = require("alg.common")

local M = {}

-- children(i, k, total): the positions below i (i = 0 is the origin).
function M.children(i, k, total)
  local out = {}
  for c = k * i + 1, math.min(k * i + k, total) do out[#out + 1] = c end
  return out
end

function M.run(ctx, schema, p)
  p = p or {}
  local k = p.fanout or 4
  local t = common.tracker(ctx, schema.nodes, p)
  for _, c in ipairs(M.children(0, k, t.total)) do t:start(c, nil) end
  return common.loop(t, nil, function(_, d)
    local launcher = d.ok and d.index or t.via[d.index]
    for _, c in ipairs(M.children(d.index, k, t.total)) do t:start(c, launcher) end
  end)
end

return M
