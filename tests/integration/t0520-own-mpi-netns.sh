#!/bin/bash
# t0520: lamkit's own MPI across 3 namespace nodes booted over ssh (2 ranks per node: shm inside
# a node, tcp between nodes). n2 lists an address nobody else can reach first on its eth0 and n1
# has an extra interface that is down: the business cards must leave the down one out and the
# connecting side must pick the bridge subnet. Checks the test programs' OK lines, that the tcp
# connections go between the nodes' bridge addresses (LAMKIT_TP_DEBUG log), that LAMKIT_TP=tcp
# between ranks of one node uses loopback, and that a peer whose card holds only an unreachable
# address fails within a bounded time with one line naming the rank and the address.
# timeout: 150
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (network namespaces)"
command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || skip_all "no sshd"
D=$LAMKIT_TOP/out/mpi-lamkit
[ "$LAMKIT_VARIANT" = asan ] && D=$LAMKIT_TOP/out/asan/mpi-lamkit
[ -x "$D/lk_p2p" ] || skip_all "own MPI test programs not built"
# segments of other runs on this machine come and go: only new ones that stay count
lkmpi_before=$(ls /dev/shm | grep '^lkmpi-' | sort)
. "$LAMKIT_TOP/tests/lib/netns.sh"
at_exit netns_down
K=3
netns_up $K || { ok 1 "netns_up $K"; done_testing; }
U="$LAMKIT_TMPDIR/lamkit-$(id -u)/universe"
at_exit '[ -f "$U" ] && timeout 30 "$LAMKIT" wipe >/dev/null 2>&1'
lk() { (cd "$T" && timeout -k 5 60 "$LAMKIT" "$@"); }
S=$NETNS_SUBNET
BAD=10.77.0 # reachable from nowhere: n1 and n3 get an "unreachable" route for it (no packet leaves)

# n2: 10.77.0.12 first on eth0, its bridge address second (same interface, added in that order)
printf 'addr flush dev eth0\naddr add %s.12/24 dev eth0\naddr add %s.12/24 dev eth0\nroute add default via %s\n' \
	$BAD "$S" "$NETNS_BRIDGE_ADDR" | ip -n "$(netns_ns n2)" -batch -
ok $? "n2: unreachable address listed first"
for n in n1 n3; do ip -n "$(netns_ns $n)" route add unreachable $BAD.0/24 || ok 1 "route on $n"; done
# n1: an interface that is down, with an address
printf 'link add lkdown0 type veth peer name lkdown1\naddr add 10.78.0.11/24 dev lkdown0\n' |
	ip -n "$(netns_ns n1)" -batch -
ok $? "n1: extra interface, down"
like "$(ip -n "$(netns_ns n2)" -4 -o addr show dev eth0 | head -n 1)" "inet $BAD\.12/24" \
	"n2's first address is the unreachable one"

{
	echo 'boot = "ssh"; algorithm = "windowed"; timeout = 15'
	echo "ssh = { options = { \"-F\", \"$NETNS_SSH_CONFIG\" }, verify = false }"
	echo "defaults = { program = \"$LAMKIT\" }"
	echo "for i = 1, $K do node(\"n\" .. i) { cpu = 2 } end"
} >"$T/u.lua"
lk boot u.lua >/dev/null 2>&1
is $? 0 "universe of $K nodes booted over ssh"
agents=$([ -f "$U" ] && awk '$1 == "node" { print $8 }' "$U" | tr '\n' ' ')

for p in lk_p2p lk_coll lk_comm lk_dtype lk_inter lk_cancel lk_hier; do
	out=$(LKX_TIMEOUT=60 lkx -n 6 "$D/$p" 2>&1); rc=$?
	is "$rc" 0 "$p -n 6 across the nodes exits 0"
	like "$out" "$p: OK size=6" "$p -n 6 checks pass"
done
like "$(LKX_TIMEOUT=60 lkx -n 2 --map-by node "$D/large" 2>&1)" "large: OK" \
	"large messages 0 B .. 8 MiB between n1 and n2"

# ring with the tcp path logging: cards and every connection
out=$(LAMKIT_TP_DEBUG=1 LKX_TIMEOUT=60 lkx -n 6 "$D/ring" 3 2>&1); rc=$?
is "$rc" 0 "ring -n 6 exits 0"
like "$out" "ring: OK laps=3 size=6" "ring across the nodes"
cards=$(printf '%s\n' "$out" | grep -c 'lamkit tcp: rank [0-5]: card lk-tcp-[0-5]=')
is "$cards" 6 "every rank published a card"
like "$(printf '%s\n' "$out" | grep 'card lk-tcp-2=')" "=[0-9]+;[^;]+;$BAD\.12/24,$S\.12/24,127\.0\.0\.1/8\$" \
	"n2's card: its addresses in interface order, loopback last"
unlike "$(printf '%s\n' "$out" | grep 'card lk-tcp-')" "10\.78\.0\.11" "n1's down interface is not published"
conns=$(printf '%s\n' "$out" | grep -E 'lamkit tcp: rank [0-5] -> rank [0-5]: connected')
like "$conns" "connected $S\.1[1-3] -> $S\.1[1-3]:[0-9]+" "tcp connections between the nodes' bridge addresses"
unlike "$conns" "$BAD|127\.0\.0\.1" "no connection tried the unreachable address or loopback"
is "$(printf '%s\n' "$conns" | awk '{ split($0, a, "connected "); split(a[2], b, " -> "); sub(/:.*/, "", b[2]); if (b[1] == b[2]) n++ } END { print n + 0 }')" 0 \
	"no tcp connection inside a node (shm there)"

# LAMKIT_TP=tcp: ranks of one node share a network namespace and use loopback
out=$(LAMKIT_TP=tcp LAMKIT_TP_DEBUG=1 LKX_TIMEOUT=60 lkx -n 6 "$D/ring" 2 2>&1)
like "$out" "ring: OK laps=2 size=6" "ring with LAMKIT_TP=tcp"
like "$out" "connected 127\.0\.0\.1 -> 127\.0\.0\.1:" "LAMKIT_TP=tcp: loopback inside a node"
like "$out" "connected $S\.1[1-3] -> $S\.1[1-3]:" "LAMKIT_TP=tcp: bridge addresses across nodes"

# every card holds only an address nobody has: the first cross-node send fails, one line, bounded
t0=$(date +%s)
out=$(LAMKIT_TCP_ADDR=$S.99 LAMKIT_TCP_CONNECT_MS=1000 LKX_TIMEOUT=60 lkx -n 6 "$D/ring" 1 2>&1); rc=$?
dt=$(($(date +%s) - t0))
ok "$([ "$rc" -ne 0 ]; echo $?)" "unreachable peer: the job fails (exit $rc)"
like "$out" "lamkit MPI: rank [0-5]: [A-Za-z_]+: tcp: rank [0-5] cannot reach rank [0-5]: $S\.99:[0-9]+ \((timed out|No route to host)\)" \
	"one line names the rank, the peer and the address tried"
ok "$([ "$dt" -le 20 ]; echo $?)" "and it fails within 20 s ($dt s)"

lk halt >/dev/null 2>&1
is $? 0 "halt"
# shellcheck disable=SC2086 # a list of pids
wait_gone 10 $agents
ok $? "every agent gone"
is "$(lkmpi_leaked "$lkmpi_before")" "" \
	"no lkmpi shared-memory segment left"
done_testing
