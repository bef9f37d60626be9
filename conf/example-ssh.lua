-- conf/example-ssh.lua: a boot schema for nodes reached with ssh (lamkit boot example-ssh.lua).
-- Settings: boot, algorithm, fanout, window, timeout, defaults, and one table per boot module.
boot = "ssh"            -- local | ssh | rsh | slurm; default: the highest priority that fits
algorithm = "tree"      -- linear | windowed | tree | oneshot
fanout = 4              -- tree: each agent starts at most 4 more
window = 5              -- windowed: at most 5 launches outstanding
timeout = 30            -- seconds each node may take to come up

ssh = { port = 22, identity = "~/.ssh/id_ed25519", options = { "-oConnectTimeout=5" } }

defaults = { prefix = "/opt/lamkit" }   -- the agent runs /opt/lamkit/bin/lamkit

node "n1" { cpu = 2, user = "alice" }
node "n2" { cpu = 4, gpus = 1 }          -- unknown keys pass through to the modules
for i = 3, 8 do node("n" .. i) { cpu = 2 } end
nodes "gpu[01-02]" { cpu = 8, schedule = false }
