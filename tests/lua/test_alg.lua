-- tests/lua/test_alg.lua: launch algorithms against the virtual-time mock ctx: hop counts for
-- linear, windowed and tree at 1/5/16/64 nodes, failures, re-parenting, timeouts, never a hang.
local dir = arg[0]:match("^(.*)/") or "."
local t = dofile(dir .. "/tap.lua")
local mock = dofile(dir .. "/mock.lua")
local L = 0.1 -- virtual seconds per hop

local function run(alg, n, p, mo)
  local ctx = mock.new(mo)
  local res = require("alg." .. alg).run(ctx, mock.nodes(n), p or {})
  return res, ctx, math.floor(res.elapsed / L + 0.5)
end

local function tree_depth(n, k)
  local d, total, level = 0, 0, 1
  while total < n do
    d = d + 1
    level = level * k
    total = total + level
  end
  return d
end

local hops = {}
for _, n in ipairs({ 1, 5, 16, 64 }) do
  local want = { linear = n, windowed = math.ceil(n / 5), tree = tree_depth(n, 4) }
  for _, alg in ipairs({ "linear", "windowed", "tree" }) do
    local res, ctx, h = run(alg, n)
    hops[alg .. n] = h
    t.is(#res.up, n, alg .. " " .. n .. ": every node up")
    t.is(#res.failed, 0, alg .. " " .. n .. ": no failures")
    t.is(h, want[alg], alg .. " " .. n .. ": " .. want[alg] .. " hops")
    t.is(ctx.violations, {}, alg .. " " .. n .. ": ctx contract kept")
    t.is(ctx.last_progress, { n, n }, alg .. " " .. n .. ": progress ends at n/n")
    if alg == "windowed" then
      t.ok(ctx.max_out_origin <= 5, "windowed " .. n .. ": at most 5 outstanding")
    elseif alg == "linear" then
      t.is(ctx.max_out_origin, 1, "linear " .. n .. ": one outstanding")
    else
      local okparent = true
      for _, s in ipairs(ctx.starts) do
        if (s.via or 0) ~= (s.index - 1) // 4 then okparent = false end
      end
      t.ok(okparent, "tree " .. n .. ": each node started by its tree parent")
      local maxc = 0
      for _, c in pairs(ctx.children) do maxc = math.max(maxc, c) end
      t.ok(maxc <= 4, "tree " .. n .. ": nobody starts more than 4")
    end
  end
end
print(string.format("# hops: 16 nodes linear=%d windowed=%d tree=%d; 64 nodes linear=%d " ..
  "windowed=%d tree=%d", hops.linear16, hops.windowed16, hops.tree16, hops.linear64,
  hops.windowed64, hops.tree64))

-- fan-out and window from p
local _, _, h = run("tree", 64, { fanout = 2 })
t.is(h, tree_depth(64, 2), "tree fanout 2, 64 nodes: " .. tree_depth(64, 2) .. " hops")
_, _, h = run("windowed", 64, { window = 16 })
t.is(h, 4, "windowed 16, 64 nodes: 4 hops")
_, _, h = run("tree", 256, { fanout = 4 })
t.is(h, 4, "tree 256 nodes: 4 hops")

-- thread: every launcher keeps k launches in flight, so d hops reach (k+1)^d - 1 nodes
local function thread_depth(n, k)
  local d = 0
  while (k + 1) ^ d - 1 < n do d = d + 1 end
  return d
end
for _, n in ipairs({ 1, 5, 16, 64, 100, 256 }) do
  local res, ctx, h = run("thread", n)
  t.is({ #res.up, #res.failed }, { n, 0 }, "thread " .. n .. ": every node up")
  t.is(h, thread_depth(n, 4), "thread " .. n .. ": " .. thread_depth(n, 4) .. " hops")
  t.is(ctx.violations, {}, "thread " .. n .. ": ctx contract kept (via is always up)")
  local inflight, most = {}, 0
  for _, s in ipairs(ctx.starts) do
    local l = s.via or 0
    inflight[l] = (inflight[l] or 0) + 1
    most = math.max(most, inflight[l])
  end
  t.ok(ctx.max_out_origin <= 4, "thread " .. n .. ": the origin has at most 4 in flight")
end
_, _, h = run("tree", 100)
local _, _, h2 = run("thread", 100)
t.is({ h, h2 }, { 4, 3 }, "100 nodes: tree needs 4 hops, thread 3")
-- a straggler: node 1 takes 2 s. tree waits for it before its subtree starts; thread does not
do
  local slow = { latency_of = { [1] = 2.0 } }
  local rt = run("tree", 64, {}, slow)
  local rth = run("thread", 64, {}, slow)
  t.ok(rt.elapsed >= 2.2 - 1e-6, string.format("straggler: tree %.1f s (its subtree waits)",
    rt.elapsed))
  t.ok(rth.elapsed <= 2.0 + 1e-6, "thread: the straggler is the only wait")
end
-- a failed node in thread: nobody else is lost
do
  local res, ctx = run("thread", 30, {}, { fail = { [2] = { stage = "auth", err = "bad key" } } })
  t.is({ #res.up, #res.failed }, { 29, 1 }, "thread 30, node 2 fails: 29 up")
  t.is(ctx.violations, {}, "thread: no start via the failed node")
end

-- a failed middle tree node: its children are started by whoever started it
do
  local res, ctx = run("tree", 16, {}, { fail = { [2] = { stage = "auth", err = "bad key" } } })
  t.is(#res.up, 15, "tree 16, node 2 fails: the other 15 are up")
  t.is(res.failed, { { index = 2, host = "n2", stage = "auth", err = "bad key" } },
    "tree: the failure names node, stage and error")
  local via = {}
  for _, s in ipairs(ctx.starts) do via[s.index] = s.via or 0 end
  t.is({ via[9], via[10], via[11], via[12] }, { 0, 0, 0, 0 },
    "tree: node 2's children are started by the origin instead")
  t.is(ctx.violations, {}, "tree with a failure: contract kept")
end
do -- deeper: 1 fails (launched by origin), its child 5 fails (re-parented to origin)
  local res, ctx = run("tree", 64, {}, { fail = { [1] = {}, [5] = { stage = "connect" } } })
  t.is(#res.up, 62, "tree 64, nodes 1 and 5 fail: 62 up")
  local via = {}
  for _, s in ipairs(ctx.starts) do via[s.index] = s.via or 0 end
  t.is({ via[5], via[21], via[24], via[6], via[25] }, { 0, 0, 0, 0, 6 },
    "tree: grandchildren of failed nodes go to the nearest live starter")
  t.is(res.failed[2].stage, "connect", "tree: stage of the second failure kept")
end
do -- a node two levels down fails: its children go to its (live) parent agent
  local res, ctx = run("tree", 64, {}, { fail = { [6] = {} } })
  local via = {}
  for _, s in ipairs(ctx.starts) do via[s.index] = s.via or 0 end
  t.is({ via[25], via[28] }, { 1, 1 }, "tree: failed node 6's children are started by node 1")
  t.is(#res.up, 63, "tree: 63 up")
  t.is(res.parent[25], 1, "result.parent records who started each node")
end
do -- a hanging middle node times out; the subtree still boots
  local res, ctx = run("tree", 16, { timeout = 5 }, { hang = { [3] = true } })
  t.is(#res.up, 15, "tree: a hanging node does not stop the rest")
  t.is(res.failed[1].stage, "timeout", "tree: the hanging node fails at stage timeout")
  t.is(res.failed[1].err, "no answer within 5 s", "tree: timeout error text")
  t.ok(ctx.cancelled[3], "tree: the timed-out launch is cancelled")
  t.ok(math.abs(res.elapsed - (5 + 0.1)) < 1e-6, "tree: total time = timeout + one hop",
    res.elapsed)
end

-- linear / windowed failures and timeouts
do
  local res = run("linear", 8, { timeout = 3 }, { hang = { [2] = true } })
  t.is(#res.up, 7, "linear: a hanging node times out, the rest boot")
  t.ok(math.abs(res.elapsed - (3 + 7 * 0.1)) < 1e-6, "linear: time = timeout + 7 hops", res.elapsed)
end
do
  local res, ctx = run("windowed", 12, { timeout = 2 }, { hang = {
    true, true, true, true, true, true, true, true, true, true, true, true } })
  t.is(#res.failed, 12, "windowed: all 12 hang, all 12 time out")
  t.ok(math.abs(res.elapsed - 6) < 1e-6, "windowed: 3 waves of the 2 s timeout, no longer",
    res.elapsed)
  t.is(ctx.violations, {}, "windowed: every wait had a finite timeout")
end
do
  local res = run("windowed", 6, {}, { refuse = { [4] = "exec ssh: No such file or directory" },
    fail = { [5] = { stage = "auth", err = "peer failed authentication" } } })
  t.is(res.up, { 1, 2, 3, 6 }, "windowed: the others are up")
  t.is(res.failed, {
    { index = 4, host = "n4", stage = "launch", err = "exec ssh: No such file or directory" },
    { index = 5, host = "n5", stage = "auth", err = "peer failed authentication" } },
    "windowed: refused launch and auth failure reported with stage")
end
do -- an event for a node nobody started is ignored
  local ctx = mock.new()
  table.insert(ctx.queue, { at = 0.05, ev = { index = 99, ok = true } })
  local res = require("alg.windowed").run(ctx, mock.nodes(3), {})
  t.is(#res.up, 3, "a stray event is ignored")
end
do -- oneshot
  local res, ctx, hh = run("oneshot", 64, {}, { fail = { [7] = { stage = "connect" } } })
  t.is(hh, 1, "oneshot 64: one hop")
  t.is(#res.up, 63, "oneshot: 63 up, one failed")
  t.is(#ctx.groups, 1, "oneshot: one group launch")
end
do -- multi-line error text is cut to its first line
  local res = run("linear", 1, {}, { fail = { [1] = { err = "first\nsecond" } } })
  t.is(res.failed[1].err, "first", "errors are one line")
end
return t.done() == 0 and 0 or 1
