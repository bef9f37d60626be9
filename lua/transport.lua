-- lua/transport.lua: the transport policy of one job (the value lamkit's MPI reads as LAMKIT_TP,
-- doc/PROTOCOL-mpi-wire.md section 7). mpiexec calls policy() once per job when the universe's
-- schema set `transport` to a function, before the job starts: the ranks carry no Lua, they get
-- the answer in their environment. Override this file like every embedded script
-- (`lamkit lua-dump`) to change how the answer is found.
local M = {}

local MAX_COUNT_HOOKS = 50 -- x 1e6 instructions, as for the schema itself

-- policy(schema_path, job) -> a policy string such as "shm+tcp,udp".
-- job = { size = ranks, universe = id, nodes = { { name = host, slots = n }, ... } }
function M.policy(schema_path, job)
  local s = require("schema").load(schema_path, {})
  local t = s.transport
  if type(t) ~= "function" then return t or "auto" end
  local n = 0
  debug.sethook(function()
    n = n + 1
    if n > MAX_COUNT_HOOKS then error(schema_path .. ": transport(job) runs too long", 0) end
  end, "", 1000000)
  local ok, v = pcall(t, job)
  debug.sethook()
  if not ok then error(schema_path .. ": transport(job): " .. tostring(v), 0) end
  if type(v) ~= "string" then
    error(schema_path .. ": transport(job) returned " .. tostring(v) .. ", not a policy string", 0)
  end
  return v
end

return M
