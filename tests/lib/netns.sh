# tests/lib/netns.sh: fake multi-node cluster from network namespaces, each running its own sshd.
# shellcheck shell=dash disable=SC2016
#
# Source it from sh or bash (POSIX sh plus `local`), as root:
#     . tests/lib/netns.sh
#     trap netns_down EXIT; trap 'exit 130' INT TERM
#     netns_up 3 || exit 1
#     ssh -F "$NETNS_SSH_CONFIG" n2 hostname      # -> n2
#
# Layout for run id R (default: $$ of the sourcing shell) and K nodes:
#   namespaces   lkRn1 .. lkRnK    (/run/netns/lkRnI)
#   bridge       lkRbr with 10.88.X.1/24 in the root namespace; X (1..250) is picked so that no
#                10.88.X.0/24 address or route exists yet (under a flock, so concurrent runs differ)
#   veth         lkRvI in the root namespace (bridge port) <-> eth0 inside node I, 10.88.X.(10+I)/24,
#                default route via 10.88.X.1
#   node "OS"    per node a holder process (`sleep infinity`) owns a private UTS namespace (hostname
#                nI) and a mount namespace (slave propagation: sees the host filesystem and later
#                host mounts) where NETNS_HOSTS is bind-mounted on /etc/hosts and a copy of
#                /etc/nsswitch.conf with `hosts: files` on /etc/nsswitch.conf (no DNS on nodes). sshd
#                and netns_exec join those namespaces, so on a node `hostname` says nI and n0..nK
#                resolve. In the root namespace the names do NOT resolve (never send them to DNS):
#                use the addresses (netns_addr, NETNS_ADDR_nI) or the aliases in NETNS_SSH_CONFIG.
#   n0           name of the root-namespace side (10.88.X.1) in NETNS_HOSTS, e.g. for a launcher
#                that listens in the root namespace.
#   two routes   `netns_up K 2`: every node also gets eth1 on a second bridge lkRbr2 with 10.89.Y.1/24
#                (Y picked like X, under the same lock), through veth lkRwI <-> eth1 at 10.89.Y.(10+I)/24.
#                No default route on eth1: a node reaches 10.89.Y.0/24 over eth1 only and everything
#                else over eth0; a low-priority "unreachable" route per subnet keeps the default
#                route from carrying a downed subnet's traffic. So with ethN down (netns_route_down)
#                its subnet is unreachable from and to that node both ways (the root namespace's
#                .1 on it too), while the other route keeps working. The names in NETNS_HOSTS and
#                the ssh aliases stay on eth0.
#
# Exports after netns_up:
#   NETNS_RUNID NETNS_PREFIX(lkR) NETNS_DIR(temp dir) NETNS_NODES("n1 n2 ...") NETNS_NNODES
#   NETNS_SUBNET(10.88.X) NETNS_BRIDGE NETNS_BRIDGE_ADDR(10.88.X.1) NETNS_HOSTS NETNS_SSH_CONFIG
#   NETNS_SSH_KEY NETNS_SSH("ssh -F <cfg>") NETNS_ADDR_n1.. (address per node)
#   NETNS_ROUTES (1 or 2); with 2 routes also NETNS_SUBNET2(10.89.Y) NETNS_BRIDGE2
#   NETNS_BRIDGE2_ADDR(10.89.Y.1) NETNS_ADDR2_n1.. (eth1 address per node)
#   NETNS_NODE_HOME  HOME of ssh sessions on the nodes (sshd `SetEnv HOME=`), default NETNS_DIR/home:
#                a node's shell must not run root's real ~/.bashrc (it runs `pyenv rehash`, whose
#                lock file stays behind when a session is killed and then stalls every later shell
#                for 60 s). Set it before netns_up to override (e.g. /root).
# Functions:
#   netns_up K [ROUTES]     build everything (ROUTES 1 or 2, default 1, see "two routes"), start
#                           sshd on every node; 0 on success
#   netns_down              stop and delete everything of this run id; idempotent, never fails
#   netns_exec NODE cmd...  run cmd on NODE (its net, uts and mount namespaces; cwd kept)
#   netns_addr NODE         print NODE's address;  netns_ns NODE: print its namespace name
#   netns_block NODE / netns_unblock NODE   take NODE's links down / up (unreachable node; all
#                           routes, from the root-namespace side of its veths)
#   netns_route_addr NODE N  print NODE's address on route N (0: eth0, 1: eth1)
#   netns_route_gw N        print the root namespace's address on route N's bridge (where a relay
#                           for that route listens)
#   netns_route_down NODE N / netns_route_up NODE N   `ip link set ethN down/up` inside NODE: the
#                           route fails as a NIC or cable would (the address stays on the interface,
#                           the kernel drops its routes; up brings them back, eth0's default too)
#   netns_route_rate NODE N RATE [BURST]   shape route N of NODE to RATE (tc syntax: 200mbit) in both
#                           directions with tbf (on ethN and on its root-side veth), BURST default
#                           64kb; RATE "off" removes the shaping
#   netns_sshd_pid NODE     print the pid of NODE's sshd (empty if none)
# Tunables: NETNS_RUNID, NETNS_SUBNET_X (force X), NETNS_SUBNET2_X (force Y), NETNS_TMP (parent of
#   the temp dir, /tmp), NETNS_VERBOSE=1 (log steps to stderr), NETNS_ROUTES (default for netns_up's ROUTES).
# Every external command runs under `timeout`. Only processes this file started, or that live in
# this run's namespaces, are ever signalled; only this run's lkR* interfaces/namespaces are deleted.

