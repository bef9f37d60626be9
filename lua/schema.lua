-- lua/schema.lua: find and load a boot schema (a sandboxed Lua DSL or a legacy LAM bhost text
-- file) into one plain table; every problem is one "file:line: what is wrong" error.
-- doc/BOOT-LUA.md describes the formats, the search path and the result table.
local hostlist = require("boot.hostlist")

local M = {}

M.algorithms = { linear = true, windowed = true, tree = true, thread = true, oneshot = true }
local ALG_NAMES = "linear, windowed, tree, thread, oneshot"
local SETTINGS = { boot = true, algorithm = true, fanout = true, window = true, timeout = true,
  defaults = true, ship = true, promiscuous = true, rte = true, transport = true, watch = true }
M.ship_modes = { auto = true, always = true, never = true }
local KNOWN_MODULES = { ["local"] = true, ssh = true, rsh = true, slurm = true }
local MAX_COUNT_HOOKS = 50 -- x 1e6 instructions: a schema that runs longer is stopped

-- Which keys a node got from the schema itself (weak, so it never keeps nodes alive).
local given = setmetatable({}, { __mode = "k" })

-- given(node, "cpu") -> true when the schema set node.cpu (directly or through defaults).
function M.given(node, key)
  return given[node] ~= nil and given[node][key] == true
end

local function fail(file, line, msg)
  error((line and (file .. ":" .. line) or file) .. ": " .. msg, 0)
end

local function show(v)
  if type(v) == "string" then return "'" .. v .. "'" end
  return tostring(v)
end

-- {==== value checks shared by both formats

function M.valid_host(h)
  return type(h) == "string" and h:match("^[%w_][%w%.%-_:]*$") ~= nil
end

local function positive_int(v)
  if type(v) == "string" and v:match("^%d+$") then v = tonumber(v) end
  if math.type(v) == "float" and v == math.floor(v) and v < 2 ^ 31 then v = math.tointeger(v) end
  if math.type(v) == "integer" and v >= 1 then return v end
  return nil
end
M.positive_int = positive_int

local BOOLS = { yes = true, ["true"] = true, ["1"] = true, no = false, ["false"] = false,
  ["0"] = false }

-- Check and normalize one node field; returns the value to store or raises.
local function check_field(file, line, label, k, v)
  if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
    fail(file, line, label .. ": key " .. show(k) .. " is not a name")
  end
  local t = type(v)
  if t ~= "string" and t ~= "number" and t ~= "boolean" then
    fail(file, line, label .. ": value of '" .. k .. "' has type " .. t ..
      " (allowed: string, number, boolean)")
  end
  if k == "cpu" or k == "sockets" or k == "cores_per_socket" or k == "threads_per_core" then
    local n = positive_int(v)
    if not n then fail(file, line, label .. ": " .. k .. " must be a positive integer, not " ..
      show(v)) end
    return n
  elseif k == "schedule" then
    if t == "string" and BOOLS[v:lower()] ~= nil then return BOOLS[v:lower()] end
    if t ~= "boolean" then
      fail(file, line, label .. ": schedule must be true/false (yes/no), not " .. show(v))
    end
  elseif k == "user" then
    if t ~= "string" or not v:match("^[%w_][%w%._%-]*%$?$") then
      fail(file, line, label .. ": user must be a user name, not " .. show(v))
    end
  elseif k == "prefix" or k == "program" then
    if t ~= "string" or v == "" then
      fail(file, line, label .. ": " .. k .. " must be a non-empty path string, not " .. show(v))
    end
  elseif k == "line" or k == "index" then
    fail(file, line, label .. ": '" .. k .. "' is reserved")
  end
  return v
end

-- ====}

-- {==== the node list under construction

local function new_builder(file)
  return { file = file, nodes = {}, byname = {} }
end

local function add_node(b, host, line)
  if not M.valid_host(host) then
    fail(b.file, line, show(host) .. " is not a valid host name")
  end
  local lc = host:lower()
  local first = b.byname[lc]
  if first then
    fail(b.file, line, "duplicate host '" .. host .. "' (first at line " .. first.line .. ")")
  end
  local node = { host = host, line = line }
  given[node] = {}
  b.nodes[#b.nodes + 1] = node
  b.byname[lc] = node
  return node
end

local function set_fields(b, node, fields, line)
  for k, v in pairs(fields) do
    if k == "host" or k == "hostname" then -- hostname: LAM's name for it
      if v ~= node.host then
        fail(b.file, line, "node '" .. node.host .. "': " .. (k == "host"
          and "host is already given as the node name"
          or ("hostname '" .. tostring(v) .. "' is not the node name (LAM: the node's first word is its host name)")))
      end
    else
      node[k] = check_field(b.file, line, "node '" .. node.host .. "'", k, v)
      given[node][k] = true
    end
  end
end

-- Defaults fill missing keys, then built-in defaults; returns the final list.
local function finish_nodes(b, defaults)
  for _, node in ipairs(b.nodes) do
    for k, v in pairs(defaults or {}) do
      if node[k] == nil then
        node[k] = v
        given[node][k] = true
      end
    end
    -- slots from the node's shape (Slurm's Sockets x CoresPerSocket x ThreadsPerCore) when
    -- cpu is not given; mpiexec --map-by ppr:N:OBJ counts objects from the same keys
    if node.cpu == nil and (node.sockets or node.cores_per_socket or node.threads_per_core) then
      node.cpu = (node.sockets or 1) * (node.cores_per_socket or 1) * (node.threads_per_core or 1)
    end
    if node.cpu == nil then node.cpu = 1 end
    if node.schedule == nil then node.schedule = true end
  end
  return b.nodes
end

-- ====}

