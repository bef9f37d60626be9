-- lua/boot/hostlist.lua: Slurm-style host lists ("n[1-4,7]", "a[01-03]b") and cpu counts
-- ("2(x3),1"): expand, compress. A helper for the schema and the slurm module, not a boot module.
local M = {}

local MAX_HOSTS = 100000

-- Split s on commas that are not inside brackets; nil, err on unbalanced brackets.
local function split_top(s)
  local items, depth, start = {}, 0, 1
  for pos = 1, #s do
    local c = s:sub(pos, pos)
    if c == "[" then
      depth = depth + 1
      if depth > 1 then return nil, "nested '[' in host list '" .. s .. "'" end
    elseif c == "]" then
      depth = depth - 1
      if depth < 0 then return nil, "unbalanced ']' in host list '" .. s .. "'" end
    elseif c == "," and depth == 0 then
      items[#items + 1] = s:sub(start, pos - 1)
      start = pos + 1
    end
  end
  if depth ~= 0 then return nil, "unbalanced '[' in host list '" .. s .. "'" end
  items[#items + 1] = s:sub(start)
  return items
end

-- "1-3,07" -> {"1","2","3","07"}; widths follow the first number of a range ("08-11" -> 08..11).
local function expand_ranges(body, whole)
  local out = {}
  for part in (body .. ","):gmatch("([^,]*),") do
    local a, b = part:match("^(%d+)%-(%d+)$")
    if not a then
      a = part:match("^(%d+)$")
      b = a
    end
    if not a then
      return nil, "bad range '" .. part .. "' in host list '" .. whole .. "'"
    end
    local lo, hi = tonumber(a), tonumber(b)
    if hi < lo then
      return nil, "descending range '" .. part .. "' in host list '" .. whole .. "'"
    end
    if hi - lo + #out >= MAX_HOSTS then
      return nil, "host list '" .. whole .. "' names more than " .. MAX_HOSTS .. " hosts"
    end
    local fmt = (#a > 1 and a:sub(1, 1) == "0") and ("%0" .. #a .. "d") or "%d"
    for n = lo, hi do out[#out + 1] = string.format(fmt, n) end
  end
  return out
end

-- One item, possibly with several bracket groups: cartesian product, leftmost group outermost.
local function expand_item(item, whole)
  local names = { "" }
  local pos = 1
  while pos <= #item do
    local lb = item:find("[", pos, true)
    local lit = item:sub(pos, (lb or #item + 1) - 1)
    for k = 1, #names do names[k] = names[k] .. lit end
    if not lb then break end
    local rb = item:find("]", lb, true)
    local parts, err = expand_ranges(item:sub(lb + 1, rb - 1), whole)
    if not parts then return nil, err end
    local next_names = {}
    for _, n in ipairs(names) do
      for _, p in ipairs(parts) do next_names[#next_names + 1] = n .. p end
    end
    if #next_names > MAX_HOSTS then
      return nil, "host list '" .. whole .. "' names more than " .. MAX_HOSTS .. " hosts"
    end
    names = next_names
    pos = rb + 1
  end
  return names
end

-- expand("n[1-3],m5") -> {"n1","n2","n3","m5"}, or nil, "one line" on a malformed list.
function M.expand(s)
  if type(s) ~= "string" or s:match("^%s*$") then return nil, "empty host list" end
  if s:find("%s") then return nil, "white space in host list '" .. s .. "'" end
  local items, err = split_top(s)
  if not items then return nil, err end
  local out = {}
  for _, item in ipairs(items) do
    if item == "" then return nil, "empty item in host list '" .. s .. "'" end
    local names, e = expand_item(item, s)
    if not names then return nil, e end
    for _, n in ipairs(names) do out[#out + 1] = n end
    if #out > MAX_HOSTS then
      return nil, "host list '" .. s .. "' names more than " .. MAX_HOSTS .. " hosts"
    end
  end
  return out
end

-- compress({"n1","n2","n3","m5"}) -> "n[1-3],m5". Keeps the given order; only runs of the same
-- prefix and digit width that are consecutive in the list are merged.
function M.compress(list)
  local out, k = {}, 1
  while k <= #list do
    local pre, num = list[k]:match("^(.-)(%d+)$")
    if not pre then
      out[#out + 1] = list[k]
      k = k + 1
    else
      local ranges, width = {}, #num
      local padded = #num > 1 and num:sub(1, 1) == "0"
      local lo, hi = tonumber(num), tonumber(num)
      local j = k + 1
      while j <= #list do
        local p2, n2 = list[j]:match("^(.-)(%d+)$")
        local p2pad = n2 and #n2 > 1 and n2:sub(1, 1) == "0"
        if p2 ~= pre or (padded or p2pad) and #n2 ~= width then break end
        local v = tonumber(n2)
        if v == hi + 1 then
          hi = v
        else
          ranges[#ranges + 1] = { lo, hi }
          lo, hi = v, v
        end
        j = j + 1
      end
      ranges[#ranges + 1] = { lo, hi }
      if j == k + 1 then
        out[#out + 1] = list[k]
      else
        local fmt = padded and ("%0" .. width .. "d") or "%d"
        local parts = {}
        for _, r in ipairs(ranges) do
          parts[#parts + 1] = r[1] == r[2] and fmt:format(r[1])
            or (fmt:format(r[1]) .. "-" .. fmt:format(r[2]))
        end
        out[#out + 1] = pre .. "[" .. table.concat(parts, ",") .. "]"
      end
      k = j
    end
  end
  return table.concat(out, ",")
end

-- cpus("2(x3),1") -> {2,2,2,1}, or nil, "one line".
function M.cpus(s)
  if type(s) ~= "string" or s == "" then return nil, "empty cpu list" end
  local out = {}
  for part in (s .. ","):gmatch("([^,]*),") do
    local n, rep = part:match("^(%d+)%(x(%d+)%)$")
    if not n then
      n, rep = part:match("^(%d+)$"), "1"
    end
    if not n or tonumber(n) < 1 or tonumber(rep) < 1 then
      return nil, "bad cpu count '" .. part .. "' in '" .. s .. "'"
    end
    if #out + tonumber(rep) > MAX_HOSTS then return nil, "cpu list '" .. s .. "' is too long" end
    for _ = 1, tonumber(rep) do out[#out + 1] = tonumber(n) end
  end
  return out
end

return M