NETNS_RUNID=${NETNS_RUNID:-$$}
NETNS_PREFIX=lk$NETNS_RUNID

_netns_t() { timeout -k 2 "${NETNS_CMD_TIMEOUT:-15}" "$@"; }
_netns_log() { [ "${NETNS_VERBOSE:-0}" = 1 ] && echo "netns: $*" >&2; return 0; }
_netns_err() { echo "netns: $*" >&2; return 1; }

netns_ns() { echo "${NETNS_PREFIX}n${1#n}"; }

netns_addr() {
	local i=${1#n}
	case $i in '' | *[!0-9]*) _netns_err "bad node name '$1'"; return 1 ;; esac
	[ -n "${NETNS_SUBNET-}" ] || { _netns_err "netns_up has not run"; return 1; }
	echo "$NETNS_SUBNET.$((10 + i))"
}

# _netns_alive PID WORD: PID is alive and its command line contains WORD (guards against pid reuse).
_netns_alive() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
	[ -r "/proc/$1/cmdline" ] || return 1
	{ tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | grep -q -- "$2"
}

_netns_pidof_file() { [ -f "$1" ] && head -n 1 "$1" 2>/dev/null | tr -dc 0-9; }

netns_sshd_pid() {
	local p
	p=$(_netns_pidof_file "$NETNS_DIR/sshd-n${1#n}.pid")
	_netns_alive "$p" sshd && echo "$p"
	return 0
}

_netns_holder_pid() {
	local p
	p=$(_netns_pidof_file "${NETNS_DIR:-/nonexistent}/holder-n${1#n}.pid")
	_netns_alive "$p" sleep && echo "$p"
	return 0
}

netns_exec() { _netns_exec_t "" "$@"; }

# _netns_exec_t SECONDS NODE cmd...: netns_exec under `timeout SECONDS` (none if empty).
_netns_exec_t() {
	local t=$1 node=$2 ns hp
	shift 2
	ns=$(netns_ns "$node")
	[ -e "/run/netns/$ns" ] || { _netns_err "no namespace $ns"; return 1; }
	hp=$(_netns_holder_pid "$node")
	if [ -n "$hp" ]; then
		set -- nsenter --net="/run/netns/$ns" --uts="/proc/$hp/ns/uts" --mount="/proc/$hp/ns/mnt" \
			--wd="$PWD" -- "$@"
	else
		set -- nsenter --net="/run/netns/$ns" -- "$@"
	fi
	if [ -n "$t" ]; then timeout -k 2 "$t" "$@"; else "$@"; fi
}

_netns_blockv() {
	_netns_t ip link set "${NETNS_PREFIX}v${2#n}" "$1" || return 1
	[ "${NETNS_ROUTES:-1}" != 2 ] || _netns_t ip link set "${NETNS_PREFIX}w${2#n}" "$1"
}
netns_block() { _netns_blockv down "$1"; }
netns_unblock() { _netns_blockv up "$1"; }

# _netns_route_check NODE N: N is a route this run has (0, or 1 with two routes).
_netns_route_check() {
	case $2 in
	0) return 0 ;;
	1) [ "${NETNS_ROUTES:-1}" = 2 ] && return 0 ;;
	esac
	_netns_err "$1: no route '$2' (routes: 0$([ "${NETNS_ROUTES:-1}" = 2 ] && echo ' 1'))"
}