-- {==== the Lua DSL

-- The line in the schema chunk that is running now (skipping our own and C frames).
local function schema_line(src)
  for level = 3, 40 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.source == src and info.currentline > 0 then return info.currentline end
  end
  return nil
end

local SAFE = { "assert", "error", "ipairs", "next", "pairs", "select", "tonumber",
  "tostring", "type", "rawequal", "rawlen" }

local function sandbox(b, src, result)
  local lib = { hostlist = function(s)
    local l, err = hostlist.expand(s)
    if not l then fail(b.file, schema_line(src), err) end
    return l
  end }
  for _, n in ipairs(SAFE) do lib[n] = _G[n] end
  for _, n in ipairs({ "string", "table", "math", "utf8" }) do
    local copy = {}
    for k, v in pairs(_G[n]) do copy[k] = v end
    lib[n] = copy
  end
  lib.getenv = function(name) return lamkit.getenv(tostring(name)) end
  lib.hostname = function() return lamkit.hostname() end

  -- node "n1" { ... } / node { host = "n1", ... }
  lib.node = function(arg)
    local line = schema_line(src)
    if type(arg) == "table" then
      local node = add_node(b, arg.host or arg.hostname, line)
      set_fields(b, node, arg, line)
      return node.host
    end
    local node = add_node(b, arg, line)
    local applied = false
    return function(fields)
      local l2 = schema_line(src)
      if applied then fail(b.file, l2, "node '" .. node.host .. "': fields given twice") end
      if type(fields) ~= "table" then
        fail(b.file, l2, "node '" .. node.host .. "': expected a { key = value } table, got " ..
          type(fields))
      end
      applied = true
      set_fields(b, node, fields, l2)
    end
  end
  -- nodes "n[1-8]" { ... }: one node per expanded name, same fields
  lib.nodes = function(pattern)
    local line = schema_line(src)
    if type(pattern) ~= "string" then fail(b.file, line, "nodes: expected a host list string") end
    local names, err = hostlist.expand(pattern)
    if not names then fail(b.file, line, err) end
    local list = {}
    for _, h in ipairs(names) do list[#list + 1] = add_node(b, h, line) end
    return function(fields)
      local l2 = schema_line(src)
      if type(fields) ~= "table" then
        fail(b.file, l2, "nodes '" .. pattern .. "': expected a { key = value } table")
      end
      for _, node in ipairs(list) do set_fields(b, node, fields, l2) end
    end
  end

  local function setting(name, v, line)
    if name == "boot" then
      if type(v) ~= "string" or not v:match("^[%w_]+$") then
        fail(b.file, line, "boot must be a module name string, not " .. show(v))
      end
    elseif name == "algorithm" then
      if not M.algorithms[v] then
        fail(b.file, line, "unknown algorithm " .. show(v) .. " (known: " .. ALG_NAMES .. ")")
      end
    elseif name == "fanout" or name == "window" then
      local n = positive_int(v)
      if not n then fail(b.file, line, name .. " must be a positive integer, not " .. show(v)) end
      v = n
    elseif name == "rte" then
      if type(v) ~= "string" or v == "" then
        fail(b.file, line, "rte must be the path of an RTE script, not " .. show(v))
      end
    elseif name == "transport" then
      -- lamkit MPI's paths for every job of the universe (doc/PROTOCOL-mpi-wire.md section 7):
      -- a policy string, or a function(job) that mpiexec calls once per job to get one
      if type(v) == "string" then
        local good, why = true, nil
        if lamkit.tp_check then good, why = lamkit.tp_check(v) end
        if not good then fail(b.file, line, "transport " .. show(v) .. ": " .. why) end
      elseif type(v) ~= "function" then
        fail(b.file, line, "transport must be a policy string such as \"shm+tcp,udp\" or a " ..
          "function(job) returning one, not " .. show(v))
      end
    elseif name == "watch" then
      -- the agents' watch (doc/PROTOCOL-agent.md, "The watch"): false, or { interval = S,
      -- timeout = S }: a heartbeat every interval, a node silent for timeout is down
      if v ~= false then
        if type(v) ~= "table" then
          fail(b.file, line, "watch must be false or { interval = S, timeout = S }, not " .. show(v))
        end
        for k, x in pairs(v) do
          if (k ~= "interval" and k ~= "timeout") or type(x) ~= "number" or x <= 0 or x > 3600 then
            fail(b.file, line, "watch: " .. show(k) .. " = " .. show(x) ..
              ": expected interval and timeout, seconds (> 0, at most 3600)")
          end
        end
        local i, t = v.interval or 0.5, v.timeout or 4
        if t < 2 * i then
          fail(b.file, line, "watch: timeout (" .. t .. " s) must be at least twice the interval (" ..
            i .. " s)")
        end
        v = { interval = i, timeout = t }
      end
    elseif name == "promiscuous" then
      if type(v) ~= "boolean" then
        fail(b.file, line, "promiscuous must be true or false, not " .. show(v))
      end
    elseif name == "ship" then
      if not M.ship_modes[v] then
        fail(b.file, line, "ship must be \"auto\", \"always\" or \"never\", not " .. show(v))
      end
    elseif name == "timeout" then
      if type(v) ~= "number" or v <= 0 then
        fail(b.file, line, "timeout must be a positive number of seconds, not " .. show(v))
      end
    elseif name == "defaults" then
      if type(v) ~= "table" then fail(b.file, line, "defaults must be a table") end
      local d = {}
      for k, x in pairs(v) do
        if k == "host" then fail(b.file, line, "defaults: 'host' cannot have a default") end
        d[k] = check_field(b.file, line, "defaults", k, x)
      end
      v = d
    end
    result[name] = v
    result.lines[name] = line
  end

  local function module_exists(name)
    if KNOWN_MODULES[name] then return true end
    local ok, mod = pcall(require, "boot." .. name)
    return ok and type(mod) == "table" and type(mod.init) == "function"
  end

  return setmetatable({}, {
    __index = function(_, k)
      if SETTINGS[k] then return result[k] end
      if result.options[k] ~= nil then return result.options[k] end
      return lib[k]
    end,
    __newindex = function(_, k, v)
      local line = schema_line(src)
      if lib[k] ~= nil then fail(b.file, line, "cannot assign to built-in '" .. tostring(k) .. "'") end
      if SETTINGS[k] then return setting(k, v, line) end
      if type(k) == "string" and type(v) == "table" and module_exists(k) then
        result.options[k] = v
        result.lines[k] = line
        return
      end
      fail(b.file, line, "unknown setting " .. show(k) ..
        " (settings: boot, algorithm, fanout, window, timeout, ship, promiscuous, rte, transport," ..
        " watch,"..
        " defaults," ..
        " <module> = {...};" ..
        " use 'local' for your own variables)")
    end,
  })
end

local function count_hook(src, file)
  local n = 0
  return function()
    n = n + 1
    if n > MAX_COUNT_HOOKS then
      fail(file, schema_line(src), "the schema runs too long (an endless loop?)")
    end
  end
end

-- Replace Lua's possibly shortened chunk name at the start of msg by the full path.
local function full_name(msg, fn, file)
  local short = debug.getinfo(fn, "S").short_src
  if msg:sub(1, #short + 1) == short .. ":" then return file .. msg:sub(#short + 1) end
  return msg
end

-- Run a compiled schema chunk (its _ENV replaced by the sandbox) and collect the result.
local function load_lua(file, fn)
  local result = { options = {}, lines = {} }
  local b = new_builder(file)
  local src = "@" .. file
  local env = sandbox(b, src, result)
  debug.setupvalue(fn, 1, env)
  debug.sethook(count_hook(src, file), "", 1000000)
  local ok, err = pcall(fn)
  debug.sethook()
  if not ok then
    if type(err) ~= "string" then err = file .. ": the schema raised a " .. type(err) .. " error" end
    error(full_name(err, fn, file), 0)
  end
  result.nodes = finish_nodes(b, result.defaults)
  return result
end

-- ====}

-- {==== the LAM bhost format: "host [key=value ...]  # comment"

local function bhost_tokens(line)
  local body = line:gsub("#.*$", "")
  local toks = {}
  for t in body:gmatch("%S+") do toks[#toks + 1] = t end
  return toks
end

local function load_bhost(file, text)
  local b = new_builder(file)
  local lineno = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    lineno = lineno + 1
    local toks = bhost_tokens(line)
    if #toks > 0 then
      local hosts = { toks[1] }
      if toks[1]:find("[", 1, true) then
        local err
        hosts, err = hostlist.expand(toks[1])
        if not hosts then fail(file, lineno, err) end
      end
      local fields = {}
      for k = 2, #toks do
        local key, val = toks[k]:match("^([%a_][%w_]*)=(.*)$")
        if not key then fail(file, lineno, "expected key=value, got '" .. toks[k] .. "'") end
        if val == "" then fail(file, lineno, "empty value for '" .. key .. "'") end
        if fields[key] ~= nil then fail(file, lineno, "'" .. key .. "' given twice") end
        if key ~= "cpu" and key ~= "schedule" and (val:match("^%-?[1-9]%d*$") or val == "0") then
          val = math.tointeger(tonumber(val))
        end
        fields[key] = val
      end
      for _, h in ipairs(hosts) do
        local node = add_node(b, h, lineno)
        set_fields(b, node, fields, lineno)
      end
    end
  end
  return { options = {}, lines = {}, nodes = finish_nodes(b, nil) }
end

local LUA_WORDS = { ["local"] = true, ["function"] = true, ["for"] = true, ["if"] = true,
  ["while"] = true, ["repeat"] = true, ["return"] = true, ["do"] = true, ["end"] = true }

-- Does the first significant line read as "host ..." rather than as Lua? (No Lua punctuation,
-- no "name =" assignment, no Lua keyword first, and a host-like first word.)
local function looks_like_bhost(text)
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    local toks = bhost_tokens(line)
    if #toks > 0 then
      local body = line:gsub("#.*$", "")
      return toks[1]:match("^[%w_][%w%.%-_:%[%],]*$") ~= nil and not LUA_WORDS[toks[1]]
        and not body:find("[{}()\"']") and not body:match("^%s*[%a_][%w_%.]*%s*=")
    end
  end
  return true -- only comments and blank lines
end

-- ====}

-- {==== finding and reading the file

-- search("x.lua", {install_etc=}) -> path; raises "schema 'x' not found (looked in ...)".
function M.search(name, opts)
  if type(name) ~= "string" or name == "" then error("no boot schema given", 0) end
  local cands = { name }
  if not name:find("/", 1, true) then
    -- ours, then LAM's own homes in LAM's order ($TROLLIUSHOME/etc, $LAMHOME/etc), then the
    -- install's etc/ (LAM's $sysconf)
    for _, var in ipairs({ "LAMKIT_HOME", "TROLLIUSHOME", "LAMHOME" }) do
      local home = lamkit.getenv(var)
      if home and home ~= "" then cands[#cands + 1] = home .. "/etc/" .. name end
    end
    if opts and opts.install_etc then cands[#cands + 1] = opts.install_etc .. "/" .. name end
  end
  for _, p in ipairs(cands) do
    local f = io.open(p, "r")
    if f then
      f:close()
      return p
    end
  end
  local shown = {}
  for k, p in ipairs(cands) do shown[k] = p:find("/", 1, true) and p or ("./" .. p) end
  error("schema '" .. name .. "' not found (looked in " .. table.concat(shown, ", ") .. ")", 0)
end

local function read_all(path)
  local f, err = io.open(path, "r")
  if not f then error(path .. ": " .. tostring(err), 0) end
  local text, rerr = f:read("a")
  f:close()
  if not text then error(path .. ": cannot read: " .. tostring(rerr), 0) end
  return text
end

-- ====}

-- load(path_or_name, opts) -> schema table (see doc/BOOT-LUA.md); raises one line on any problem.
function M.load(name, opts)
  local file = M.search(name, opts)
  local text = read_all(file)
  local fmt
  if file:match("%.bhost$") then
    fmt = "bhost"
  elseif text:sub(1, 4) == "\27Lua" then
    error(file .. ": a binary chunk is not a schema", 0)
  end
  local ok, res = pcall(function()
    if fmt == "bhost" then return load_bhost(file, text) end
    local chunk, err = load(text, "@" .. file, "t", {})
    if chunk then
      fmt = "lua"
      return load_lua(file, chunk)
    end
    if not file:match("%.lua$") and looks_like_bhost(text) then
      fmt = "bhost"
      return load_bhost(file, text)
    end
    error(err, 0)
  end)
  if not ok then
    local msg = tostring(res):gsub("%s*\n%s*", " ")
    -- syntax errors carry Lua's shortened chunk name: give the whole path back
    local short_pat = "^%.%.%.[^:]*:"
    if not msg:find(file, 1, true) and msg:match(short_pat) then
      msg = file .. msg:sub(#msg:match(short_pat))
    end
    error(msg, 0)
  end
  res.file = file
  res.format = fmt
  return res
end

return M
