-- lua/alg/linear.lua: start nodes from the origin one at a time, each after the previous one is
-- up, failed or timed out (the windowed algorithm with a window of one).
local M = {}

function M.run(ctx, schema, p)
  local q = {}
  for k, v in pairs(p or {}) do q[k] = v end
  q.window = 1
  return require("alg.windowed").run(ctx, schema, q)
end

return M