netns_route_addr() {
	local a
	_netns_route_check "$1" "$2" || return 1
	a=$(netns_addr "$1") || return 1
	[ "$2" = 0 ] && echo "$a" || echo "$NETNS_SUBNET2.${a##*.}"
}

netns_route_gw() {
	_netns_route_check n0 "$1" || return 1
	[ "$1" = 0 ] && echo "$NETNS_BRIDGE_ADDR" || echo "$NETNS_BRIDGE2_ADDR"
}

netns_route_down() {
	_netns_route_check "$1" "$2" || return 1
	_netns_t ip -n "$(netns_ns "$1")" link set "eth$2" down
}

netns_route_up() {
	_netns_route_check "$1" "$2" || return 1
	_netns_t ip -n "$(netns_ns "$1")" link set "eth$2" up || return 1
	[ "$2" != 0 ] || _netns_t ip -n "$(netns_ns "$1")" route replace default via "$NETNS_BRIDGE_ADDR"
}

netns_route_rate() {
	local node=$1 r=$2 rate=${3:-} burst=${4:-64kb} ns dev
	_netns_route_check "$node" "$r" || return 1
	[ -n "$rate" ] || { _netns_err "usage: netns_route_rate NODE N RATE|off [BURST]"; return 1; }
	ns=$(netns_ns "$node")
	if [ "$r" = 0 ]; then dev=${NETNS_PREFIX}v${node#n}; else dev=${NETNS_PREFIX}w${node#n}; fi
	if [ "$rate" = off ]; then
		_netns_t ip netns exec "$ns" tc qdisc del dev "eth$r" root 2>/dev/null
		_netns_t tc qdisc del dev "$dev" root 2>/dev/null
		return 0
	fi
	if ! _netns_t ip netns exec "$ns" tc qdisc replace dev "eth$r" root tbf rate "$rate" burst "$burst" latency 100ms ||
		! _netns_t tc qdisc replace dev "$dev" root tbf rate "$rate" burst "$burst" latency 100ms; then
		_netns_err "$node: tc tbf rate $rate burst $burst on eth$r / $dev failed"
	fi
}

# _netns_bridge_up NET BRIDGE FORCED: print a free X for NET.X.0/24 (NET: 10.88 or 10.89; FORCED:
# the X the caller wants, or empty) and create BRIDGE with NET.X.1 while holding a lock.
_netns_bridge_up() {
	local net=$1 br=$2 forced=$3
	(
		flock -w 20 9 || { _netns_err "cannot lock /run/lock/lamkit-netns.lock"; exit 1; }
		used=$( (_netns_t ip -4 -o addr show; _netns_t ip -4 route show) 2>/dev/null |
			grep -o "$(echo "$net" | sed 's/\./\\./g')\\.[0-9]*\\." | cut -d. -f3 | sort -un | tr '\n' ' ')
		if [ -n "$forced" ]; then
			x=$forced
			case $x in '' | *[!0-9]*) _netns_err "bad subnet number '$x' for $net.X.0/24"; exit 1 ;; esac
			[ "$x" -le 254 ] || { _netns_err "bad subnet number '$x' for $net.X.0/24"; exit 1; }
			case " $used " in *" $x "*) _netns_err "$net.$x.0/24 already in use"; exit 1 ;; esac
		else
			n=0 x=$((NETNS_RUNID % 250 + 1))
			while case " $used " in *" $x "*) true ;; *) false ;; esac; do
				n=$((n + 1)) x=$((x % 250 + 1))
				[ $n -lt 250 ] || { _netns_err "no free $net.X.0/24"; exit 1; }
			done
		fi
		printf 'link add %s type bridge\naddr add %s.%s.1/24 dev %s\nlink set %s up\n' \
			"$br" "$net" "$x" "$br" "$br" | _netns_t ip -batch - || exit 1
		echo "$x"
	) 9>>/run/lock/lamkit-netns.lock
}

