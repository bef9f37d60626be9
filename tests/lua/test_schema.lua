-- tests/lua/test_schema.lua: schema loading: the Lua DSL, bhost files, format detection, the
-- search path, and every error as one exact "file:line: what" line.
-- usage: lamkit lua test_schema.lua TMPDIR TOPDIR   (run with TMPDIR as the current directory)
local dir = arg[0]:match("^(.*)/") or "."
local t = dofile(dir .. "/tap.lua")
local S = require("schema")
local tmp, top = assert(arg[1], "TMPDIR"), assert(arg[2], "TOPDIR")

local function w(name, text) return t.write(tmp .. "/" .. name, text) end
local function bad(name, text, want, desc)
  local p = w(name, text)
  t.raises(function() S.load(p) end, p .. ":" .. want, desc or want)
end

-- the example from the design, as a Lua schema
local good = w("good.lua", [[
boot = "ssh"            -- module
algorithm = "tree"
fanout = 4; window = 5
ssh = { port = 22, identity = "~/.ssh/id_ed25519", options = { "-oConnectTimeout=5" } }
node "n1" { cpu = 2, user = "alice", prefix = "/opt/lamkit" }
node "n2" { cpu = 4, gpus = 1 }
for i = 3, 8 do node("n" .. i) { cpu = 2 } end
local me = getenv("USER")
node { host = "n9", label = "x" .. string.rep("a", 3) }
node "n10"
nodes "r[1-2]" { cpu = 3 }
timeout = 12.5
]])
local s = S.load(good)
t.is(s.file, good, "file is the path loaded")
t.is(s.format, "lua", "format lua")
t.is({ s.boot, s.algorithm, s.fanout, s.window, s.timeout }, { "ssh", "tree", 4, 5, 12.5 },
  "settings")
t.is(s.options.ssh, { port = 22, identity = "~/.ssh/id_ed25519",
  options = { "-oConnectTimeout=5" } }, "module options kept as given")
t.is({ s.lines.boot, s.lines.algorithm, s.lines.fanout, s.lines.ssh }, { 1, 2, 3, 4 },
  "setting lines recorded")
t.is(#s.nodes, 12, "12 nodes")
t.is(s.nodes[1], { host = "n1", cpu = 2, user = "alice", prefix = "/opt/lamkit", line = 5,
  schedule = true }, "node n1 with its line")
t.is(s.nodes[2], { host = "n2", cpu = 4, gpus = 1, line = 6, schedule = true },
  "unknown keys pass through")
t.is({ s.nodes[3].host, s.nodes[3].line, s.nodes[8].host, s.nodes[8].line }, { "n3", 7, "n8", 7 },
  "nodes from a loop carry the loop's line")
t.is(s.nodes[9], { host = "n9", label = "xaaa", cpu = 1, schedule = true, line = 9 },
  "table form and string library")
t.is(s.nodes[10], { host = "n10", cpu = 1, schedule = true, line = 10 }, "bare node gets defaults")
t.is({ s.nodes[11].host, s.nodes[12].host, s.nodes[12].cpu }, { "r1", "r2", 3 },
  "nodes with a host list")
t.ok(S.given(s.nodes[1], "cpu") and not S.given(s.nodes[10], "cpu"), "given() tells set keys")

-- a node's slots from its shape (Slurm's names), cpu winning when both are given
local sh = S.load(w("shape.lua", [[
node "s1" { sockets = 2, cores_per_socket = 8, threads_per_core = 2 }
node "s2" { sockets = 2, cores_per_socket = 4 }
node "s3" { sockets = 2, cores_per_socket = 8, cpu = 12 }
]]))
t.is({ sh.nodes[1].cpu, sh.nodes[2].cpu, sh.nodes[3].cpu }, { 32, 8, 12 },
  "slots from sockets x cores_per_socket x threads_per_core unless cpu is given")
t.ok(not S.given(sh.nodes[1], "cpu"), "slots from the shape do not count as cpu given")
bad("shape.lua", 'node "s" { sockets = 0 }\n', "1: node 's': sockets must be a positive integer, not 0",
  "a bad shape key")

local d = S.load(w("defaults.lua", [[
defaults = { cpu = 2, user = "bob", schedule = false }
node "a" { cpu = 4 }
node "b"
]]))
t.is({ d.nodes[1].cpu, d.nodes[1].user, d.nodes[2].cpu, d.nodes[2].schedule }, { 4, "bob", 2, false },
  "defaults fill missing keys only")
