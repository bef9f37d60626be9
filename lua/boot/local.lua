-- lua/boot/local.lua: the local boot module: every agent is forked on this machine. Chosen when
-- every node is this host; when forced with other names (fake multi-node tests) the names are
-- only labels and every agent still runs here.
local common = require("boot.common")

local M = { name = "local", remote = false }

local LOOPBACK = { localhost = true, ["localhost.localdomain"] = true, ["::1"] = true,
  ["ip6-localhost"] = true }

-- Is host this machine (by name, short name or a loopback address)?
function M.is_here(host)
  local h = host:lower()
  if LOOPBACK[h] or h:match("^127%.%d+%.%d+%.%d+$") then return true end
  local me = (lamkit.hostname() or ""):lower()
  return h == me or h == me:match("^([^.]+)") or me == h:match("^([^.]+)")
end

function M.init(_where, schema)
  if not schema or #schema.nodes == 0 then return nil, "the schema lists no nodes" end
  for _, node in ipairs(schema.nodes) do
    if not M.is_here(node.host) then return 0 end -- usable only when forced
  end
  return 90
end

function M.parse_options(schema)
  return common.check_options(schema, "local", {})
end

function M.allocate_nodes(_schema, _o) end

-- Names are labels here; nothing to resolve.
function M.verify_nodes(_schema, _o, _collect) return {} end

function M.prepare_boot(_schema, _o) end

function M.start_rte_proc(_node, agent_argv, _o)
  local argv = {}
  for k, w in ipairs(agent_argv) do argv[k] = w end
  return argv
end

function M.classify(ev)
  if ev.ok then return true, true end
  if ev.stage == "launch" then return true, false end
  return true, ev.stage ~= "timeout" or nil
end

function M.deallocate_nodes(_schema, _o) end

return M
