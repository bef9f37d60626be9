-- lua/atollrun.lua: how `lamkit atollrun` starts each process, through the boot modules:
-- a process on this host through `local`, one on a machinefile host through `ssh` or `rsh` (the
-- remote shell command and its options come from -r), one on a booted universe's node through
-- that universe's module and schema options. Nothing is started here: C runs the argvs this
-- returns.
local loc = require("boot.local")

local M = {}

-- The boot module for a remote shell command line ("ssh", "/usr/bin/rsh", "ssh -F cfg"):
-- module, options table for its parse_options.
local function remote_module(words)
  local client = words[1]
  local base = client:match("([^/]+)$") or client
  local name = base:match("rsh$") and "rsh" or "ssh"
  local rest = {}
  for k = 2, #words do rest[#rest + 1] = words[k] end
  return require("boot." .. name), name, { command = client, options = rest, verify = false }
end

-- argvs(hosts, local_argv, remote_argv, rsh_words) -> {argv...} per ID, {true|false...}
-- hosts[i] is ID i-1's host; local_argv runs on this host, remote_argv (the `atollrun --exec`
-- helper) on any other. Raises one line (e.g. no ssh client) before anything starts.
function M.argvs(hosts, local_argv, remote_argv, rsh_words)
  local mod, name, mopts = remote_module(rsh_words)
  local schema = { file = "-r", nodes = {}, lines = {}, options = { [name] = mopts } }
  local out, remote, o = {}, {}, nil
  for i, h in ipairs(hosts) do
    local node = { host = h, cpu = 1, schedule = true }
    if loc.is_here(h) then
      out[i] = loc.start_rte_proc(node, local_argv, loc.parse_options({ options = {} }))
      remote[i] = false
    else
      if not o then
        schema.nodes = { node }
        local ok, why = mod.init("atollrun", schema)
        if not ok then error("-r " .. table.concat(rsh_words, " ") .. ": " .. tostring(why), 0) end
        o = mod.parse_options(schema)
      end
      out[i] = mod.start_rte_proc(node, remote_argv, o)
      remote[i] = true
    end
    if type(out[i]) ~= "table" or #out[i] == 0 then
      error("boot module " .. name .. " gave no command for " .. h, 0)
    end
  end
  return out, remote
end

-- argvs_universe(st, node_of, local_argv, exec_tail, self) -> like argvs, for a booted universe:
-- st = {schema=, module=, nodes={...}} as boot.from_state takes it; node_of[i] is ID i-1's
-- index in st.nodes (0: this host). Processes start through the universe's boot module with its
-- schema's options; on a node, the helper is the lamkit the universe's agents run there.
function M.argvs_universe(st, node_of, local_argv, exec_tail, self)
  local boot = require("boot")
  local s = boot.from_state(st)
  local mod, name = boot.choose(s, {}, "atollrun")
  local o = mod.parse_options(s)
  local out, remote = {}, {}
  for i, k in ipairs(node_of) do
    local node = s.nodes[k]
    if k == 0 or not mod.remote or loc.is_here(node.host) then
      out[i], remote[i] = local_argv, false
    else
      local argv = { boot.program(node, mod, { self = self }) }
      for _, w in ipairs(exec_tail) do argv[#argv + 1] = w end
      out[i], remote[i] = mod.start_rte_proc(node, argv, o), true
      if type(out[i]) ~= "table" or #out[i] == 0 then
        error("boot module " .. name .. " gave no command for " .. node.host, 0)
      end
    end
  end
  return out, remote, name
end

return M
