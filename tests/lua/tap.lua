-- tests/lua/tap.lua: a tiny test helper for `lamkit lua` test scripts (loaded with dofile, so the
-- embedded scripts under test come from the binary). Prints "ok - ..." / "not ok - ..." lines;
-- tests/integration/t0400-lua-boot.sh numbers them. done() returns the failure count.
local T = { failed = 0, n = 0 }

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "table" then
    local parts = {}
    for k, x in ipairs(v) do parts[k] = show(x) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return tostring(v)
end
T.show = show

function T.ok(cond, desc, diag)
  T.n = T.n + 1
  desc = desc:gsub("\\\n", "\\n"):gsub("\n", "\\n")
  if cond then
    print("ok - " .. desc)
  else
    T.failed = T.failed + 1
    print("not ok - " .. desc)
    if diag then print("#   " .. tostring(diag):gsub("\n", "\n#   ")) end
  end
  return cond
end

local function same(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end
T.same = same

function T.is(got, want, desc)
  return T.ok(same(got, want), desc, "got:  " .. show(got) .. "\nwant: " .. show(want))
end

function T.like(got, pat, desc)
  return T.ok(type(got) == "string" and got:find(pat) ~= nil, desc,
    "got:  " .. show(got) .. "\nwant match: " .. pat)
end

-- raises(fn, want, desc): fn must raise exactly the one-line string `want` (plain comparison).
function T.raises(fn, want, desc)
  local ok, err = pcall(fn)
  if ok then return T.ok(false, desc, "no error raised; want: " .. want) end
  return T.ok(err == want and not tostring(err):find("\n"), desc,
    "got:  " .. show(err) .. "\nwant: " .. show(want))
end

-- Error message of fn (or nil when it did not raise).
function T.err(fn)
  local ok, err = pcall(fn)
  if ok then return nil end
  return err
end

-- Override lamkit.getenv: env{NAME = "value" | false (unset)}; env(nil) restores the real one.
local real_getenv = lamkit.getenv
function T.env(tbl)
  if not tbl then
    lamkit.getenv = real_getenv
    return
  end
  lamkit.getenv = function(k)
    local v = tbl[k]
    if v == false then return nil end
    if v ~= nil then return v end
    return real_getenv(k)
  end
end

function T.write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

function T.done()
  print(string.format("# %d tests, %d failed", T.n, T.failed))
  return T.failed
end

return T
