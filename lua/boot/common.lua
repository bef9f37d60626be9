-- lua/boot/common.lua: pieces the boot modules share: option-table checks with schema lines,
-- host resolution for verify_nodes, and PATH lookup. A helper, not a boot module.
local M = {}

-- "file:line: " for a schema setting (or "file: " when the schema did not set it).
function M.at(schema, key)
  local line = schema.lines and schema.lines[key]
  return (schema.file or "schema") .. (line and (":" .. line) or "") .. ": "
end

-- Check a module's option table against spec = {name = checker(v) -> value | nil, "why"}.
-- Returns a new table with the checked values; raises one line on an unknown key or bad value.
function M.check_options(schema, modname, spec)
  local raw = (schema.options or {})[modname] or {}
  local out, names = {}, {}
  for k in pairs(spec) do names[#names + 1] = k end
  table.sort(names)
  for k, v in pairs(raw) do
    local check = spec[k]
    if not check then
      error(M.at(schema, modname) .. modname .. ": unknown option '" .. tostring(k) ..
        "' (known: " .. table.concat(names, ", ") .. ")", 0)
    end
    local val, why = check(v)
    if val == nil then
      error(M.at(schema, modname) .. modname .. "." .. k .. " " .. why, 0)
    end
    out[k] = val
  end
  return out
end

-- Common option checkers.
function M.string_opt(v)
  if type(v) == "string" and v ~= "" then return v end
  return nil, "must be a non-empty string"
end

function M.bool_opt(v)
  if type(v) == "boolean" then return v end
  return nil, "must be true or false"
end

function M.strings_opt(v)
  if type(v) ~= "table" then return nil, "must be a list of strings" end
  local out = {}
  for k, s in ipairs(v) do
    if type(s) ~= "string" then return nil, "must be a list of strings (item " .. k .. ")" end
    out[k] = s
  end
  return out
end

-- Is `prog` runnable: an absolute/relative path that exists, or found in a PATH directory?
function M.in_path(prog)
  if prog:find("/", 1, true) then return lamkit.file_exists(prog) end
  local path = lamkit.getenv("PATH") or "/usr/bin:/bin"
  for dir in (path .. ":"):gmatch("([^:]*):") do
    if dir ~= "" and lamkit.file_exists(dir .. "/" .. prog) then return true end
  end
  return false
end

-- Resolve every node with lamkit.resolve(host) -> address | nil, err (provided by the C side).
-- collect=false: raise "file:line: cannot resolve host 'x': why" at the first failure.
-- collect=true: return {[index] = "cannot resolve host 'x': why"} instead.
function M.resolve_all(schema, collect, hint)
  local problems = {}
  local resolve = lamkit.resolve
  if type(resolve) ~= "function" then return problems end
  for i, node in ipairs(schema.nodes) do
    local addr, err = resolve(node.host)
    if not addr then
      local msg = "cannot resolve host '" .. node.host .. "': " .. tostring(err or "unknown host")
      if hint then msg = msg .. " (if only your " .. hint:match("^(%w+)") ..
        " configuration knows it, set " .. hint .. ")" end
      if not collect then
        error((schema.file or "schema") .. (node.line and (":" .. node.line) or "") .. ": " ..
          msg, 0)
      end
      problems[i] = msg
    end
  end
  return problems
end

return M
