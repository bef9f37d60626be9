-- tests/lua/test_modules.lua: boot modules: init priorities, option checks, host verification,
-- and the exact launch argv of ssh, rsh, slurm (per node and one-shot) and local.
-- usage: lamkit lua test_modules.lua TMPDIR
local dir = arg[0]:match("^(.*)/") or "."
local t = dofile(dir .. "/tap.lua")
local S = require("schema")
local ssh, rsh = require("boot.ssh"), require("boot.rsh")
local slurm, loc = require("boot.slurm"), require("boot.local")
local tmp = assert(arg[1], "TMPDIR")

local function schema(name, text) return S.load(t.write(tmp .. "/" .. name, text)) end
local agent = { "lamkit", "agent", "--boot", "10.0.0.1:4711", "--node", "0" }

os.execute("mkdir -p " .. tmp .. "/bin")
t.write(tmp .. "/bin/ssh", "#!/bin/sh\n")
t.write(tmp .. "/id_test", "key\n")
t.env({ PATH = tmp .. "/bin", SLURM_JOB_ID = false, HOME = tmp })

-- init priorities
local remote = schema("r.lua", 'node "n1"\nnode "n2"\n')
t.is(ssh.init("boot", remote), 40, "ssh: 40 for remote nodes when ssh is in PATH")
t.is({ rsh.init("boot", remote) }, { nil, "no 'rsh' client found in PATH" }, "rsh: needs rsh")
t.is({ slurm.init("boot", remote) },
  { nil, "not inside a Slurm allocation (SLURM_JOB_ID is not set)" }, "slurm: needs SLURM_JOB_ID")
t.is(loc.init("boot", remote), 0, "local: 0 (only when forced) for other hosts")
local here = schema("h.lua", 'node "localhost"\nnode "' .. lamkit.hostname() .. '"\nnode "127.0.0.2"\n')
t.is(loc.init("boot", here), 90, "local: 90 when every node is this host")
local none = schema("none.lua", "boot = 'slurm'\n")
t.is({ ssh.init("boot", none) }, { nil, "the schema lists no nodes" }, "ssh: no nodes")
t.env({ PATH = tmp .. "/bin", SLURM_JOB_ID = "42", HOME = tmp })
t.is(slurm.init("boot", none), 80, "slurm: 80 inside an allocation")

-- ssh options and argv
local s = schema("ssh.lua", [[
ssh = { port = 2222, identity = "~/id_test", user = "ops", options = { "-oConnectTimeout=5" } }
node "n1" { user = "alice" }
node "n2" { prefix = "/opt/my lamkit" }
]])
local o = ssh.parse_options(s)
t.is(o, { command = "ssh", port = 2222, identity = tmp .. "/id_test", user = "ops",
  options = { "-oConnectTimeout=5" }, batch = true, kex = "^curve25519-sha256" },
  "ssh options parsed, ~ expanded")
ssh.prepare_boot(s, o)
t.is(ssh.start_rte_proc(s.nodes[1], agent, o), { "ssh", "-o", "BatchMode=yes", "-o", "KexAlgorithms=^curve25519-sha256", "-T", "-p", "2222",
  "-l", "alice", "-i", tmp .. "/id_test", "-oConnectTimeout=5", "n1", "lamkit", "agent", "--boot",
  "10.0.0.1:4711", "--node", "0" }, "ssh argv: node user wins over ssh.user")
t.is(ssh.start_rte_proc(s.nodes[2], { "/opt/my lamkit/bin/lamkit", "agent", "x y", "it's" }, o),
  { "ssh", "-o", "BatchMode=yes", "-o", "KexAlgorithms=^curve25519-sha256", "-T", "-p", "2222", "-l", "ops", "-i", tmp .. "/id_test",
    "-oConnectTimeout=5", "n2", "'/opt/my lamkit/bin/lamkit'", "agent", "'x y'", "'it'\\''s'" },
  "ssh argv: remote words quoted for the remote shell")
t.is(ssh.start_rte_proc(s.nodes[2], { "~/lamkit/bin/lamkit", "agent" }, o)[15],
  "~/lamkit/bin/lamkit", "ssh argv: ~/ stays expandable remotely")