_netns_write_files() {
	local k=$1 d=$NETNS_DIR i
	_netns_t ssh-keygen -q -N '' -t ed25519 -C "lamkit-netns-host" -f "$d/ssh_host_ed25519_key" || return 1
	_netns_t ssh-keygen -q -N '' -t ed25519 -C "lamkit-netns-user" -f "$d/id_ed25519" || return 1
	cp "$d/id_ed25519.pub" "$d/authorized_keys" || return 1
	mkdir -p "$NETNS_NODE_HOME" || return 1
	{
		echo "127.0.0.1 localhost"
		echo "::1 localhost ip6-localhost ip6-loopback"
		echo "$NETNS_BRIDGE_ADDR n0 $(hostname)"
		i=1
		while [ $i -le "$k" ]; do echo "$NETNS_SUBNET.$((10 + i)) n$i"; i=$((i + 1)); done
	} >"$NETNS_HOSTS" || return 1
	# Nodes resolve from NETNS_HOSTS only: the real resolver is unreachable from the namespaces, and
	# `hosts: files dns` would wait 5 s per lookup that misses (getent hosts asks for IPv6 first).
	sed 's/^hosts:.*/hosts: files/' /etc/nsswitch.conf >"$d/nsswitch.conf" || return 1
	{
		# Pre-populated host keys; StrictHostKeyChecking=no still lets other aliases through.
		i=1
		while [ $i -le "$k" ]; do
			printf 'n%s,%s ' "$i" "$NETNS_SUBNET.$((10 + i))"
			cut -d' ' -f1,2 "$d/ssh_host_ed25519_key.pub"
			i=$((i + 1))
		done
	} >"$d/known_hosts" || return 1
	{
		i=1
		while [ $i -le "$k" ]; do
			printf 'Host n%s\n\tHostName %s\n' "$i" "$NETNS_SUBNET.$((10 + i))"
			i=$((i + 1))
		done
		cat <<EOF
Host *
	User root
	IdentityFile $d/id_ed25519
	IdentitiesOnly yes
	UserKnownHostsFile $d/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking no
	CheckHostIP no
	HashKnownHosts no
	BatchMode yes
	ConnectTimeout 5
	ConnectionAttempts 1
	ServerAliveInterval 5
	ServerAliveCountMax 3
	LogLevel ERROR
	AddressFamily inet
	ControlMaster no
	ControlPath none
	ForwardAgent no
	ForwardX11 no
EOF
	} >"$NETNS_SSH_CONFIG" || return 1
	i=1
	while [ $i -le "$k" ]; do
		cat >"$d/sshd-n$i.conf" <<EOF
Port 22
ListenAddress 0.0.0.0
AddressFamily inet
PidFile $d/sshd-n$i.pid
HostKey $d/ssh_host_ed25519_key
AuthorizedKeysFile $d/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
LogLevel ERROR
MaxStartups 100:30:200
MaxSessions 100
PrintMotd no
PrintLastLog no
X11Forwarding no
AcceptEnv LANG LC_* LAMKIT_*
SetEnv HOME=$NETNS_NODE_HOME
EOF
		i=$((i + 1))
	done
}

