-- lua/alg/windowed.lua: start nodes from the origin in schema order with at most W launches
-- outstanding (p.window, default 5); a slot frees when a node is up, failed or timed out.
local common = require("alg.common")

local M = {}

function M.run(ctx, schema, p)
  p = p or {}
  local window = p.window or 5
  local t = common.tracker(ctx, schema.nodes, p)
  local nxt = 1
  return common.loop(t, function()
    while nxt <= t.total and t.npending < window do
      t:start(nxt, nil)
      nxt = nxt + 1
    end
  end)
end

return M
