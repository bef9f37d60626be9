-- tests/lua/test_hostlist.lua: Slurm host-list expansion and compression, cpu-count lists, and
-- shell quoting (checked by a real /bin/sh round trip).
local dir = arg[0]:match("^(.*)/") or "."
local t = dofile(dir .. "/tap.lua")
local hl = require("boot.hostlist")
local sh = require("boot.shell")

local cases = {
  { "n[1-4,7]", { "n1", "n2", "n3", "n4", "n7" } },
  { "a[01-03]b", { "a01b", "a02b", "a03b" } },
  { "n[8-11]", { "n8", "n9", "n10", "n11" } },
  { "n[08-11]", { "n08", "n09", "n10", "n11" } },
  { "x[1-2]y[1-2]", { "x1y1", "x1y2", "x2y1", "x2y2" } },
  { "n1,n[3-4],login", { "n1", "n3", "n4", "login" } },
  { "single", { "single" } },
  { "node-1.cluster", { "node-1.cluster" } },
  { "r[1-2]n[001-002]", { "r1n001", "r1n002", "r2n001", "r2n002" } },
}
for _, c in ipairs(cases) do t.is(hl.expand(c[1]), c[2], "expand " .. c[1]) end

local bad = {
  { "n[1-", "unbalanced '[' in host list 'n[1-'" },
  { "n[3-1]", "descending range '3-1' in host list 'n[3-1]'" },
  { "n]1[", "unbalanced ']' in host list 'n]1['" },
  { "n[a-b]", "bad range 'a-b' in host list 'n[a-b]'" },
  { "n[1,,2]", "bad range '' in host list 'n[1,,2]'" },
  { "", "empty host list" },
  { "a,,b", "empty item in host list 'a,,b'" },
  { "n[1-200000]", "host list 'n[1-200000]' names more than 100000 hosts" },
  { "n[[1]]", "nested '[' in host list 'n[[1]]'" },
}
for _, c in ipairs(bad) do
  local l, err = hl.expand(c[1])
  t.is({ l, err }, { nil, c[2] }, "expand rejects '" .. c[1] .. "'")
end

t.is(hl.compress({ "n1", "n2", "n3", "m5" }), "n[1-3],m5", "compress a run")
t.is(hl.compress({ "n1", "n2", "n4", "n5", "n7" }), "n[1-2,4-5,7]", "compress gaps")
t.is(hl.compress({ "a01", "a02", "a03" }), "a[01-03]", "compress keeps zero padding")
t.is(hl.compress({ "n9", "n10" }), "n[9-10]", "compress across a width change")
t.is(hl.compress({ "login", "n1" }), "login,n1", "compress leaves singles alone")
local big = hl.expand("c[001-128]")
t.is(hl.expand(hl.compress(big)), big, "compress/expand round trip of 128 names")

t.is(hl.cpus("2(x3),1"), { 2, 2, 2, 1 }, "cpus 2(x3),1")
t.is(hl.cpus("16"), { 16 }, "cpus 16")
t.is({ hl.cpus("2(x0)") }, { nil, "bad cpu count '2(x0)' in '2(x0)'" }, "cpus rejects x0")
t.is({ hl.cpus("two") }, { nil, "bad cpu count 'two' in 'two'" }, "cpus rejects words")

-- shell quoting
t.is(sh.quote("lamkit"), "lamkit", "plain words stay unquoted")
t.is(sh.quote("10.0.0.1:4711"), "10.0.0.1:4711", "host:port stays unquoted")
t.is(sh.quote("--boot=a,b"), "--boot=a,b", "options stay unquoted")
t.is(sh.quote(""), "''", "empty word")
t.is(sh.quote("a b"), "'a b'", "space")
t.is(sh.quote("it's"), "'it'\\''s'", "single quote")
t.is(sh.quote_path("~/lamkit dir/bin/lamkit"), "~/'lamkit dir/bin/lamkit'", "~/ stays expandable")
local nasty = { "a b", "it's", "$HOME", "`id`", "$(id)", "a;rm -rf /tmp/x", "\"q\"", "back\\slash",
  "*", "?", "x\ny", "tab\there", "!bang", "&", "|", "<>", "{a,b}", "~", "#hash", "", "é" }
for _, w in ipairs(nasty) do
  local p = io.popen("printf '%s|' " .. sh.quote(w))
  local out = p:read("a")
  p:close()
  t.is(out, w .. "|", "sh round trip of " .. string.format("%q", w))
end
local p = io.popen("set -- " .. sh.join({ "a b", "c", "'d'" }) .. "; echo $#")
t.is(p:read("l"), "3", "join keeps word boundaries")
p:close()
return t.done() == 0 and 0 or 1
