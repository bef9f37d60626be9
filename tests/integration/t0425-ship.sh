#!/bin/bash
# t0425: finding and shipping the agent on ssh nodes where lamkit is not in PATH (namespace nodes,
# real sshd). A plain bhost boot runs the origin's own path; with that path hidden on the nodes
# (or holding another build) boot ships its binary into each node's ~/.cache/lamkit/bin/SHA256/:
# the agents run that copy (/proc/PID/exe), a second boot reuses it, a tampered copy is refused
# and replaced, ship = "always" ships even when the origin's path is there, ship = "never" fails
# naming the node and the step, an unwritable cache names the node and the step, and
# `wipe --purge` removes every cache.
# timeout: 180
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces)"
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || skip_all "no sshd"
command -v sha256sum >/dev/null || skip_all "no sha256sum"
. "$LAMKIT_TOP/tests/lib/netns.sh"
at_exit netns_down
K=3
netns_up $K || { ok 1 "netns_up $K"; done_testing; }
R="$LAMKIT_TMPDIR/lamkit-$(id -u)"
U="$R/universe"
at_exit '[ -f "$U" ] && timeout 30 "$ORIG" wipe >/dev/null 2>&1'
HOMEDIR=$NETNS_NODE_HOME
# every node gets a home of its own (a fresh, empty cache), as separate machines would have
for i in $(seq $K); do
	netns_exec n$i mount -t tmpfs -o mode=0755 lkhome "$HOMEDIR" || ok 1 "private home on n$i"
done
# `ssh` in PATH knows the nodes, so a plain bhost file needs no ssh options
mkdir -p "$T/bin"
printf '#!/bin/sh\nexec ssh -F "%s" "$@"\n' "$NETNS_SSH_CONFIG" >"$T/bin/ssh"
sed -i "s|exec ssh|exec $(command -v ssh)|" "$T/bin/ssh"
chmod +x "$T/bin/ssh"
export PATH="$T/bin:$PATH"
ORIG=$LAMKIT
lk() { (cd "$T" && timeout -k 5 90 "$ORIG" "$@"); }
agent_pid() { awk -v n="$1" '$1 == "node" && $2 == n { print $8 }' "$U"; }
exe_of() { readlink "/proc/$(agent_pid "$1")/exe"; }
SHA=$(sha256sum <"$LAMKIT" | cut -c1-64)
CACHE="$HOMEDIR/.cache/lamkit/bin/$SHA/lamkit"

is "$(netns_exec n1 sh -c 'command -v lamkit' </dev/null)" "" "no lamkit in the nodes' PATH"
for i in $(seq $K); do echo "$(netns_addr n$i) cpu=1"; done >"$T/hosts.bhost"

# 1. the origin's own path, same build, is found on every node
out=$(lk boot -v hosts.bhost 2>&1); rc=$?
is "$rc" 0 "plain bhost boot, nothing in PATH"
unlike "$out" "shipping" "nothing shipped"
for i in $(seq $K); do is "$(exe_of $i)" "$LAMKIT" "n$i: the agent runs the origin's path"; done
lk halt >/dev/null 2>&1; is $? 0 "halt"

# 2. the origin's path missing on n2, n3 and another build on n1: auto ships to all three
mkdir -p "$T/orig"
cp "$LAMKIT" "$T/orig/lamkit"
ORIG="$T/orig/lamkit"
printf '#!/bin/sh\necho "lamkit 0.0.1 git other musl"\n' >"$T/other"
chmod +x "$T/other"
netns_exec n1 mount --bind "$T/other" "$ORIG" || ok 1 "another build on n1"
for i in 2 3; do netns_exec n$i mount -t tmpfs lkorig "$T/orig" || ok 1 "hide on n$i"; done
is "$(netns_exec n1 "$ORIG" version --build </dev/null)" "lamkit 0.0.1 git other musl" \
	"n1 holds another build at the origin's path"
out=$(lk boot -v hosts.bhost 2>&1); rc=$?
is "$rc" 0 "boot ships where the origin's build is missing"
is "$(printf '%s\n' "$out" | grep -c 'no lamkit of this build there; shipping')" $K \
	"a shipping line per node"
for i in $(seq $K); do
	is "$(exe_of $i)" "$CACHE" "n$i: the agent runs the shipped copy"
	is "$(netns_exec n$i sh -c "sha256sum <'$CACHE' | cut -c1-64" </dev/null)" "$SHA" \
		"n$i: the copy has the origin's sha256"
	is "$(netns_exec n$i stat -c '%a' "$CACHE" "$(dirname "$CACHE")" </dev/null | tr '\n' ' ')" \
		"700 700 " "n$i: copy and directory mode 0700"