t.ok(S.given(d.nodes[2], "cpu"), "defaults count as given")

-- sandbox: no io, os, require, load, debug
for _, name in ipairs({ "io", "os", "require", "load", "dofile", "debug", "loadfile",
  "setmetatable", "collectgarbage", "pcall", "xpcall", "coroutine", "rawset", "getmetatable" }) do
  local p = w("sb_" .. name .. ".lua", "local x = " .. name .. "\nassert(x == nil, 'has " ..
    name .. "')\n")
  t.ok(pcall(S.load, p), "sandbox has no " .. name)
end
bad("io.lua", 'node "a"\nio.open("/etc/passwd")\n',
  "2: attempt to index a nil value (global 'io')", "calling io fails with file:line")

-- errors, each one exact line
bad("type.lua", 'node "a" { cpu = 1, f = function() end }\n',
  "1: node 'a': value of 'f' has type function (allowed: string, number, boolean)",
  "unknown value type")
bad("type2.lua", 'node "a" { opts = {} }\n',
  "1: node 'a': value of 'opts' has type table (allowed: string, number, boolean)",
  "table value")
bad("dup.lua", 'node "a"\nnode "b"\nnode "A" { cpu = 2 }\n',
  "3: duplicate host 'A' (first at line 1)", "duplicate host (case-insensitive)")
bad("dup2.lua", 'nodes "n[1-3]"\n\nnode "n2"\n', "3: duplicate host 'n2' (first at line 1)",
  "duplicate host from a host list")
bad("cpu0.lua", 'node "a" { cpu = 0 }\n', "1: node 'a': cpu must be a positive integer, not 0",
  "cpu 0")
bad("cpuf.lua", '\nnode "a" { cpu = 2.5 }\n',
  "2: node 'a': cpu must be a positive integer, not 2.5", "cpu 2.5")
bad("cpus.lua", 'node "a" { cpu = "many" }\n',
  "1: node 'a': cpu must be a positive integer, not 'many'", "cpu string")
bad("cpud.lua", 'defaults = { cpu = -1 }\n', "1: defaults: cpu must be a positive integer, not -1",
  "cpu in defaults")
bad("alg.lua", 'boot = "ssh"\nalgorithm = "spiral"\n',
  "2: unknown algorithm 'spiral' (known: linear, windowed, tree, thread, oneshot)", "unknown algorithm")
bad("fan.lua", 'fanout = 0\n', "1: fanout must be a positive integer, not 0", "fanout 0")
bad("fan2.lua", 'fanout = "x"\n', "1: fanout must be a positive integer, not 'x'", "fanout string")
bad("win.lua", '\n\nwindow = 1.5\n', "3: window must be a positive integer, not 1.5", "window 1.5")
bad("to.lua", 'timeout = 0\n', "1: timeout must be a positive number of seconds, not 0",
  "timeout 0")
bad("boot.lua", 'boot = 3\n', "1: boot must be a module name string, not 3", "boot type")
bad("tp.lua", 'transport = 5\n', "1: transport must be a policy string such as \"shm+tcp,udp\" " ..
  "or a function(job) returning one, not 5", "transport type")
bad("tp2.lua", 'transport = "shm+tcp,carrier-pigeon"\n', "1: transport 'shm+tcp,carrier-pigeon': " ..
  "'carrier-pigeon' is not a path (tcp at most twice, udp once, *WEIGHT 1-1000)", "transport policy checked")
bad("typo.lua", 'algoritm = "tree"\n',
  "1: unknown setting 'algoritm' (settings: boot, algorithm, fanout, window, timeout, " ..
  "ship, promiscuous, rte, transport, watch, defaults, <module> = {...}; use 'local' for your own variables)", "a typo in a setting")
bad("typo2.lua", 'sssh = { port = 1 }\n',
  "1: unknown setting 'sssh' (settings: boot, algorithm, fanout, window, timeout, " ..
  "ship, promiscuous, rte, transport, watch, defaults, <module> = {...}; use 'local' for your own variables)", "options for no module")
bad("builtin.lua", 'node = 1\n', "1: cannot assign to built-in 'node'", "assign to a built-in")
bad("host.lua", 'node "bad host" { }\n', "1: 'bad host' is not a valid host name", "bad host")
bad("host2.lua", 'node "-oProxyCommand=x"\n', "1: '-oProxyCommand=x' is not a valid host name",
  "host that looks like an option")
