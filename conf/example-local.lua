-- conf/example-local.lua: a fake multi-node universe on one machine: with boot = "local" the
-- node names are labels and every agent runs here (handy for tests).
boot = "local"
algorithm = "tree"
fanout = 2
for i = 1, 4 do node("fake" .. i) { cpu = 1 } end