local nokex = schema("nokex.lua", 'ssh = { kex = false }\nnode "n1"\n')
t.is(ssh.start_rte_proc(nokex.nodes[1], agent, ssh.parse_options(nokex))[4], "-T",
  "ssh.kex = false: the client's own key exchange")
local plain = schema("plain.lua", 'node "n1"\n')
t.is(ssh.start_rte_proc(plain.nodes[1], agent, ssh.parse_options(plain)),
  { "ssh", "-o", "BatchMode=yes", "-o", "KexAlgorithms=^curve25519-sha256", "-T", "n1", "lamkit", "agent", "--boot", "10.0.0.1:4711",
    "--node", "0" }, "ssh argv without options")
local function obad(name, text, mod, want, desc)
  local p = t.write(tmp .. "/" .. name, text)
  local sc = S.load(p)
  t.raises(function() mod.prepare_boot(sc, mod.parse_options(sc)) end, p .. ":" .. want, desc)
end
obad("o1.lua", 'node "a"\nssh = { port = 70000 }\n', ssh,
  "2: ssh.port must be a port number 1-65535, not 70000", "ssh: bad port")
obad("o2.lua", 'ssh = { prot = 22 }\n', ssh,
  "1: ssh: unknown option 'prot' (known: batch, command, identity, kex, options, port, user, verify)",
  "ssh: unknown option")
obad("o3.lua", 'ssh = { options = "-v" }\n', ssh, "1: ssh.options must be a list of strings",
  "ssh: options not a list")
obad("o4.lua", 'ssh = { identity = "/nonexistent/id" }\n', ssh,
  "1: ssh.identity '/nonexistent/id' does not exist", "ssh: missing identity file")
obad("o5.lua", 'rsh = { port = 22 }\n', rsh,
  "1: rsh: unknown option 'port' (known: command, options, user, verify)", "rsh: no port")
obad("o6.lua", '\nslurm = { oneshot = "yes" }\n', slurm, "2: slurm.oneshot must be true or false",
  "slurm: oneshot not a boolean")

-- rsh argv
local rs = schema("rsh.lua", 'node "n2" { user = "bob" }\n')
t.is(rsh.start_rte_proc(rs.nodes[1], { "lamkit", "agent", "a b" }, rsh.parse_options(rs)),
  { "rsh", "-l", "bob", "n2", "lamkit", "agent", "'a b'" }, "rsh argv")

-- ssh classification for recon
t.is({ ssh.classify({ ok = false, stage = "launch", exit = 255 }) }, { false, false },
  "ssh exit 255: unreachable")
t.is({ ssh.classify({ ok = false, stage = "launch", exit = 127 }) }, { true, false },
  "ssh exit 127: reachable, binary does not run")
t.is({ ssh.classify({ ok = true }) }, { true, true }, "up: reachable and runs")

-- verify_nodes through lamkit.resolve (mocked here; the C side provides it)
lamkit.resolve = function(h)
  if h == "ghost" then return nil, "Name or service not known" end
  return "10.0.0." .. #h
end
local vs = schema("v.lua", 'node "n1"\n\nnode "ghost"\n')
t.raises(function() ssh.verify_nodes(vs, {}, false) end,
  tmp .. "/v.lua:3: cannot resolve host 'ghost': Name or service not known (if only your ssh " ..
  "configuration knows it, set ssh.verify = false)", "unresolvable host")
t.is(ssh.verify_nodes(vs, {}, true), { [2] = "cannot resolve host 'ghost': Name or service not " ..
  "known (if only your ssh configuration knows it, set ssh.verify = false)" },
  "collect mode returns the problems")
t.is(ssh.verify_nodes(vs, { verify = false }, false), {}, "verify = false: names pass unresolved")
t.is(loc.verify_nodes(vs, {}, false), {}, "local: names are labels, nothing resolved")
lamkit.resolve = nil

