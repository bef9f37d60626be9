-- lua/atollrun.lua: how `lamkit atollrun` starts each process, through the boot modules:
-- a process on this host through `local`, one on another host through `ssh` or `rsh` (the
-- remote shell command and its options come from -r). Nothing is started here: C runs the
-- argvs this returns.
local common = require("boot.common")
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

M.in_path = common.in_path

return M
