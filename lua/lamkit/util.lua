-- lua/lamkit/util.lua: small helpers shared by the boot scripts.
local M = {}

-- split("a,b", ",") -> {"a", "b"}; empty fields are kept.
function M.split(s, sep)
  local out, pos = {}, 1
  while true do
    local i, j = string.find(s, sep, pos, true)
    if not i then
      out[#out + 1] = string.sub(s, pos)
      return out
    end
    out[#out + 1] = string.sub(s, pos, i - 1)
    pos = j + 1
  end
end

-- A sorted list of a table's keys.
function M.keys(t)
  local k = {}
  for key in pairs(t) do k[#k + 1] = key end
  table.sort(k, function(a, b) return tostring(a) < tostring(b) end)
  return k
end

return M
