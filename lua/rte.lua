-- lua/rte.lua: the RTE configuration: what starting an agent means on a node. boot calls
-- agent(node, u) on the origin for every node (and wipe for every node it wipes) and passes the
-- answer to the agent in its argv; the agent applies it before it calls back. Override it like
-- every embedded script (LAMKIT_LUA_PATH, `lamkit lua-dump`), or point a schema at your own file
-- with `rte = "my-rte.lua"` (a path relative to the schema). doc/BOOT-LUA.md, "RTE".
--
-- node: the schema's node table (host, cpu, schedule, user, prefix, program, any other key) plus
--       index (its position, 1-based).
-- u:    the universe being booted: hosts (every host name, in order), size (number of nodes),
--       origin (this host's name), module (the boot module), file (the schema), where
--       ("boot" or "wipe"), verbose (the -v level). As LAM substituted $inet_topo, build
--       per-node values from these.
-- Return a table; every field is optional:
--   passenv = { "NAME", ... }  variables of the origin's environment every agent gets
--   env     = { NAME = "value" } variables set for the agent (and its prolog and epilog)
--   limits  = { nofile = 65536, core = "unlimited", memlock = "unlimited", ... } resource limits
--             (soft, and the hard limit where the agent may raise it); the ranks inherit them.
--             Names: core, nofile, stack, memlock, nproc, as, fsize, cpu, data.
--   wdir    = "/path"          the agent's working directory on the node
--   prolog  = "sh command"     run by the agent at boot before it calls back; a failure fails
--                              the node at stage "prolog" with the command's last line
--   epilog  = "sh command"     run when the agent ends (halt, or a signal) and by `lamkit wipe`
--   wrap    = { "nice", "-n", "5" }  a prefix command the agent runs under on the node (env,
--                              nice, numactl, taskset ...: one that execs the rest of its argv);
--                              the agent execs it before anything else, so the limits, prolog,
--                              callback and the ranks all run under it. A wrapper that cannot
--                              run fails the node at stage "prolog".
-- prolog and epilog run with LAMKIT_RTE_EVENT (boot, halt, wipe), LAMKIT_NODE (the node
-- number), LAMKIT_UNIVERSE_ID, stdin from /dev/null, output to the agent's log (at boot: to
-- the launch log, whose last line boot shows on failure). Each may run 60 s at most.
local M = {}

function M.agent(node, u)
  return {
    passenv = {},
    env = {},
    limits = {},
    wdir = nil,
    prolog = nil,
    epilog = nil,
    wrap = nil,
  }
end

return M