-- slurm: the allocation
t.env({ SLURM_JOB_ID = "42", SLURM_JOB_NODELIST = "n[1-4]", SLURM_JOB_CPUS_PER_NODE = "2(x3),1" })
local sa = schema("sa.lua", "boot = 'slurm'\n")
local so = slurm.parse_options(sa)
slurm.allocate_nodes(sa, so)
t.is(sa.nodes, { { host = "n1", cpu = 2, schedule = true }, { host = "n2", cpu = 2, schedule = true },
  { host = "n3", cpu = 2, schedule = true }, { host = "n4", cpu = 1, schedule = true } },
  "slurm: no schema nodes -> the allocation is the node list")
local sb = schema("sb.lua", 'node "n2"\nnode "n4" { cpu = 3 }\n')
slurm.allocate_nodes(sb, slurm.parse_options(sb))
t.is({ sb.nodes[1].cpu, sb.nodes[2].cpu }, { 2, 3 },
  "slurm: schema nodes take the allocation's cpus unless they set cpu")
local sc = schema("sc.lua", 'node "n2"\n\nnode "n9"\n')
t.raises(function() slurm.allocate_nodes(sc, {}) end,
  tmp .. "/sc.lua:3: host 'n9' is not in the Slurm allocation (n[1-4])", "slurm: host outside")
t.env({ SLURM_JOB_ID = "42", SLURM_JOB_NODELIST = "n[1-4]", SLURM_JOB_CPUS_PER_NODE = "2(x3)" })
t.raises(function() slurm.allocate_nodes(schema("sd.lua", ""), {}) end,
  "SLURM_JOB_CPUS_PER_NODE '2(x3)' gives 3 counts for 4 nodes in 'n[1-4]'", "slurm: cpu mismatch")
t.env({ SLURM_JOB_ID = "42", SLURM_JOB_NODELIST = false, SLURM_NODELIST = false })
t.raises(function() slurm.allocate_nodes(schema("se.lua", ""), {}) end,
  "SLURM_JOB_NODELIST is not set: not inside a Slurm allocation", "slurm: no node list")
t.env({ SLURM_JOB_ID = "42", SLURM_JOB_NODELIST = "n[1-", SLURM_JOB_CPUS_PER_NODE = false })
t.raises(function() slurm.allocate_nodes(schema("sf.lua", ""), {}) end,
  "SLURM_JOB_NODELIST: unbalanced '[' in host list 'n[1-'", "slurm: bad node list")

-- slurm argv
local flags = { "--overlap", "--mem=0", "--cpu-bind=none", "--mpi=none", "--input=all",
  "--export=ALL", "--kill-on-bad-exit=0", "--job-name=lamkit-agent" }
local function cat(...)
  local out = {}
  for _, l in ipairs({ ... }) do for _, w in ipairs(l) do out[#out + 1] = w end end
  return out
end
t.is(slurm.start_rte_proc({ host = "n3" }, { "/x/lamkit", "agent", "a b" }, so),
  cat({ "srun", "--nodes=1", "--ntasks=1", "--nodelist=n3" }, flags, { "/x/lamkit", "agent", "a b" }),
  "slurm argv per node (no shell: words are not quoted)")
t.is(slurm.start_rte_procs(sa.nodes, { "/x/lamkit", "agent" }, so),
  cat({ "srun", "--nodes=4", "--ntasks=4", "--ntasks-per-node=1", "--nodelist=n[1-4]" }, flags,
    { "/x/lamkit", "agent" }), "slurm one-shot argv")
local sx = schema("sx.lua", 'slurm = { command = "/usr/bin/srun", options = { "--quiet" }, ' ..
  'oneshot = false }\n')
local xo = slurm.parse_options(sx)
t.is(slurm.start_rte_proc({ host = "n1" }, { "l" }, xo)[1], "/usr/bin/srun", "slurm.command")
t.is(slurm.start_rte_proc({ host = "n1" }, { "l" }, xo)[13], "--quiet", "slurm.options appended")
t.is({ slurm.start_rte_procs(sa.nodes, { "l" }, xo) }, { nil, "slurm.oneshot is false" },
  "slurm one-shot can be switched off")

-- local argv is the agent argv
t.is(loc.start_rte_proc({ host = "x" }, agent, {}), agent, "local argv = agent argv")
t.env(nil)
return t.done() == 0 and 0 or 1
