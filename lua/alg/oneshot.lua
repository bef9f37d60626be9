-- lua/alg/oneshot.lua: start every node with one launch (ctx:start_group, e.g. a single srun
-- with one task per node), then collect one event per node, each with its own deadline.
local common = require("alg.common")

local M = {}

function M.run(ctx, schema, p)
  local t = common.tracker(ctx, schema.nodes, p or {})
  local all = {}
  for i = 1, t.total do all[i] = i end
  t:start_group(all)
  return common.loop(t)
end

return M
