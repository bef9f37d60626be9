-- tests/lua/test_driver.lua: the boot driver (lua/boot.lua) end to end with the mock ctx: module
-- choice and forcing, argv handed to ctx:start, one-shot slurm, bad schemas start nothing,
-- recon rows.   usage: lamkit lua test_driver.lua TMPDIR
local HINT = " (if only your ssh configuration knows it, set ssh.verify = false)"
local dir = arg[0]:match("^(.*)/") or "."
local t = dofile(dir .. "/tap.lua")
local mock = dofile(dir .. "/mock.lua")
local boot = require("boot")
local tmp = assert(arg[1], "TMPDIR")
local function w(name, text) return t.write(tmp .. "/" .. name, text) end

os.execute("mkdir -p " .. tmp .. "/bin")
t.write(tmp .. "/bin/ssh", "")
local base_env = { PATH = tmp .. "/bin", SLURM_JOB_ID = false, LAMKIT_BOOT = false }
t.env(base_env)
lamkit.resolve = function(h)
  if h:match("^ghost") then return nil, "Name or service not known" end
  return "10.1.0.1"
end
local opts = { self = "/usr/local/bin/lamkit" }

-- local, forced in the schema, tree
local p = w("local.lua", 'boot = "local"\nalgorithm = "tree"\nfanout = 2\n' ..
  'for i = 1, 7 do node("fake" .. i) end\n')
