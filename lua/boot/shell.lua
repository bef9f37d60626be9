-- lua/boot/shell.lua: quoting words for a POSIX remote shell (ssh and rsh join their command
-- arguments into one line that the remote login shell parses). A helper, not a boot module.
local M = {}

-- quote("a b") -> "'a b'"; words made only of safe characters stay as they are; "" -> "''".
function M.quote(s)
  s = tostring(s)
  if s ~= "" and not s:find("[^%w@%%+=:,./_%-]") then return s end
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- A path word: a leading "~/" stays unquoted so the remote shell expands it to the home directory.
function M.quote_path(s)
  if s:sub(1, 2) == "~/" then return "~/" .. M.quote(s:sub(3)) end
  return M.quote(s)
end

-- join({"a", "b c"}) -> "a 'b c'"
function M.join(words)
  local out = {}
  for k, w in ipairs(words) do out[k] = M.quote(w) end
  return table.concat(out, " ")
end

return M