bad("host3.lua", 'node { cpu = 1 }\n', "1: nil is not a valid host name", "table without host")
bad("hl.lua", 'nodes "n[3-1]" { }\n', "1: descending range '3-1' in host list 'n[3-1]'",
  "bad host list")
bad("res.lua", 'node "a" { line = 4 }\n', "1: node 'a': 'line' is reserved", "reserved key")
bad("hostkey.lua", 'node "a" { host = "b" }\n',
  "1: node 'a': host is already given as the node name", "host given twice")
bad("twice.lua", 'local f = node "a"\nf { cpu = 1 }\nf { cpu = 2 }\n',
  "3: node 'a': fields given twice", "fields given twice")
bad("notab.lua", 'node "a" "b"\n', "1: node 'a': expected a { key = value } table, got string",
  "node followed by a string")
bad("sched.lua", 'node "a" { schedule = "maybe" }\n',
  "1: node 'a': schedule must be true/false (yes/no), not 'maybe'", "schedule")
bad("user.lua", 'node "a" { user = "a b" }\n', "1: node 'a': user must be a user name, not 'a b'",
  "user")
bad("rt.lua", 'node "a"\nlocal x = nil\nx.y = 1\n', "3: attempt to index a nil value (local 'x')",
  "runtime error")
bad("err.lua", '\nerror("my own message")\n', "2: my own message", "error() in a schema")
bad("loop.lua", 'node "a"\nwhile true do end\n', "2: the schema runs too long (an endless loop?)",
  "an endless loop is stopped")
bad("syn.lua", 'node "a" {\n', "2: unexpected symbol near <eof>",
  "syntax error")
bad("syn2.lua", 'boot = = "ssh"\n', "1: unexpected symbol near '='", "syntax error 2")
local e = t.err(function() S.load(w("nonstr.lua", 'error({})\n')) end)
t.is(e, tmp .. "/nonstr.lua: the schema raised a table error", "non-string error")

-- a long path: Lua shortens chunk names, our messages keep the whole path
local long = tmp .. "/" .. string.rep("d", 70)
os.execute("mkdir -p '" .. long .. "'")
local lp = t.write(long .. "/s.lua", 'node "a"\nlocal x = nil + 1\n')
t.raises(function() S.load(lp) end,
  lp .. ":2: attempt to perform arithmetic on a nil value", "long path kept (runtime)")
lp = t.write(long .. "/s2.lua", 'node "a" {\n')
t.raises(function() S.load(lp) end,
  lp .. ":2: unexpected symbol near <eof>", "long path kept (syntax)")

