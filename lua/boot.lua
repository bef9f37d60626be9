-- lua/boot.lua: the boot driver the C side calls: load the schema, choose the boot module, call
-- its SSI functions in order, build every launch argv, run the launch algorithm through ctx and
-- return the result. recon and wipe run a one-off agent on every node the same way.
-- The ctx contract and the result tables are in doc/BOOT-LUA.md.
local schema_mod = require("schema")
local fetch = require("boot.fetch")

local M = {}

M.modules = { "local", "slurm", "ssh", "rsh" } -- the ones tried when none is forced
M.defaults = { timeout = 30, fanout = 4, window = 5 }

-- {==== module choice

local function load_module(name, where_from)
  local prefix = where_from and (where_from .. ": ") or ""
  local known = table.concat({ "local", "rsh", "slurm", "ssh" }, ", ")
  if type(name) ~= "string" or not name:match("^[%w_]+$") then
    error(prefix .. "unknown boot module '" .. tostring(name) .. "' (known: " .. known .. ")", 0)
  end
  local ok, mod = pcall(require, "boot." .. name)
  if not ok then
    if tostring(mod):find("module 'boot." .. name .. "' not found", 1, true) then
      error(prefix .. "unknown boot module '" .. name .. "' (known: " .. known .. ")", 0)
    end
    error(tostring(mod):gsub("\n.*", ""), 0)
  end
  if type(mod) ~= "table" or type(mod.init) ~= "function" then
    error(prefix .. "'" .. name .. "' is not a boot module (known: " .. known .. ")", 0)
  end
  return mod
end

-- LAM's per-module override: LAMKIT_BOOT_<MODULE>_PRIORITY (an integer) replaces the priority
-- a usable module reports; a module that cannot run here stays unusable.
local function priority_of(name, prio)
  local var = "LAMKIT_BOOT_" .. name:upper() .. "_PRIORITY"
  local v = lamkit.getenv(var)
  if v == nil or v == "" then -- LAM's own name for it
    var = "LAM_MPI_SSI_boot_" .. name .. "_priority"
    v = lamkit.getenv(var)
  end
  if prio == nil or v == nil or v == "" then return prio end
  local n = math.tointeger(tonumber(v))
  if not n or not v:match("^%s*%-?%d+%s*$") then
    error(var .. ": must be an integer priority, not '" .. v .. "'", 0)
  end
  return n
end

-- choose(schema, opts, where) -> module, name, priority. Forced by opts.boot (command line),
-- then LAMKIT_BOOT, then the schema's boot=; otherwise the highest priority above 0 wins
-- (each one as LAMKIT_BOOT_<MODULE>_PRIORITY says, when set).
function M.choose(schema, opts, where)
  local name, from
  local env, envname = lamkit.getenv("LAMKIT_BOOT"), "LAMKIT_BOOT"
  if not env or env == "" then -- LAM's SSI parameter as an environment variable
    env, envname = lamkit.getenv("LAM_MPI_SSI_boot"), "LAM_MPI_SSI_boot"
  end
  if opts.boot then
    name, from = opts.boot, nil
  elseif env and env ~= "" then
    name, from = env, envname
  elseif schema.boot then
    name = schema.boot
    from = schema.file .. (schema.lines.boot and (":" .. schema.lines.boot) or "")
  end
  if name then
    local mod = load_module(name, from)
    local prio, why = mod.init(where, schema)
    prio = priority_of(name, prio)
    if not prio then
      error((from and (from .. ": ") or "") .. "boot module '" .. name ..
        "' cannot be used here: " .. tostring(why), 0)
    end
    return mod, name, prio
  end
  local best, best_name, best_prio, whys = nil, nil, 0, {}
  for _, n in ipairs(M.modules) do
    local mod = load_module(n)
    local prio, why = mod.init(where, schema)
    prio = priority_of(n, prio)
    if prio and prio > best_prio then
      best, best_name, best_prio = mod, n, prio
    elseif not prio then
      whys[#whys + 1] = n .. ": " .. tostring(why)
    else
      whys[#whys + 1] = n .. ": only when forced"
    end
  end
  if not best then
    error(schema.file .. ": no boot module can start this schema (" .. table.concat(whys, "; ") ..
      ")", 0)
  end
  return best, best_name, best_prio
end

-- ====}

-- from_state(st) -> a schema table for grow and wipe: the universe's nodes with the module
-- and the module options of the schema it was booted from (when that file still loads).
-- st = {schema = path | "", module = name, nodes = {{host=, cpu=, schedule=, ...}...}}
function M.from_state(st)
  local s
  if st.schema and st.schema ~= "" and lamkit.file_exists(st.schema) then
    local ok, loaded = pcall(schema_mod.load, st.schema, {})
    if ok then s = loaded end
  end
  s = s or { file = "(universe)", options = {}, lines = {} }
  s.nodes = st.nodes or {}
  for _, n in ipairs(s.nodes) do -- a grown node takes the schema's defaults too
    for k, v in pairs(s.defaults or {}) do
      if n[k] == nil then n[k] = v end
    end
  end
  if st.module and st.module ~= "" then
    s.boot = st.module
    s.lines.boot = nil
  end
  s.algorithm, s.lines.algorithm = nil, nil -- a few nodes: started from the origin
  return s
end

local function load_schema(src, opts)
  if type(src) == "table" then -- an already-built node list (wipe/grow from the universe state)
    src.file = src.file or "(universe)"
    src.options = src.options or {}
    src.lines = src.lines or {}
    src.nodes = src.nodes or {}
    for _, n in ipairs(src.nodes) do
      n.cpu = n.cpu or 1
      if n.schedule == nil then n.schedule = true end
    end
    return src
  end
  return schema_mod.load(src, opts)
end

local function check_argv(argv, what)
  if type(argv) ~= "table" or #argv == 0 then error(what .. " is not a list of strings", 0) end
  for k, w in ipairs(argv) do
    if type(w) ~= "string" then error(what .. ": word " .. k .. " is not a string", 0) end
  end
  return argv
end

-- The agent program on node: node.program, <prefix>/bin/lamkit, the origin's own path (local
-- and slurm: same_path), or "lamkit" found through the remote PATH.
function M.program(node, mod, opts)
  if node.program then return node.program end
  if node.prefix then return (node.prefix:gsub("/+$", "")) .. "/bin/lamkit" end
  if (not mod.remote or mod.same_path) and opts.self then return opts.self end
  return "lamkit"
end

local function agent_argv0(ctx, i, program)
  local args = check_argv(ctx:agent_args(i), "ctx:agent_args(" .. tostring(i) .. ")")
  local argv = { program }
  for _, w in ipairs(args) do argv[#argv + 1] = w end
  return argv
end

-- {==== the RTE (lua/rte.lua, or the schema's rte = "file")

local LIMITS = { core = true, nofile = true, stack = true, memlock = true, nproc = true,
  as = true, fsize = true, cpu = true, data = true }

-- The RTE module: the schema's own file (relative to the schema), else require("rte").
local function load_rte(s)
  if not s.rte then return require("rte"), "lua/rte.lua" end
  local path = s.rte
  if path:sub(1, 1) ~= "/" then path = (s.file:match("^(.*)/") or ".") .. "/" .. path end
  local at = s.file .. (s.lines.rte and (":" .. s.lines.rte) or "") .. ": "
  local chunk, err = loadfile(path, "t")
  if not chunk then error(at .. "rte: " .. tostring(err):gsub("\n.*", ""), 0) end
  local ok, mod = pcall(chunk)
  if not ok then error(at .. "rte: " .. tostring(mod):gsub("\n.*", ""), 0) end
  if type(mod) ~= "table" or type(mod.agent) ~= "function" then
    error(at .. "rte: " .. path .. " must return a table with an agent(node, u) function", 0)
  end
  return mod, path
end

-- The --rte-* agent words for node i (where = "boot": everything; "wipe": the epilog).
local function rte_words(rte, rname, s, i, modname, where, opts)
  local hosts = {}
  for k, n in ipairs(s.nodes) do hosts[k] = n.host end
  local node = {}
  for k, v in pairs(s.nodes[i]) do node[k] = v end
  node.index = i
  local u = { hosts = hosts, size = #s.nodes, origin = lamkit.hostname(), module = modname,
    file = s.file, where = where, verbose = opts.verbose or 0 }
  local ok, r = pcall(rte.agent, node, u)
  local at = rname .. ": node " .. s.nodes[i].host .. ": "
  if not ok then error(rname .. ": " .. tostring(r):gsub("\n.*", ""), 0) end
  if r == nil then return {} end
  if type(r) ~= "table" then error(at .. "agent() must return a table", 0) end
  local words = {}
  local function add(opt, val) words[#words + 1] = opt; words[#words + 1] = val end
  local function str(key)
    local v = r[key]
    if v ~= nil and (type(v) ~= "string" or v == "") then
      error(at .. key .. " must be a non-empty string", 0)
    end
    return v
  end
  if where == "boot" then
    local env = {}
    for _, name in ipairs(r.passenv or {}) do
      local v = lamkit.getenv(name)
      if v then env[name] = v end
    end
    for k, v in pairs(r.env or {}) do env[k] = v end
    local names = {}
    for k, v in pairs(env) do
      if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") or
        (type(v) ~= "string" and type(v) ~= "number") then
        error(at .. "env: " .. tostring(k) .. " must be a NAME = string pair", 0)
      end
      names[#names + 1] = k
    end
    table.sort(names)
    for _, k in ipairs(names) do add("--rte-env", k .. "=" .. tostring(env[k])) end
    local lnames = {}
    for k, v in pairs(r.limits or {}) do
      if not LIMITS[k] then
        error(at .. "limits: unknown limit '" .. tostring(k) .. "' (known: core, nofile, " ..
          "stack, memlock, nproc, as, fsize, cpu, data)", 0)
      end
      if v ~= "unlimited" and not (math.tointeger(v) and v >= 0) then
        error(at .. "limits." .. k .. " must be a number or \"unlimited\"", 0)
      end
      lnames[#lnames + 1] = k
    end
    table.sort(lnames)
    for _, k in ipairs(lnames) do add("--rte-limit", k .. "=" .. tostring(r.limits[k])) end
    if str("wdir") then add("--rte-wdir", r.wdir) end
    if str("prolog") then add("--rte-prolog", r.prolog) end
    if r.wrap ~= nil then
      local ok = type(r.wrap) == "table" and #r.wrap > 0
      for k = 1, ok and #r.wrap or 0 do
        local w = r.wrap[k]
        if (type(w) ~= "string" or w == "") and not math.tointeger(w) then ok = false end
      end
      if not ok then
        error(at .. "wrap must be a list of words, such as { \"nice\", \"-n\", \"5\" }", 0)
      end
      for _, w in ipairs(r.wrap) do add("--rte-wrap", tostring(w)) end
    end
  end
  if str("epilog") then add("--rte-epilog", r.epilog) end
  return words
end

-- ====}

-- ship mode: the command line's --ship, else the schema's ship =, else "auto".
local function ship_mode(s, opts)
  return opts.ship or s.ship or "auto"
end

-- Every launch argv, built before anything starts (a module error here starts nothing).
-- Where boot finds or ships the agent itself (lua/boot/fetch.lua), recv[i] is the argv that
-- receives the binary on stdin, used when the first launch says there is none of this build.
local function build_argvs(ctx, s, mod, mopts, opts, rte_of)
  local argvs, recv, ship = {}, {}, ship_mode(s, opts)
  local function agent_argv(c, i, program) -- with the node's RTE words
    local a = agent_argv0(c, i, program)
    for _, w in ipairs(rte_of(i)) do a[#a + 1] = w end
    return a
  end
  for i, node in ipairs(s.nodes) do
    if fetch.applies(node, mod, opts, ship) then
      local a = agent_argv(ctx, i, opts.self)
      argvs[i] = check_argv(mod.start_rte_proc(node, fetch.wrap(a, ship, opts), mopts),
        "start_rte_proc")
      if ship ~= "never" and opts.self_sha256 then
        recv[i] = check_argv(mod.start_rte_proc(node, fetch.wrap(a, "recv", opts), mopts),
          "start_rte_proc")
      end
    else
      argvs[i] = check_argv(mod.start_rte_proc(node, agent_argv(ctx, i,
        M.program(node, mod, opts)), mopts), "start_rte_proc")
    end
  end
  return argvs, recv
end

-- The one-shot argv, or nil, why.
local function build_group(ctx, s, mod, mopts, opts, rte_of)
  if not mod.start_rte_procs then return nil, "boot module has no one-shot start" end
  if not ctx.start_group then return nil, "ctx has no start_group" end
  local prog = M.program(s.nodes[1], mod, opts)
  for _, n in ipairs(s.nodes) do
    if M.program(n, mod, opts) ~= prog then return nil, "nodes use different agent programs" end
  end
  local a = agent_argv0(ctx, nil, prog)
  for _, w in ipairs(rte_of(1)) do a[#a + 1] = w end -- one argv for all: the first node's RTE
  local argv, why = mod.start_rte_procs(s.nodes, a, mopts)
  if not argv then return nil, why end
  return check_argv(argv, "start_rte_procs")
end

-- A launch that exited with fetch.NEED_SHIP: start node i again from here with the binary
-- after the key (recv), once; recon only reports it. Returns the event to hand on, or nil when
-- the node was started again.
local function need_ship(ctx, s, st, ev)
  local i, node = ev.index, s.nodes[ev.index]
  if not st.recv[i] or st.shipped[i] or st.where == "recon" then
    if ev.exit == fetch.NEED_SHIP then
      ev.err = "find: no lamkit of this build on " .. node.host ..
        (st.where == "recon" and " (boot would ship one: ship = \"auto\")" or "")
    end
    return ev
  end
  st.shipped[i] = true
  local said = tostring(ev.err or ""):match("^lamkit: (.*)") -- e.g. a refused cached copy
  ctx:log("info", string.format("%s: %s; shipping %s (%d bytes)", node.host,
    said or "no lamkit of this build there", st.opts.self_sha256:sub(1, 12),
    st.opts.self_size or 0))
  ctx:log("debug", "start " .. node.host .. ": " .. table.concat(st.recv[i], " ")
    :gsub(fetch.script:gsub("%p", "%%%0"), "<find-or-ship script>"))
  local ok, why = ctx:start(i, nil, st.recv[i], { again = true, ship = st.opts.self })
  if ok == false then
    return { index = i, ok = false, stage = "launch", err = "ship: " .. tostring(why) }
  end
  return nil
end

-- The object the algorithms drive: start(i, via) / start_group(list) add the launch argv.
local function launcher(ctx, s, argvs, group, st)
  local L = {}
  function L.start(_, i, via)
    ctx:log("debug", "start " .. s.nodes[i].host .. ": " ..
      table.concat(argvs[i], " "):gsub(fetch.script:gsub("%p", "%%%0"), "<find-or-ship script>"))
    return ctx:start(i, via, argvs[i])
  end
  function L.start_group(_, list)
    local hosts = {}
    for k, i in ipairs(list) do hosts[k] = s.nodes[i].host end
    ctx:log("debug", "start " .. #list .. " nodes: " .. table.concat(group, " "))
    return ctx:start_group(list, group, hosts)
  end
  function L.wait(_, timeout)
    local now = ctx.now and function() return ctx:now() end or lamkit.time
    local deadline = now() + timeout
    while true do
      local ev = ctx:wait(math.max(0, deadline - now()))
      if ev and ev.ok and st and st.shipped[ev.index] then ev.started_by = "origin" end
      if ev and ev.ok and s.promiscuous and ev.addr then -- where each node called from
        ctx:log("info", s.nodes[ev.index].host .. " called back from " .. ev.addr)
      end
      if not ev or ev.ok or ev.exit ~= fetch.NEED_SHIP or not st then return ev end
      ev = need_ship(ctx, s, st, ev)
      if ev then return ev end
      if now() >= deadline then return nil end
    end
  end
  function L.log(_, level, msg) ctx:log(level, msg) end
  function L.progress(_, up, total) ctx:progress(up, total) end
  if ctx.now then function L.now() return ctx:now() end end
  if ctx.cancel then function L.cancel(_, i) ctx:cancel(i) end end
  return L
end

-- LAM's SSI parameter for the window, as an environment variable (lamboot -ssi ... sets it too)
local function lam_window()
  local v = lamkit.getenv("LAM_MPI_SSI_boot_base_linear_win_size")
  if v == nil or v == "" then return nil end
  local n = math.tointeger(tonumber(v))
  if not n or n < 1 or not v:match("^%s*%d+%s*$") then
    error("LAM_MPI_SSI_boot_base_linear_win_size: must be a positive integer, not '" .. v .. "'", 0)
  end
  return n
end

local function param(opts, s, key)
  local v = opts[key] or s[key] or (key == "window" and lam_window()) or M.defaults[key]
  return v
end

-- Steps shared by run/recon/wipe up to the launch: returns state table.
local function prepare(ctx, src, opts, where, collect)
  opts = opts or {}
  local s = load_schema(src, opts)
  local mod, name, prio = M.choose(s, opts, where)
  local mopts = mod.parse_options(s)
  mod.allocate_nodes(s, mopts)
  if #s.nodes == 0 then error(s.file .. ": the schema lists no nodes", 0) end
  local problems = mod.verify_nodes(s, mopts, collect) or {}
  mod.prepare_boot(s, mopts)
  -- resolve = false: the module resolves no host name (ssh.verify = false: names only ssh's
  -- configuration knows); the C side then asks no resolver about them either
  if ctx.setup then
    ctx:setup(s.nodes, name, { promiscuous = s.promiscuous == true, resolve = mopts.verify ~= false })
  end
  local rte, rname = load_rte(s)
  local cache = {}
  local function rte_of(i) -- recon runs no RTE: it leaves nothing behind
    if where == "recon" then return {} end
    cache[i] = cache[i] or rte_words(rte, rname, s, i, name, where, opts)
    return cache[i]
  end
  for i = 1, #s.nodes do rte_of(i) end -- every RTE error before anything starts
  local argvs, recv = build_argvs(ctx, s, mod, mopts, opts, rte_of)
  return { s = s, mod = mod, name = name, prio = prio, mopts = mopts, argvs = argvs,
    recv = recv, shipped = {}, where = where, problems = problems, opts = opts, rte_of = rte_of }
end

local function algorithm_for(st, ctx, alg)
  local s, opts = st.s, st.opts
  local group, why
  if alg == "oneshot" or alg == nil then
    group, why = build_group(ctx, s, st.mod, st.mopts, opts, st.rte_of)
    if alg == "oneshot" and not group then
      local at = (opts.algorithm or not s.lines.algorithm) and s.file
        or (s.file .. ":" .. s.lines.algorithm)
      error(at .. ": algorithm 'oneshot' cannot be used with boot module '" .. st.name .. "': " ..
        why, 0)
    end
    alg = group and "oneshot" or "windowed"
  end
  return alg, group
end

-- run(ctx, schema_path_or_table, opts) -> result (doc/BOOT-LUA.md). Raises one line on a bad
-- schema or module setup, before anything is started.
function M.run(ctx, src, opts)
  local st = prepare(ctx, src, opts, "boot", false)
  local s, o = st.s, st.opts
  if o.algorithm and not schema_mod.algorithms[o.algorithm] then
    error("unknown algorithm '" .. tostring(o.algorithm) .. "'", 0)
  end
  local alg, group = algorithm_for(st, ctx, o.algorithm or s.algorithm)
  local p = { timeout = param(o, s, "timeout"), fanout = param(o, s, "fanout"),
    window = param(o, s, "window"), verbose = o.verbose or 0 }
  ctx:log("info", string.format("boot: %d node(s), module %s (priority %d), algorithm %s%s",
    #s.nodes, st.name, st.prio, alg,
    (alg == "tree" or alg == "thread") and (", fanout " .. p.fanout) or alg == "windowed" and (", window " .. p.window)
    or ""))
  local ok, res = pcall(require("alg." .. alg).run, launcher(ctx, s, st.argvs, group, st), s, p)
  st.mod.deallocate_nodes(s, st.mopts)
  if not ok then error(res, 0) end
  for i in pairs(st.shipped) do -- started once more from here, whoever tried first
    if res.parent then res.parent[i] = 0 end
  end
  res.shipped = st.shipped
  res.module, res.algorithm, res.nodes, res.file = st.name, alg, s.nodes, s.file
  -- the universe file keeps a policy string; a function stays in the schema, which mpiexec
  -- loads again to call it for each job (lua/transport.lua)
  res.transport = type(s.transport) == "function" and "function" or s.transport
  if s.watch == false then
    res.watch_off = true
  elseif s.watch then
    res.watch_interval, res.watch_timeout = s.watch.interval, s.watch.timeout
  end
  return res
end

-- {==== recon and wipe: a one-off agent per node, started from the origin only

local function row(st, res, i)
  local node, ev = st.s.nodes[i], res.events[i] or {}
  local r = { index = i, host = node.host, ok = ev.ok == true, time = res.times[i],
    stage = ev.stage, err = ev.err, version = ev.version, cpus = ev.cpus, wipe = ev.wipe }
  if st.problems[i] then
    r.reachable, r.runs = false, false
  else
    local classify = st.mod.classify or function(e) return e.ok or nil, e.ok or nil end
    r.reachable, r.runs = classify(ev)
  end
  if ev.ok then r.stage, r.err = nil, nil end
  return r
end

-- each(ctx, src, opts, where) -> {module=, nodes=, rows={{index, host, ok, reachable, runs,
-- version, cpus, time, stage, err}...}, up=, failed=}. Unresolvable hosts become rows
-- (stage "resolve") instead of errors; nodes are started from the origin, window at a time.
function M.each(ctx, src, opts, where)
  local st = prepare(ctx, src, opts, where, true)
  local s, o = st.s, st.opts
  local preset = {}
  for i, why in pairs(st.problems) do preset[i] = { stage = "resolve", err = why } end
  local p = { timeout = param(o, s, "timeout"), window = param(o, s, "window"), preset = preset }
  local res = require("alg.windowed").run(launcher(ctx, s, st.argvs, nil, st), s, p)
  st.mod.deallocate_nodes(s, st.mopts)
  local rows = {}
  for i = 1, #s.nodes do rows[i] = row(st, res, i) end
  res.rows, res.module, res.nodes, res.file = rows, st.name, s.nodes, s.file
  return res
end

function M.recon(ctx, src, opts) return M.each(ctx, src, opts, "recon") end

function M.wipe(ctx, src, opts) return M.each(ctx, src, opts, "wipe") end

-- ====}

return M
