-- lua/boot/slurm.lua: the slurm boot module: inside an allocation (SLURM_JOB_ID set) srun starts
-- the agents, one step per node or all in one step (start_rte_procs). The allocation is the node
-- list when the schema lists none; otherwise every schema node must be in it.
local common = require("boot.common")
local hostlist = require("boot.hostlist")

local M = { name = "slurm", remote = true, same_path = true }

-- Flags every agent step gets (Slurm 22.05):
--  --overlap         share the allocation's resources with every other step (later sruns, grow,
--                    wipe and the other agents never wait for the agent steps to end)
--  --mem=0           all of the job's memory on the node, without taking any from other steps
--  --cpu-bind=none   the agent, and the ranks it forks, are not pinned to the step's cpus
--  --mpi=none        no PMI/PMIx server for the agent itself, whatever MpiDefault says
--  --input=all       srun's stdin (the universe key) goes to every task
--  --export=ALL      the agent sees the boot command's environment even under sbatch --export=NONE
--  --kill-on-bad-exit=0  one agent that fails does not take the others down
-- No --exact: the step gets every allocated cpu of its node, so ranks the agent forks can use them.
local STEP_FLAGS = { "--overlap", "--mem=0", "--cpu-bind=none", "--mpi=none", "--input=all",
  "--export=ALL", "--kill-on-bad-exit=0", "--job-name=lamkit-agent" }

function M.init(_where, _schema)
  local job = lamkit.getenv("SLURM_JOB_ID") or lamkit.getenv("SLURM_JOBID")
  if not job or job == "" then return nil, "not inside a Slurm allocation (SLURM_JOB_ID is not set)" end
  return 80
end

function M.parse_options(schema)
  local o = common.check_options(schema, "slurm", {
    command = common.string_opt, options = common.strings_opt, oneshot = common.bool_opt })
  o.command = o.command or "srun"
  o.options = o.options or {}
  if o.oneshot == nil then o.oneshot = true end
  return o
end

-- The allocation as {{host=, cpu=}...}; raises one line when the environment is unusable.
function M.allocation()
  local list = lamkit.getenv("SLURM_JOB_NODELIST") or lamkit.getenv("SLURM_NODELIST")
  if not list or list == "" then
    error("SLURM_JOB_NODELIST is not set: not inside a Slurm allocation", 0)
  end
  local hosts, err = hostlist.expand(list)
  if not hosts then error("SLURM_JOB_NODELIST: " .. err, 0) end
  local cpus_s = lamkit.getenv("SLURM_JOB_CPUS_PER_NODE")
  local cpus = {}
  if cpus_s and cpus_s ~= "" then
    local e
    cpus, e = hostlist.cpus(cpus_s)
    if not cpus then error("SLURM_JOB_CPUS_PER_NODE: " .. e, 0) end
    if #cpus ~= #hosts then
      error("SLURM_JOB_CPUS_PER_NODE '" .. cpus_s .. "' gives " .. #cpus .. " counts for " ..
        #hosts .. " nodes in '" .. list .. "'", 0)
    end
  end
  local out = {}
  for k, h in ipairs(hosts) do out[k] = { host = h, cpu = cpus[k] or 1 } end
  return out, list
end

function M.allocate_nodes(schema, _o)
  local alloc, list = M.allocation()
  if #schema.nodes == 0 then
    for k, a in ipairs(alloc) do schema.nodes[k] = { host = a.host, cpu = a.cpu, schedule = true } end
    schema.from_allocation = true
    return
  end
  local byname = {}
  for _, a in ipairs(alloc) do byname[a.host:lower()] = a end
  local schema_mod = require("schema")
  for _, node in ipairs(schema.nodes) do
    local a = byname[node.host:lower()]
    if not a then
      error((schema.file or "schema") .. (node.line and (":" .. node.line) or "") .. ": host '" ..
        node.host .. "' is not in the Slurm allocation (" .. list .. ")", 0)
    end
    if not schema_mod.given(node, "cpu") then node.cpu = a.cpu end
  end
end

-- Membership was checked by allocate_nodes; srun needs no name resolution.
function M.verify_nodes(_schema, _o, _collect) return {} end

function M.prepare_boot(_schema, _o) end

local function step(o, head, agent_argv)
  local argv = { o.command }
  for _, w in ipairs(head) do argv[#argv + 1] = w end
  for _, w in ipairs(STEP_FLAGS) do argv[#argv + 1] = w end
  for _, w in ipairs(o.options) do argv[#argv + 1] = w end
  for _, w in ipairs(agent_argv) do argv[#argv + 1] = w end
  return argv
end

-- One step, one task, on node.host.
function M.start_rte_proc(node, agent_argv, o)
  return step(o, { "--nodes=1", "--ntasks=1", "--nodelist=" .. node.host }, agent_argv)
end

-- One step for all of `nodes`, one task per node; every agent finds its node by host name.
-- Returns nil, why when the one-shot is switched off.
function M.start_rte_procs(nodes, agent_argv, o)
  if not o.oneshot then return nil, "slurm.oneshot is false" end
  local hosts = {}
  for k, n in ipairs(nodes) do hosts[k] = n.host end
  local k = tostring(#nodes)
  return step(o, { "--nodes=" .. k, "--ntasks=" .. k, "--ntasks-per-node=1",
    "--nodelist=" .. hostlist.compress(hosts) }, agent_argv)
end

function M.classify(ev)
  if ev.ok then return true, true end
  if ev.stage == "connect" or ev.stage == "auth" then return true, true end
  return nil, nil
end

function M.deallocate_nodes(_schema, _o) end -- the allocation belongs to the user's job

return M