-- bhost files
local bh = w("hosts", [[
# a LAM boot schema
n1 cpu=2 user=alice

n2 cpu=4 gpus=1 # comment
  n3
n[4-5] cpu=2
login schedule=no prefix=/opt/lam
]])
local b = S.load(bh)
t.is(b.format, "bhost", "a host file without .lua is read as bhost")
t.is(#b.nodes, 6, "bhost: 6 nodes")
t.is(b.nodes[1], { host = "n1", cpu = 2, user = "alice", line = 2, schedule = true }, "bhost n1")
t.is(b.nodes[2], { host = "n2", cpu = 4, gpus = 1, line = 4, schedule = true },
  "bhost pass-through (numbers become numbers)")
t.is(b.nodes[3], { host = "n3", cpu = 1, line = 5, schedule = true }, "bhost bare host")
t.is({ b.nodes[5].host, b.nodes[5].cpu, b.nodes[5].line }, { "n5", 2, 6 }, "bhost host list")
t.is({ b.nodes[6].schedule, b.nodes[6].prefix }, { false, "/opt/lam" }, "bhost schedule=no")
local function bbad(name, text, want, desc)
  local p = w(name, text)
  t.raises(function() S.load(p) end, p .. ":" .. want, desc)
end
bbad("b1", "n1\nn2 cpu=0\n", "2: node 'n2': cpu must be a positive integer, not '0'", "bhost cpu 0")
bbad("b2", "n1\n# x\nn1 cpu=2\n", "3: duplicate host 'n1' (first at line 1)", "bhost duplicate")
bbad("b3", "n1 cpu 2\n", "1: expected key=value, got 'cpu'", "bhost bare word")
bbad("b4", "n1 cpu=\n", "1: empty value for 'cpu'", "bhost empty value")
bbad("b5", "n1 cpu=1 cpu=2\n", "1: 'cpu' given twice", "bhost key twice")
bbad("b6", "n1\nn2 schedule=perhaps\n",
  "2: node 'n2': schedule must be true/false (yes/no), not 'perhaps'", "bhost schedule")
bbad("b7.bhost", "n1\nnode \"x\"\n", "2: expected key=value, got '\"x\"'", ".bhost forces bhost")
bbad("b8", "n1 hostname=n2\n",
  "1: node 'n1': hostname 'n2' is not the node name (LAM: the node's first word is its host name)",
  "bhost hostname= (LAM's key) naming another host")
local hn = S.load(w("b9", "n1 hostname=n1 cpu=2\n"))
t.is(hn.nodes[1], { host = "n1", cpu = 2, line = 1, schedule = true }, "bhost hostname= as the node's name")
t.is(S.load(w("hn.lua", 'node { hostname = "n4", cpu = 3 }\n')).nodes[1].host, "n4",
  "Lua: node { hostname = ... } (LAM's key) names the host")
bbad("lua-looking", 'boot = "ssh"\nnode "a" {\n', "3: unexpected symbol near <eof>",
  "a Lua-looking file without .lua still reports Lua errors")
bbad("bh.lua", "n1 cpu=2\n", "1: syntax error near 'cpu'", ".lua forces Lua")
local empty = S.load(w("empty", "# nothing here\n\n"))
t.is({ empty.format, #empty.nodes }, { "bhost", 0 }, "a comment-only file has no nodes")
t.is(S.load(w("noext", 'node "a" { cpu = 2 }\n')).format, "lua", "Lua without .lua is Lua")

-- search path: absolute, current dir, $LAMKIT_HOME/etc, the install's etc
os.execute("mkdir -p " .. tmp .. "/home/etc " .. tmp .. "/inst/etc " .. tmp .. "/sub")
t.write(tmp .. "/home/etc/h.lua", 'node "from-home"\n')
t.write(tmp .. "/inst/etc/i.lua", 'node "from-install"\n')
t.write(tmp .. "/inst/etc/h.lua", 'node "shadowed"\n')
t.write(tmp .. "/cwd.lua", 'node "from-cwd"\n')
t.write(tmp .. "/home/etc/cwd.lua", 'node "shadowed"\n')
t.write(tmp .. "/sub/x.lua", 'node "from-sub"\n')
t.env({ LAMKIT_HOME = tmp .. "/home" })
local o = { install_etc = tmp .. "/inst/etc" }
t.is(S.load("cwd.lua", o).nodes[1].host, "from-cwd", "the current directory comes first")
t.is(S.load("cwd.lua", o).file, "cwd.lua", "found in cwd: file is the name given")
t.is(S.load("h.lua", o).nodes[1].host, "from-home", "then $LAMKIT_HOME/etc")
t.is(S.load("h.lua", o).file, tmp .. "/home/etc/h.lua", "file is where it was found")
t.is(S.load("i.lua", o).nodes[1].host, "from-install", "then the install's etc")
t.is(S.load("sub/x.lua", o).nodes[1].host, "from-sub", "a relative path is used as is")
t.is(S.load(tmp .. "/sub/x.lua", o).nodes[1].host, "from-sub", "an absolute path")
t.raises(function() S.load("nope.lua", o) end, "schema 'nope.lua' not found (looked in " ..
  "./nope.lua, " .. tmp .. "/home/etc/nope.lua, " .. tmp .. "/inst/etc/nope.lua)",
  "not found lists where it looked")
t.raises(function() S.load("sub/nope.lua", o) end,
  "schema 'sub/nope.lua' not found (looked in sub/nope.lua)", "a path with / is not searched")
t.env({ LAMKIT_HOME = false })
t.raises(function() S.load("h.lua") end, "schema 'h.lua' not found (looked in ./h.lua)",
  "without LAMKIT_HOME and install_etc only cwd")
t.env(nil)
t.raises(function() S.load(nil) end, "no boot schema given", "no name")

-- the shipped examples load
local ex = S.load(top .. "/conf/example-ssh.lua")
t.is({ #ex.nodes, ex.nodes[1].prefix, ex.nodes[10].schedule }, { 10, "/opt/lamkit", false },
  "conf/example-ssh.lua loads")
t.is(#S.load(top .. "/conf/example.bhost").nodes, 7, "conf/example.bhost loads")
t.is(#S.load(top .. "/conf/example-slurm.lua").nodes, 0, "conf/example-slurm.lua loads")
t.is(#S.load(top .. "/conf/example-local.lua").nodes, 4, "conf/example-local.lua loads")
return t.done() == 0 and 0 or 1