# Start node I's holder (private uts + mount namespace inside its netns) in the background.
_netns_holder_start() {
	local i=${1#n} d=$NETNS_DIR
	# Double fork: the holder must not stay a child of the caller (a later bare `wait` would hang).
	(nsenter --net="/run/netns/$(netns_ns "$i")" unshare --uts --mount --propagation slave \
		sh -c 'mount --bind "$1" /etc/hosts && mount --bind "$3/nsswitch.conf" /etc/nsswitch.conf &&
			hostname "n$2" && echo $$ >"$3/holder-n$2.pid" && exec sleep infinity' \
		holder "$NETNS_HOSTS" "$i" "$d" </dev/null >/dev/null 2>"$d/holder-n$i.err" &)
}

# _netns_wait_pids WHAT: wait (5 s) until every node has a live WHAT (holder or sshd) pid.
_netns_wait_pids() {
	local what=$1 node n=0 p
	for node in $NETNS_NODES; do
		while :; do
			if [ "$what" = sshd ]; then p=$(netns_sshd_pid "$node"); else p=$(_netns_holder_pid "$node"); fi
			[ -z "$p" ] || break
			n=$((n + 1))
			[ $n -le 100 ] || {
				_netns_err "$node: $what did not start: $(cat "$NETNS_DIR/$what-$node.err" "$NETNS_DIR/$what-$node.log" 2>/dev/null)"
				return 1
			}
			sleep 0.05
		done
	done
}

# Namespaces, veths and addresses of all K nodes: one `ip -batch` in the root namespace, one per node.
_netns_links_up() {
	local k=$1 i ns
	i=1
	while [ $i -le "$k" ]; do
		ns=$(netns_ns "$i")
		printf 'netns add %s\nlink add %sv%s type veth peer name eth0 netns %s\nlink set %sv%s master %s up\n' \
			"$ns" "$NETNS_PREFIX" "$i" "$ns" "$NETNS_PREFIX" "$i" "$NETNS_BRIDGE"
		[ "$NETNS_ROUTES" = 1 ] ||
			printf 'link add %sw%s type veth peer name eth1 netns %s\nlink set %sw%s master %s up\n' \
				"$NETNS_PREFIX" "$i" "$ns" "$NETNS_PREFIX" "$i" "$NETNS_BRIDGE2"
		i=$((i + 1))
	done | _netns_t ip -batch - || return 1
	i=1
	while [ $i -le "$k" ]; do
		{
			printf 'link set lo up\naddr add %s/24 dev eth0\nlink set eth0 up\nroute add default via %s\n' \
				"$NETNS_SUBNET.$((10 + i))" "$NETNS_BRIDGE_ADDR"
			# With ethN down its connected route goes, and the default route (eth0) would
			# carry that subnet's traffic to the root namespace's .1 instead (a relay there):
			# an "unreachable" route of low priority keeps a route down down.
			[ "$NETNS_ROUTES" = 1 ] || printf 'addr add %s/24 dev eth1\nlink set eth1 up\nroute add unreachable %s.0/24 metric 1000\nroute add unreachable %s.0/24 metric 1000\n' \
				"$NETNS_SUBNET2.$((10 + i))" "$NETNS_SUBNET2" "$NETNS_SUBNET"
		} | _netns_t ip -n "$(netns_ns "$i")" -batch - || return 1
		eval "NETNS_ADDR_n$i=\$NETNS_SUBNET.$((10 + i)); export NETNS_ADDR_n$i"
		[ "$NETNS_ROUTES" = 1 ] || eval "NETNS_ADDR2_n$i=\$NETNS_SUBNET2.$((10 + i)); export NETNS_ADDR2_n$i"
		i=$((i + 1))
	done
}

netns_up() {
	local k=${1:-} i x p=
	case $k in '' | *[!0-9]* | 0) _netns_err "usage: netns_up K [ROUTES] (K >= 1, ROUTES 1 or 2)"; return 1 ;; esac
	NETNS_ROUTES=${2:-${NETNS_ROUTES:-1}}
	case $NETNS_ROUTES in 1 | 2) ;; *) _netns_err "netns_up: ROUTES must be 1 or 2, not '$NETNS_ROUTES'"; return 1 ;; esac
	[ "$k" -le 99 ] || { _netns_err "at most 99 nodes"; return 1; }
	[ "$(id -u)" = 0 ] || { _netns_err "needs root"; return 1; }
	[ -z "${NETNS_DIR-}" ] || [ ! -d "$NETNS_DIR" ] || { _netns_err "already up ($NETNS_DIR)"; return 1; }
	NETNS_BRIDGE=${NETNS_PREFIX}br
	NETNS_DIR=$(mktemp -d "${NETNS_TMP:-/tmp}/$NETNS_PREFIX.XXXXXX") || return 1
	chmod 0755 "$NETNS_DIR"
	export NETNS_RUNID NETNS_PREFIX NETNS_DIR NETNS_BRIDGE NETNS_ROUTES
	echo "$NETNS_RUNID" >"$NETNS_DIR/runid"
	NETNS_NODES='' NETNS_NNODES=$k
	i=1
	while [ $i -le "$k" ]; do NETNS_NODES="$NETNS_NODES${NETNS_NODES:+ }n$i"; i=$((i + 1)); done
	x=$(_netns_bridge_up 10.88 "$NETNS_BRIDGE" "${NETNS_SUBNET_X-}") || return 1
	NETNS_SUBNET=10.88.$x NETNS_BRIDGE_ADDR=10.88.$x.1
	if [ "$NETNS_ROUTES" = 2 ]; then
		NETNS_BRIDGE2=${NETNS_PREFIX}br2
		x=$(_netns_bridge_up 10.89 "$NETNS_BRIDGE2" "${NETNS_SUBNET2_X-}") || return 1
		NETNS_SUBNET2=10.89.$x NETNS_BRIDGE2_ADDR=10.89.$x.1
		export NETNS_BRIDGE2 NETNS_SUBNET2 NETNS_BRIDGE2_ADDR
	fi
	NETNS_HOSTS=$NETNS_DIR/hosts NETNS_SSH_CONFIG=$NETNS_DIR/ssh_config
	NETNS_SSH_KEY=$NETNS_DIR/id_ed25519 NETNS_SSH="ssh -F $NETNS_SSH_CONFIG"
	NETNS_NODE_HOME=${NETNS_NODE_HOME:-$NETNS_DIR/home}
	export NETNS_NODES NETNS_NNODES NETNS_SUBNET NETNS_BRIDGE_ADDR NETNS_HOSTS NETNS_SSH_CONFIG
	export NETNS_SSH_KEY NETNS_SSH NETNS_NODE_HOME
	_netns_log "run $NETNS_RUNID: $k nodes on $NETNS_SUBNET.0/24${NETNS_SUBNET2:+ and $NETNS_SUBNET2.0/24}, dir $NETNS_DIR"
	[ -d /run/sshd ] || mkdir -m 0755 /run/sshd || return 1
	_netns_write_files "$k" || return 1
	_netns_links_up "$k" || return 1
	for i in $NETNS_NODES; do _netns_holder_start "$i"; done
	_netns_wait_pids holder || return 1
	for i in $NETNS_NODES; do
		_netns_exec_t 15 "$i" /usr/sbin/sshd -f "$NETNS_DIR/sshd-$i.conf" -E "$NETNS_DIR/sshd-$i.log" \
			</dev/null >/dev/null 2>&1 &
		p="$p $!"
	done
	# shellcheck disable=SC2086
	wait $p
	_netns_wait_pids sshd
}

