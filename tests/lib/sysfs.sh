# tests/lib/sysfs.sh: synthetic CPU topologies for placement tests (LAMKIT_SYSFS=DIR).
# shellcheck shell=bash
#
# sysfs_make ROOT SPEC [interleave]: write ROOT/sys/devices/system/{cpu,node} (and
# ROOT/sys/bus/cpu/devices), the files lamkit (LAMKIT_SYSFS=ROOT/sys/devices/system) and hwloc
# (HWLOC_FSROOT=ROOT) read, for a machine of shape SPEC in hwloc's synthetic notation with the
# levels outermost first: "pack:2 numa:2 l3:1 core:4 pu:2" (levels pack, numa, l3, core, pu;
# core and pu last; a level left out is one per parent, an L3 none). CPUs are numbered depth
# first, or with "interleave" thread t of core c (of C) is CPU t * C + c, as Linux numbers
# hyperthreads on Intel machines. Prints the same machine in hwloc's synthetic notation (the CPU
# numbers as PU indexes), for HWLOC_SYNTHETIC. One awk pass: a 256-CPU machine takes ~50 ms.
sysfs_make() {
	local root=$1 spec=$2 mode=${3:-}
	rm -rf "$root/sys"
	mkdir -p "$root/sys/devices/system/cpu" "$root/sys/devices/system/node" "$root/sys/bus/cpu/devices"
	awk -v root="$root" -v spec="$spec" -v mode="$mode" '
	function list(s,   n, a, i, j, t, out, lo, hi) { # "3,1,2" -> "1-3"
		n = split(s, a, ",")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		out = ""; lo = hi = a[1]
		for (i = 2; i <= n + 1; i++) {
			if (i <= n && a[i] == hi + 1) { hi = a[i]; continue }
			out = out (out == "" ? "" : ",") (lo == hi ? lo : lo "-" hi)
			if (i <= n) lo = hi = a[i]
		}
		return out
	}
	function mask(s,   n, a, i, w, nw, out, v, b) { # "1,3" -> "0000000a" (32-bit words, high first)
		n = split(s, a, ","); nw = int((total + 31) / 32); out = ""
		for (w = nw - 1; w >= 0; w--) {
			v = 0
			for (i = 1; i <= n; i++) if (int(a[i] / 32) == w) { b = a[i] % 32; v += 2 ^ b }
			out = out (w < nw - 1 ? "," : "") sprintf("%08x", v)
		}
		return out
	}
	function put(file, text) { print text > file; close(file) }
	BEGIN {
		n = split(spec, lv, " ")
		total = 1
		for (k = 1; k <= n; k++) { split(lv[k], kv, ":"); type[k] = kv[1]; cnt[k] = kv[2] + 0; total *= cnt[k] }
		ncores = total / cnt[n]
		for (p = 0; p < total; p++) {
			per = total; pk = 0; nu = 0; l3 = -1
			for (k = 1; k <= n; k++) {
				per /= cnt[k]
				idx = int(p / per)
				if (type[k] == "pack") pk = idx
				else if (type[k] == "numa") nu = idx
				else if (type[k] == "l3") l3 = idx
				else if (type[k] == "core") co = idx
				else if (type[k] == "pu") th = p % cnt[k]
			}
			os[p] = mode == "interleave" ? th * ncores + co : p
			P[p] = pk; N[p] = nu; L[p] = l3; C[p] = co
			mp[pk] = mp[pk] (mp[pk] == "" ? "" : ",") os[p]
			mn[nu] = mn[nu] (mn[nu] == "" ? "" : ",") os[p]
			mc[co] = mc[co] (mc[co] == "" ? "" : ",") os[p]
			if (l3 >= 0) ml[l3] = ml[l3] (ml[l3] == "" ? "" : ",") os[p]
			if (!(pk in firstcore)) firstcore[pk] = co
			if (nu + 1 > nnuma) nnuma = nu + 1
		}
		d = root "/sys/devices/system"
		put(d "/cpu/online", "0-" total - 1)
		put(d "/cpu/possible", "0-" total - 1)
		put(d "/cpu/present", "0-" total - 1)
		for (p = 0; p < total; p++) {
			c = d "/cpu/cpu" os[p]; t = c "/topology"
			cmd = cmd " " t
			if (L[p] >= 0) cmd = cmd " " c "/cache/index3"
		}
		system("mkdir -p" cmd)
		for (p = 0; p < total; p++) {
			c = d "/cpu/cpu" os[p]; t = c "/topology"
			put(t "/physical_package_id", P[p]); put(t "/die_id", 0)
			put(t "/core_id", C[p] - firstcore[P[p]])
			put(t "/thread_siblings_list", list(mc[C[p]])); put(t "/core_cpus_list", list(mc[C[p]]))
			put(t "/core_siblings_list", list(mp[P[p]])); put(t "/package_cpus_list", list(mp[P[p]]))
			put(t "/thread_siblings", mask(mc[C[p]])); put(t "/core_cpus", mask(mc[C[p]]))
			put(t "/core_siblings", mask(mp[P[p]])); put(t "/package_cpus", mask(mp[P[p]]))
			put(c "/online", 1)
			if (L[p] >= 0) {
				put(c "/cache/index3/level", 3); put(c "/cache/index3/type", "Unified")
				put(c "/cache/index3/id", L[p]); put(c "/cache/index3/size", "16384K")
				put(c "/cache/index3/shared_cpu_list", list(ml[L[p]]))
				put(c "/cache/index3/shared_cpu_map", mask(ml[L[p]]))
			}
			links = links " ../../../devices/system/cpu/cpu" os[p]
		}
		system("cd " root "/sys/bus/cpu/devices && ln -s" links)
		for (i = 0; i < nnuma; i++) {
			system("mkdir -p " d "/node/node" i)
			put(d "/node/node" i "/cpulist", list(mn[i]))
			put(d "/node/node" i "/cpumap", mask(mn[i]))
			put(d "/node/node" i "/meminfo", "Node " i " MemTotal:       1048576 kB")
		}
		put(d "/node/online", "0-" nnuma - 1)
		# the same machine for hwloc: the CPU numbers on the PU level
		out = ""; idx = ""
		for (p = 0; p < total; p++) idx = idx (p ? "," : "") os[p]
		for (k = 1; k <= n; k++) out = out (k > 1 ? " " : "") type[k] ":" cnt[k] (type[k] == "pu" ? "(indexes=" idx ")" : "")
		print out
	}'
}