local ctx = mock.new()
local res = boot.run(ctx, p, opts)
t.is({ res.module, res.algorithm, #res.up, #res.failed }, { "local", "tree", 7, 0 },
  "local tree boot of 7 fake nodes")
t.is(ctx.starts[1].argv, { "/usr/local/bin/lamkit", "agent", "--boot", "10.0.0.1:4711", "--node",
  "0" }, "local: the origin's own binary with ctx:agent_args")
t.is(math.floor(res.elapsed / 0.1 + 0.5), 3, "local tree fanout 2, 7 nodes: 3 hops")
t.is(res.nodes[3].host, "fake3", "result carries the node list")
t.ok(ctx.logs[1]:find("module local %(priority 0%), algorithm tree, fanout 2") ~= nil,
  "first log line names module and algorithm", ctx.logs[1])

-- ssh chosen automatically for remote hosts, windowed by default
p = w("ssh.lua", 'ssh = { port = 2200 }\nnode "n1" { user = "al" }\nnode "n2" { prefix = "/opt/lk" }\n' ..
  'node "n3" { program = "/x/lamkit" }\n')
ctx = mock.new()
res = boot.run(ctx, p, opts)
t.is({ res.module, res.algorithm, #res.up }, { "ssh", "windowed", 3 }, "ssh chosen, windowed default")
local a1 = ctx.starts[1].argv
t.is({ table.unpack(a1, 1, 12) }, { "ssh", "-o", "BatchMode=yes", "-o",
  "KexAlgorithms=^curve25519-sha256", "-T", "-p", "2200", "-l", "al", "n1", "sh" },
  "ssh argv reaches ctx:start: the find-or-ship script")
t.is({ table.unpack(a1, 16, #a1) }, { "auto", "/usr/local/bin/lamkit", "''", "-", "0", "agent",
  "--boot", "10.0.0.1:4711", "--node", "0" }, "script words: mode, origin path, agent argv")
t.is(ctx.starts[2].argv[10], "/opt/lk/bin/lamkit", "prefix -> <prefix>/bin/lamkit")
t.is(ctx.starts[3].argv[10], "/x/lamkit", "program wins")
for _, s in ipairs(ctx.starts) do
  for _, word in ipairs(s.argv) do
    if word:find("key", 1, true) then t.ok(false, "no key in argv") end
  end
end

-- shipping: a node that answers exit 97 is started once more from the origin with the binary;
-- in a tree its parent becomes the origin. ship = "never" and recon do not ship.
local sopts = { self = "/o/lamkit", build = "lamkit 9 git x musl", self_sha256 = ("ab"):rep(32),
  self_size = 1234 }
p = w("ship.lua", 'algorithm = "tree"; fanout = 1\nfor i = 1, 3 do node("s" .. i) {} end\n')
ctx = mock.new({ fail = { [2] = { stage = "launch", err = "exit 97", exit = 97, shippable = true } } })
res = boot.run(ctx, p, sopts)
t.is({ #res.up, #res.failed, ctx.reships }, { 3, 0, 1 }, "tree: s2 needed a copy and got one")
t.is({ ctx.starts[2].via, ctx.starts[3].via, ctx.starts[4].via }, { 1, nil, 2 },
  "s2 first via s1, then from the origin; s3 via s2")
t.is(res.parent[2], 0, "s2's parent is the origin")
local r = ctx.starts[3].argv
t.is({ r[#r - 9], r[#r - 5], r[#r - 4] }, { "recv", "1234", "agent" }, "recv argv with the size")
t.ok(table.concat(ctx.logs, "\n"):find("s2: no lamkit of this build there; shipping ababababab") ~=
  nil, "the shipping is logged")
t.ok(table.concat(ctx.logs, "\n"):find("s2 up %([0-9.]+ s, started by origin%)") ~= nil,
  "and s2 is started by the origin")
ctx = mock.new({ fail = { [2] = { stage = "launch", err = "exit 97", exit = 97, shippable = true } } })
res = boot.run(ctx, p, { self = sopts.self, build = sopts.build, self_sha256 = sopts.self_sha256,
  self_size = 1234, ship = "never" })
t.is({ #res.up, #res.failed, ctx.reships }, { 2, 1, nil }, "ship = never: no second start")
t.is(ctx.starts[1].argv[#ctx.starts[1].argv - 9], "never", "the script gets mode never")
ctx = mock.new({ fail = { [2] = { stage = "launch", err = "exit 97", exit = 97, shippable = true } } })
res = boot.recon(ctx, p, sopts)
t.is({ res.rows[2].ok, res.rows[2].reachable, res.rows[2].runs, ctx.reships },
  { false, true, false, nil }, "recon: no shipping, the node does not run lamkit")
t.ok(res.rows[2].err:find("find: no lamkit of this build on s2 %(boot would ship one") ~= nil,
  "recon says boot would ship", res.rows[2].err)
t.raises(function() boot.run(mock.new(), w("badship.lua", 'ship = "sometimes"\nnode "x" {}\n'),
  sopts) end, tmp .. '/badship.lua:1: ship must be "auto", "always" or "never", not \'sometimes\'',
  "bad ship setting")

-- the RTE: the schema's own file gives per-node agent words; recon gets none; errors start nothing
w("rte1.lua", 'return { agent = function(node, u) return { env = { A = node.host .. u.size },\n' ..
  'passenv = { "HOME" }, limits = { nofile = 99, core = "unlimited" }, wdir = "/w",\n' ..
  'prolog = "p " .. node.index, epilog = "e" } end }\n')
local rp = w("rtes.lua", 'boot = "local"; rte = "rte1.lua"\nnode "x1" {}\nnode "x2" {}\n')
ctx = mock.new()
t.env({ PATH = tmp .. "/bin", SLURM_JOB_ID = false, LAMKIT_BOOT = false, HOME = "/h" })
res = boot.run(ctx, rp, opts)
t.is({ table.unpack(ctx.starts[2].argv, 7) }, { "--rte-env", "A=x22", "--rte-env", "HOME=/h",
  "--rte-limit", "core=unlimited", "--rte-limit", "nofile=99", "--rte-wdir", "/w",
  "--rte-prolog", "p 2", "--rte-epilog", "e" }, "rte words for node 2 after ctx:agent_args")
ctx = mock.new()
res = boot.recon(ctx, rp, opts)
t.is(#ctx.starts[1].argv, 6, "recon: no RTE words")
ctx = mock.new()
res = boot.wipe(ctx, rp, opts)
t.is({ table.unpack(ctx.starts[1].argv, 7) }, { "--rte-epilog", "e" }, "wipe: the epilog only")
w("rte2.lua", 'return { agent = function(node) return { limits = { nofiles = 1 } } end }\n')
rp = w("rtes2.lua", 'boot = "local"; rte = "rte2.lua"\nnode "x1" {}\n')
ctx = mock.new()
t.raises(function() boot.run(ctx, rp, opts) end, tmp .. "/rte2.lua: node x1: limits: unknown " ..
  "limit 'nofiles' (known: core, nofile, stack, memlock, nproc, as, fsize, cpu, data)", "bad limit")
t.is(#ctx.starts, 0, "nothing started after an RTE error")
rp = w("rtes3.lua", 'boot = "local"; rte = "nosuch.lua"\nnode "x1" {}\n')
t.like(t.err(function() boot.run(mock.new(), rp, opts) end), "^" .. tmp:gsub("%p", "%%%0") ..
  "/rtes3.lua:1: rte: cannot open .*nosuch.lua", "a missing RTE file: schema line and path")
t.env(base_env)

-- LAMKIT_BOOT_<MODULE>_PRIORITY: rsh (10) over ssh (40) when raised; a bad value is one line
t.write(tmp .. "/bin/rsh", "")
t.env({ PATH = tmp .. "/bin", SLURM_JOB_ID = false, LAMKIT_BOOT = false,
  LAMKIT_BOOT_RSH_PRIORITY = "50" })
res = boot.run(mock.new(), p, opts)
t.is(res.module, "rsh", "LAMKIT_BOOT_RSH_PRIORITY=50 beats ssh's 40")
t.env({ PATH = tmp .. "/bin", SLURM_JOB_ID = false, LAMKIT_BOOT = false,
  LAMKIT_BOOT_RSH_PRIORITY = "high" })
t.raises(function() boot.run(mock.new(), p, opts) end,
  "LAMKIT_BOOT_RSH_PRIORITY: must be an integer priority, not 'high'", "a bad priority")
t.env({ PATH = tmp .. "/bin", SLURM_JOB_ID = false, LAMKIT_BOOT = false,
  LAMKIT_BOOT_RSH_PRIORITY = false, LAMKIT_BOOT_SSH_PRIORITY = "0" })
res = boot.run(mock.new(), p, opts)
t.is(res.module, "rsh", "LAMKIT_BOOT_SSH_PRIORITY=0: ssh only when forced, rsh wins")
t.env(base_env)

-- forcing: opts.boot > LAMKIT_BOOT > schema boot=
t.env({ PATH = tmp .. "/bin", SLURM_JOB_ID = false, LAMKIT_BOOT = "local" })
res = boot.run(mock.new(), p, opts)
t.is(res.module, "local", "LAMKIT_BOOT forces a module")
res = boot.run(mock.new(), p, { self = "x", boot = "ssh" })
t.is(res.module, "ssh", "opts.boot beats LAMKIT_BOOT")
t.env({ PATH = tmp .. "/bin", SLURM_JOB_ID = false, LAMKIT_BOOT = "nosuch" })
t.raises(function() boot.run(mock.new(), p, opts) end,
  "LAMKIT_BOOT: unknown boot module 'nosuch' (known: local, rsh, slurm, ssh)", "unknown LAMKIT_BOOT")
t.env(base_env)
local bp = w("bootbad.lua", 'node "n1"\nboot = "tcp"\n')
ctx = mock.new()
t.raises(function() boot.run(ctx, bp, opts) end,
  bp .. ":2: unknown boot module 'tcp' (known: local, rsh, slurm, ssh)", "unknown schema boot=")
t.is(#ctx.starts, 0, "nothing started")
bp = w("bootbad2.lua", 'node "n1"\nboot = "hostlist"\n')
t.raises(function() boot.run(mock.new(), bp, opts) end,
  bp .. ":2: 'hostlist' is not a boot module (known: local, rsh, slurm, ssh)", "helper is no module")
bp = w("bootbad3.lua", 'boot = "slurm"\nnode "n1"\n')
t.raises(function() boot.run(mock.new(), bp, opts) end,
  bp .. ":1: boot module 'slurm' cannot be used here: not inside a Slurm allocation " ..
  "(SLURM_JOB_ID is not set)", "forced module that cannot run here")
t.env({ PATH = tmp .. "/empty", SLURM_JOB_ID = false, LAMKIT_BOOT = false })
t.raises(function() boot.run(mock.new(), p, opts) end,
  p .. ": no boot module can start this schema (local: only when forced; slurm: not inside a " ..
  "Slurm allocation (SLURM_JOB_ID is not set); ssh: no 'ssh' client found in PATH; rsh: no 'rsh' " ..
  "client found in PATH)", "no module fits: every reason listed")
t.env(base_env)

-- a bad schema or an unresolvable host starts nothing
ctx = mock.new()
local gp = w("ghost.lua", 'node "n1"\nnode "ghost1"\n')
t.raises(function() boot.run(ctx, gp, opts) end,
  gp .. ":2: cannot resolve host 'ghost1': Name or service not known" .. HINT,
  "unresolvable host at verify")
t.is(#ctx.starts, 0, "nothing started after a verify error")
local cp = w("cpu.lua", 'node "n1"\nnode "n2" { cpu = 0 }\n')
t.raises(function() boot.run(ctx, cp, opts) end, cp .. ":2: node 'n2': cpu must be a positive " ..
  "integer, not 0", "bad schema")
t.is(#ctx.starts, 0, "nothing started after a schema error")
t.raises(function() boot.run(ctx, w("empty.lua", "boot = 'ssh'\n"), opts) end,
  tmp .. "/empty.lua:1: boot module 'ssh' cannot be used here: the schema lists no nodes",
  "no nodes")
local op = w("one.lua", 'algorithm = "oneshot"\nnode "n1"\n')
t.raises(function() boot.run(mock.new(), op, opts) end, op .. ":1: algorithm 'oneshot' cannot be " ..
  "used with boot module 'ssh': boot module has no one-shot start", "oneshot needs a module that can")

-- slurm: one srun for all, nodes from the allocation
t.env({ SLURM_JOB_ID = "7", SLURM_JOB_NODELIST = "c[01-16]", SLURM_JOB_CPUS_PER_NODE = "4(x16)",
  LAMKIT_BOOT = false })
ctx = mock.new()
res = boot.run(ctx, w("sl.lua", ""), opts)
t.is({ res.module, res.algorithm, #res.up, #ctx.groups, #ctx.starts }, { "slurm", "oneshot", 16, 1, 0 },
  "slurm: one-shot start of the 16-node allocation")
t.is(ctx.groups[1].argv[1], "srun", "one-shot argv is srun")
t.is(ctx.groups[1].argv[5], "--nodelist=c[01-16]", "one-shot nodelist compressed")
t.is(ctx.groups[1].argv[14], "/usr/local/bin/lamkit", "slurm runs the origin's path")
t.is(ctx.groups[1].argv[19], "by-name", "group agents get ctx:agent_args(nil)")
t.is(ctx.groups[1].hosts[16], "c16", "start_group gets the host names")
ctx = mock.new()
res = boot.run(ctx, w("sl2.lua", 'algorithm = "tree"\n'), opts)
t.is({ res.algorithm, #ctx.starts, math.floor(res.elapsed / 0.1 + 0.5) }, { "tree", 16, 2 },
  "slurm with algorithm tree: one srun per node, 2 hops")
t.is(ctx.starts[16].argv[4], "--nodelist=c16", "per-node srun")
local noctx = mock.new()
noctx.start_group = false -- hide the mock's method
res = boot.run(noctx, w("sl3.lua", ""), opts)
t.is(res.algorithm, "windowed", "without ctx:start_group the default falls back to windowed")
t.env(base_env)

-- opts override the schema's parameters
ctx = mock.new()
res = boot.run(ctx, w("par.lua", 'boot = "local"\nalgorithm = "linear"\nnodes "x[1-10]"\n'),
  { algorithm = "windowed", window = 10 })
t.is({ res.algorithm, math.floor(res.elapsed / 0.1 + 0.5) }, { "windowed", 1 },
  "opts.algorithm and opts.window win over the schema")
t.raises(function() boot.run(mock.new(), w("par2.lua", 'boot="local"\nnode "a"\n'),
  { algorithm = "star" }) end, "unknown algorithm 'star'", "unknown opts.algorithm")

-- a schema given as a table (wipe/grow from the universe state)
res = boot.run(mock.new(), { nodes = { { host = "localhost" } } }, opts)
t.is({ res.module, #res.up, res.file }, { "local", 1, "(universe)" }, "a node table instead of a path")

-- failure reporting through the driver
ctx = mock.new({ fail = { [2] = { stage = "auth", err = "wrong key" } }, hang = { [3] = true } })
res = boot.run(ctx, w("f.lua", 'timeout = 2\nnodes "n[1-4]"\n'), opts)
t.is(res.failed, { { index = 2, host = "n2", stage = "auth", err = "wrong key" },
  { index = 3, host = "n3", stage = "timeout", err = "no answer within 2 s" } },
  "driver result names node, stage and error")

-- recon: unresolvable hosts become rows, ssh exit codes are classified
ctx = mock.new({ fail = { [2] = { stage = "launch", err = "ssh: connect to host n2: No route",
  exit = 255 }, [3] = { stage = "launch", err = "lamkit: not found", exit = 127 } },
  info = { [1] = { version = "0.1", cpus = 8 } } })
res = boot.recon(ctx, w("rc.lua", 'node "n1"\nnode "n2"\nnode "n3"\nnode "ghost4"\n'), opts)
local r = res.rows
t.is({ r[1].ok, r[1].reachable, r[1].runs, r[1].version, r[1].cpus }, { true, true, true, "0.1", 8 },
  "recon row: node up with version and cpus")
t.is({ r[2].reachable, r[2].runs, r[2].stage }, { false, false, "launch" }, "recon row: unreachable")
t.is({ r[3].reachable, r[3].runs }, { true, false }, "recon row: binary does not run")
t.is({ r[4].reachable, r[4].stage, r[4].err }, { false, "resolve",
  "cannot resolve host 'ghost4': Name or service not known" .. HINT }, "recon row: unresolvable host")
local vias = 0
for _, s in ipairs(ctx.starts) do if s.via then vias = vias + 1 end end
t.is({ #ctx.starts, vias }, { 3, 0 }, "recon starts from the origin only and skips the unresolvable")
t.is(ctx.violations, {}, "recon kept the ctx contract")
lamkit.resolve = nil
t.env(nil)
return t.done() == 0 and 0 or 1