# _netns_kill_files WAIT-SECONDS WORD PIDFILE...: TERM the live pids, KILL those left after WAIT.
_netns_kill_files() {
	local wait=$1 word=$2 f p pids='' n=0 left
	shift 2
	for f in "$@"; do
		p=$(_netns_pidof_file "$f")
		_netns_alive "$p" "$word" && pids="$pids $p" && kill -TERM "$p" 2>/dev/null
	done
	[ -n "$pids" ] || return 0
	while [ $n -lt $((wait * 10)) ]; do
		left=''
		for p in $pids; do _netns_alive "$p" "$word" && left="$left $p"; done
		pids=$left
		[ -n "$pids" ] || return 0
		sleep 0.1
		n=$((n + 1))
	done
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	return 0
}

# Stop everything left in namespace $1 (by definition started by this run): SIGTERM first so shells
# run their EXIT traps (e.g. release lock files), SIGKILL after 1 s, until the namespace is empty.
_netns_kill_ns() {
	local ns=$1 pids n=0
	while [ $n -lt 40 ]; do
		pids=$(_netns_t ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
		[ -n "${pids% }" ] || return 0
		# shellcheck disable=SC2086
		if [ $n -eq 0 ]; then kill -TERM $pids 2>/dev/null; elif [ $n -ge 10 ]; then kill -KILL $pids 2>/dev/null; fi
		sleep 0.1
		n=$((n + 1))
	done
	_netns_err "$ns: processes survive SIGKILL: $pids"
}

netns_down() {
	local ns f
	[ -n "${NETNS_PREFIX-}" ] || return 0
	if [ -n "${NETNS_DIR-}" ] && [ -d "$NETNS_DIR" ]; then
		set -- "$NETNS_DIR"/sshd-n*.pid
		[ -e "$1" ] && _netns_kill_files 3 sshd "$@"
		set -- "$NETNS_DIR"/holder-n*.pid
		[ -e "$1" ] && _netns_kill_files 1 sleep "$@"
	fi
	for ns in $(_netns_t ip netns list 2>/dev/null | cut -d' ' -f1 | grep -E "^${NETNS_PREFIX}n[0-9]+\$"); do
		_netns_kill_ns "$ns"
		_netns_t ip link del "${NETNS_PREFIX}v${ns##*n}" 2>/dev/null
		_netns_t ip link del "${NETNS_PREFIX}w${ns##*n}" 2>/dev/null
		_netns_t ip netns del "$ns" 2>/dev/null || _netns_err "cannot delete namespace $ns"
	done
	for f in $(_netns_t ip -o link show 2>/dev/null | cut -d: -f2 | cut -d@ -f1 | tr -d ' ' |
		grep -E "^${NETNS_PREFIX}([vw][0-9]+|br|br2)\$"); do
		_netns_t ip link del "$f" 2>/dev/null
	done
	case ${NETNS_DIR-} in
	"${NETNS_TMP:-/tmp}/$NETNS_PREFIX".??????) rm -rf "$NETNS_DIR" ;;
	esac
	# the default HOME lived in NETNS_DIR: a later netns_up must not make it again
	case ${NETNS_NODE_HOME-} in "${NETNS_DIR:-/nonexistent}"/*) unset NETNS_NODE_HOME ;; esac
	unset NETNS_DIR NETNS_NODES NETNS_SUBNET NETNS_SUBNET2
	return 0
}