done
is "$(ls "$HOMEDIR/.cache" 2>/dev/null | wc -l)" 0 "nothing written into the origin's own home"
out=$(lk mpiexec -n 3 --map-by node hostname 2>&1)
is "$(printf '%s\n' "$out" | sort | tr '\n' ' ')" "n1 n2 n3 " "a job runs on the shipped agents"
lk halt >/dev/null 2>&1; is $? 0 "halt"

# 3. reused: nothing is shipped a second time
out=$(lk boot -v hosts.bhost 2>&1); rc=$?
is "$rc" 0 "second boot"
unlike "$out" "shipping" "the cached copies are reused"
is "$(exe_of 2)" "$CACHE" "n2 runs the cached copy"
lk halt >/dev/null 2>&1

# 4. a tampered copy is refused and replaced
netns_exec n2 sh -c "printf x >>'$CACHE'" </dev/null
out=$(lk boot -v hosts.bhost 2>&1); rc=$?
is "$rc" 0 "boot with a tampered copy on n2"
like "$out" "$(netns_addr n2): verify: cached $CACHE fails its sha256 check: removed.*; shipping" \
	"the tampered copy is refused"
is "$(printf '%s\n' "$out" | grep -c 'shipping')" 1 "and only n2 gets a new one"
is "$(netns_exec n2 sh -c "sha256sum <'$CACHE' | cut -c1-64" </dev/null)" "$SHA" "replaced"
is "$(exe_of 2)" "$CACHE" "n2 runs the replacement"
lk halt >/dev/null 2>&1

# 5. ship = "always": the shipped copy even where the origin's own path works; in a tree
# (n1 starts n2, n2 starts n3), n3 has no copy yet: boot ships it from the origin
ORIG=$LAMKIT
netns_exec n3 rm -rf "$HOMEDIR/.cache" </dev/null
{
	echo 'boot = "ssh"; ship = "always"; algorithm = "tree"; fanout = 1'
	echo "ssh = { options = { \"-F\", \"$NETNS_SSH_CONFIG\" }, verify = false }"
	for i in $(seq $K); do echo "node \"n$i\" { cpu = 1 }"; done
} >"$T/always.lua"
out=$(lk boot -v always.lua 2>&1); rc=$?
is "$rc" 0 "ship = always, tree"
like "$out" "n2 up \([0-9.]+ s, started by n1\)" "n2 was started by n1's agent"
like "$out" "n3: no lamkit of this build there; shipping" "n3 needed a copy"
like "$out" "n3 up \([0-9.]+ s, started by origin\)" "which the origin shipped"
for i in $(seq $K); do is "$(exe_of $i)" "$CACHE" "n$i: always runs the cached copy"; done
lk halt >/dev/null 2>&1

# 6. ship = "never" (--no-ship) where nothing is found: the node and the step are named
ORIG="$T/orig/lamkit"
out=$(lk boot --no-ship hosts.bhost 2>&1); rc=$?
is "$rc" 1 "--no-ship without lamkit on the nodes fails"
like "$out" "$(netns_addr n2) failed at launch: .*find: no lamkit of this build at $ORIG and none in PATH" \
	"names n2 and the find step"

# 7. a cache that cannot be written: the node and the step are named
netns_exec n3 rm -rf "$HOMEDIR/.cache" </dev/null
netns_exec n3 touch "$HOMEDIR/.cache" </dev/null
out=$(lk boot hosts.bhost 2>&1); rc=$?
is "$rc" 1 "boot with an unwritable cache on n3 fails"
like "$out" "$(netns_addr n3) failed at launch: .*ship: cannot create $HOMEDIR/.cache/lamkit/bin/$SHA" \
	"names n3 and the ship step"
netns_exec n3 rm -f "$HOMEDIR/.cache" </dev/null
sleep 0.3

# 8. wipe --purge removes every node's cache
lk boot hosts.bhost >/dev/null 2>&1; is $? 0 "boot again"
out=$(lk wipe --purge 2>&1); rc=$?
is "$rc" 0 "wipe --purge"
is "$(printf '%s\n' "$out" | grep -c 'purged=1')" $K "every node reports its cache purged"
for i in $(seq $K); do
	is "$(netns_exec n$i sh -c "ls -A '$HOMEDIR/.cache/lamkit' 2>/dev/null" </dev/null)" "" \
		"n$i: no cache left"
done
left=0
for p in $(pgrep -f -- "$LAMKIT_TMPDIR"); do pids_gone "$p" || left=$((left + 1)); done
is "$left" 0 "nothing left running"
done_testing
