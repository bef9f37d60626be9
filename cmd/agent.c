/* cmd/agent.c: `lamkit agent`: the per-node daemon's entry. Boot modules start it as
 *   lamkit agent --boot ADDR[,ADDR...]:PORT --universe ID --node N [--tmpdir DIR]
 *                [--foreground] [--replace] [--recon | --wipe]
 * with the universe key on stdin; `lamkit agent --wipe` alone wipes this node and prints one
 * line. Exit statuses a launcher sees: 0 = up (or done), 3 = could not reach boot, 4 = boot
 * and we hold different keys, 2 = no key on stdin, 100 = usage. */
#include "agent.h"
#include "auth.h"
#include "cmd.h"
#include "core.h"
#include "link.h"
#include "rte.h"
#include "session.h"
#include "wipe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_NOKEY   2
#define EXIT_CONNECT 3
#define EXIT_AUTH    4
#define EXIT_PROLOG  5
#define KEY_WAIT_MS  30000

static void on_note(void *arg, enum boot_wipe_note kind, const char *line)
{
	const int *verbose = arg;

	if (kind != BOOT_WIPE_ACTION || *verbose)
		fprintf(stderr, "lamkit agent: %s\n", line);
}

/* The one-line wipe report: "wipe host=H dry=0 killed=N gone=N reused=N untrusted=N files=N
 * skipped=N dirs=N failed=N[ purged=0|1]", or "wipe host=H error=MESSAGE". Returns the exit
 * status. purge: also remove the cache of binaries boot shipped here. */
static int wipe_here(int dry_run, int purge, int verbose, char *line, size_t len)
{
	int purged = 0;
	struct boot_wipe_opts o = {.dry_run = dry_run, .note = on_note, .arg = &verbose};
	struct boot_wipe_report r;
	char err[1024];

	if (boot_wipe_node(&o, &r, err, sizeof err) < 0) {
		for (char *c = err; *c; c++)
			if (*c == '\n')
				*c = ' ';
		snprintf(line, len, "wipe host=%s error=%.700s", core_hostname(), err);
		return CORE_EXIT_SYSTEM;
	}
	/* after the wipe: its own binary may be the cached copy (unlinking it is harmless) */
	if (purge && !dry_run && (purged = boot_ship_cache_purge()) < 0) {
		fprintf(stderr,
		        "lamkit agent: %s: cannot remove the cache of shipped binaries: %s\n",
		        core_hostname(), strerror(errno));
		r.failed++;
	}
	snprintf(line, len,
	         "wipe host=%s dry=%d killed=%d gone=%d reused=%d untrusted=%d files=%d skipped=%d "
	         "dirs=%d failed=%d",
	         core_hostname(), dry_run, r.killed, r.gone, r.reused, r.untrusted, r.files_removed,
	         r.files_skipped, r.dirs_removed, r.failed);
	if (purge && !dry_run && strlen(line) + 12 < len)
		snprintf(line + strlen(line), len - strlen(line), " purged=%d", purged > 0);
	return r.failed ? 1 : 0;
}

/* {==== universe mode */

enum mode { MODE_BOOT, MODE_RECON, MODE_WIPE };

struct uargs {
	char *addrs; /* "a,b,c" */
	int port, node, foreground, mode, verbose, dry_run, purge;
	int replace; /* the node was down: first end what its old agent left (grow) */
	const char *universe, *tmpdir;
	struct boot_rte rte; /* lua/rte.lua's settings for this node */
};

static void epilog_at_halt(void *arg);

/* The RTE epilog at halt or wipe; a failure is one line on stderr (the agent's log). */
static void epilog(const struct uargs *a, const char *event)
{
	char err[256];

	if (a->rte.epilog &&
	    boot_rte_hook(a->rte.epilog, event, a->node, a->universe, err, sizeof err) < 0)
		fprintf(stderr, "lamkit agent: %s: epilog failed (%s): %s\n", core_hostname(), err,
		        a->rte.epilog);
}

struct startup {
	core_ev_t *ev;
	int ready, closed, err;
	char why[512];
};

static void st_ready(boot_link_t *l, void *arg)
{
	struct startup *st = arg;

	st->ready = 1;
	core_ev_stop(st->ev);
}

static void st_frame(boot_link_t *l, unsigned type, const char *d, size_t len, void *arg)
{
	(void)l, (void)type, (void)d, (void)len, (void)arg; /* boot speaks after our info */
}

static void st_close(boot_link_t *l, int err, const char *why, void *arg)
{
	struct startup *st = arg;

	st->closed = 1;
	st->err = err;
	snprintf(st->why, sizeof st->why, "%s", why);
	core_ev_stop(st->ev);
}

static void st_timer(core_ev_t *ev, void *arg)
{
	core_ev_stop(ev);
}

static const struct boot_link_cbs st_cbs = {
    .on_ready = st_ready, .on_frame = st_frame, .on_close = st_close};

/* Read the key: 64 hex digits and a newline, within KEY_WAIT_MS. */
static int read_key(unsigned char key[BOOT_KEY_LEN])
{
	char buf[BOOT_KEY_HEX_LEN + 2];
	size_t n = 0;
	int64_t end = core_now_ms() + KEY_WAIT_MS;

	while (n < sizeof buf && !(n && buf[n - 1] == '\n')) {
		struct pollfd p = {.fd = 0, .events = POLLIN};
		int64_t left = end - core_now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		ssize_t r = read(0, buf + n, 1); /* byte by byte: leave the rest of stdin alone */
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	int rc = boot_key_from_hex(key, buf, n);
	boot_key_wipe(buf, sizeof buf);
	return rc;
}

/* Daemon: fork; the parent waits on a pipe for the child's verdict ("0" or "<code> <line>"),
 * prints the line and exits with the code, so ssh/the origin learns how the start went. */
static int daemonize(void)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		char buf[600];
		size_t n = 0;
		close(p[1]);
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		int64_t end = core_now_ms() + 120000;
		while (n < sizeof buf - 1) {
			int64_t left = end - core_now_ms();
			if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
				break;
			ssize_t r = read(p[0], buf + n, sizeof buf - 1 - n);
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		buf[n] = '\0';
		if (n == 0) {
			fprintf(stderr, "lamkit agent: %s: the agent died while starting\n",
			        core_hostname());
			_exit(EXIT_CONNECT);
		}
		int code = atoi(buf);
		const char *msg = strchr(buf, ' ');
		if (msg && code)
			fprintf(stderr, "lamkit agent: %s\n", msg + 1);
		_exit(code);
	}
	close(p[0]);
	setsid();
	return p[1];
}

static void verdict(int fd, int code, const char *msg)
{
	if (fd >= 0) {
		char line[600];
		int n = snprintf(line, sizeof line, "%d %s", code, msg);
		core_write_all(fd, line, (size_t)n);
		close(fd);
	} else if (code) {
		fprintf(stderr, "lamkit agent: %s\n", msg);
	}
}

/* stdio of a daemon: nothing from the launch channel, messages into the agent's log. */
static void detach_stdio(const char *logpath, int foreground)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0) {
		dup2(null, 0);
		if (!foreground)
			dup2(null, 1);
		close(null);
	}
	if (!foreground && logpath) {
		core_mkdir_parent(logpath, 0700); /* the agent's session dir: its log lives there */
		int lf = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (lf >= 0) {
			dup2(lf, 2);
			close(lf);
		}
	}
}

static void send_info(boot_link_t *l, const struct uargs *a, int port, const char *wipe)
{
	struct core_wbuf w = {0};
	const char *sn = getenv("SLURMD_NODENAME");

	core_w_u32(&w, (uint32_t)a->node);
	core_w_str(&w, core_hostname());
	core_w_u32(&w, (uint32_t)getpid());
	core_w_u32(&w, (uint32_t)core_cpu_count());
	core_w_u32(&w, (uint32_t)port);
	core_w_str(&w, LAMKIT_VERSION);
	core_w_str(&w, sn ? sn : "");
	core_w_str(&w, wipe ? wipe : "");
	boot_link_send(l, BOOT_MSG_AGENT_INFO, w.p, w.len, NULL, 0);
	core_w_free(&w);
}

/* ssh tells a node where its session came from (SSH_CONNECTION = "client cport server sport"):
 * when that client address is one of boot's, the node has reached the origin from there
 * already, so it goes first. Boot orders the list by the route to the node only when it could
 * resolve the node's name (not with ssh.verify = false), and an address the node cannot reach
 * costs a connect timeout. The list is rewritten in place. */
static void prefer_ssh_client(char *addrs)
{
	const char *ssh = getenv("SSH_CONNECTION");
	char want[64], out[600];
	size_t wl = ssh ? strcspn(ssh, " ") : 0;

	if (!wl || wl >= sizeof want || strlen(addrs) >= sizeof out)
		return;
	snprintf(want, sizeof want, "%.*s", (int)wl, ssh);
	int found = 0;
	snprintf(out, sizeof out, "%s", want);
	for (const char *p = addrs; *p;) {
		size_t l = strcspn(p, ",");
		if (l == wl && !strncmp(p, want, wl))
			found = 1;
		else if (l)
			snprintf(out + strlen(out), sizeof out - strlen(out), ",%.*s", (int)l, p);
		p += l + (p[l] == ',');
	}
	if (found)
		memcpy(addrs, out, strlen(out) + 1); /* same length as before */
}

static int agent_universe(struct uargs *a)
{
	unsigned char key[BOOT_KEY_LEN];
	char err[600], name[96], wipe_line[1024] = "", logpath[4200] = "";
	int listen_fd = -1, port = 0, ready_fd = -1, fd = -1, rc = 0;

	if (read_key(key) < 0) {
		fprintf(stderr,
		        "lamkit agent: %s: no universe key on stdin (the boot module passes it; "
		        "do not start agents by hand)\n",
		        core_hostname());
		return EXIT_NOKEY;
	}
	if (a->tmpdir)
		setenv("LAMKIT_TMPDIR", a->tmpdir, 1);
	signal(SIGPIPE, SIG_IGN);
	/* Node 0 is a group launch (one srun for every node): each agent learns its node only
	 * from the boot's answer, and several may share a host (slurmds on one machine). Their
	 * directories (record, log, job dirs with the node segment's record) must not be one. */
	if (a->node > 0)
		snprintf(name, sizeof name, "u%s-n%d", a->universe, a->node);
	else
		snprintf(name, sizeof name, "u%s-n0-p%ld", a->universe, (long)getpid());
	if (a->mode == MODE_WIPE) {
		rc = wipe_here(a->dry_run, a->purge, a->verbose, wipe_line, sizeof wipe_line);
		if (!a->dry_run)
			epilog(a, "wipe");
	}
	if (a->mode == MODE_BOOT && a->replace && a->node > 0) {
		/* the node's old agent (dead, hung or cut off, declared down) and what it left:
		 * its processes, ranks, segments and directory; nothing of the other agents */
		struct boot_wipe_opts wo = {.note = on_note, .arg = &a->verbose, .only = name};
		struct boot_wipe_report wr;
		if (boot_wipe_node(&wo, &wr, err, sizeof err) < 0)
			snprintf(wipe_line, sizeof wipe_line, "replace host=%s error=%.400s",
			         core_hostname(), err);
		else
			snprintf(wipe_line, sizeof wipe_line,
			         "replace host=%s killed=%d gone=%d files=%d dirs=%d failed=%d",
			         core_hostname(), wr.killed, wr.gone, wr.files_removed,
			         wr.dirs_removed, wr.failed);
	}
	if (a->mode == MODE_BOOT) {
		/* the RTE: environment, limits (the ranks inherit them), working directory, then
		 * the prolog, all before we call back: a node whose prolog fails never joins */
		if (boot_rte_apply(&a->rte, err, sizeof err) < 0) {
			fprintf(stderr, "lamkit agent: %s: rte: %s\n", core_hostname(), err);
			return EXIT_PROLOG;
		}
		if (a->rte.prolog && boot_rte_hook(a->rte.prolog, "boot", a->node, a->universe, err,
		                                   sizeof err) < 0) {
			fprintf(stderr, "lamkit agent: %s: prolog failed (%s): %s\n",
			        core_hostname(), err, a->rte.prolog);
			return EXIT_PROLOG;
		}
		char root[4096];
		if (boot_session_root(root, sizeof root, err, sizeof err) < 0) {
			fprintf(stderr, "lamkit agent: %s: %s\n", core_hostname(), err);
			return CORE_EXIT_SYSTEM;
		}
		snprintf(logpath, sizeof logpath, "%s/%s/log", root, name);
		listen_fd = boot_tcp_listen(&port, err, sizeof err);
		if (listen_fd < 0) {
			fprintf(stderr, "lamkit agent: %s: %s\n", core_hostname(), err);
			return CORE_EXIT_SYSTEM;
		}
		if (!a->foreground && (ready_fd = daemonize()) < 0) {
			fprintf(stderr, "lamkit agent: fork: %s\n", strerror(errno));
			return CORE_EXIT_SYSTEM;
		}
	}
	/* reach boot: the addresses in order, each with its own timeout */
	prefer_ssh_client(a->addrs);
	char tried[600] = "";
	for (char *s = a->addrs, *tok; fd < 0 && (tok = strsep(&s, ","));) {
		fd = boot_tcp_connect_wait(tok, a->port, 5000, err, sizeof err);
		if (fd < 0)
			snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%.200s",
			         tried[0] ? "; " : "", err);
	}
	if (fd < 0) {
		snprintf(err, sizeof err, "%s: cannot reach boot: %s", core_hostname(), tried);
		verdict(ready_fd, EXIT_CONNECT, err);
		return EXIT_CONNECT;
	}
	core_ev_t *ev = core_ev_create();
	struct startup st = {.ev = ev};
	char peer[128];
	boot_tcp_peer(fd, peer, sizeof peer);
	boot_link_t *l = ev ? boot_link_secure(ev, fd, 1, key, peer, 10000, &st_cbs, &st) : NULL;
	if (!l) {
		close(fd);
		verdict(ready_fd, CORE_EXIT_SYSTEM, "out of memory");
		return CORE_EXIT_SYSTEM;
	}
	core_ev_run(ev);
	if (!st.ready) {
		snprintf(err, sizeof err, "%s: %s", core_hostname(), st.why);
		int code = st.err == EACCES ? EXIT_AUTH : EXIT_CONNECT;
		verdict(ready_fd, code, err);
		boot_link_destroy(l);
		core_ev_destroy(ev);
		boot_key_wipe(key, sizeof key);
		return code;
	}
	send_info(l, a, port, wipe_line);
	if (a->mode != MODE_BOOT) {
		/* recon/wipe: boot closes when it has our info; leave nothing behind */
		int64_t t = core_ev_timer(ev, 30000, st_timer, &st);
		core_ev_run(ev);
		core_ev_timer_cancel(ev, t);
		boot_link_destroy(l);
		core_ev_destroy(ev);
		boot_key_wipe(key, sizeof key);
		if (a->mode == MODE_WIPE)
			printf("%s\n", wipe_line);
		return rc;
	}
	verdict(ready_fd, 0, "up");
	detach_stdio(logpath, a->foreground);
	core_progname = "lamkit agent";
	struct boot_agent_uopts uo = {.name = name,
	                              .universe = a->universe,
	                              .node = a->node,
	                              .listen_fd = listen_fd,
	                              .port = port,
	                              .key = key,
	                              .ev = ev,
	                              .origin = l,
	                              .before_exit = epilog_at_halt,
	                              .arg = a};
	rc = boot_agent_serve(&uo);
	core_ev_destroy(ev);
	boot_key_wipe(key, sizeof key);
	return rc;
}

/* Before the agent hangs up: halt's caller then knows the epilog has run. */
static void epilog_at_halt(void *arg)
{
	epilog(arg, "halt");
}

/* "a,b:port" -> addrs "a,b", port. */
static int parse_boot(char *s, struct uargs *a)
{
	char *colon = strrchr(s, ':');
	char *end;

	if (!colon || colon == s)
		return -1;
	*colon = '\0';
	long p = strtol(colon + 1, &end, 10);
	if (*end || p < 1 || p > 65535)
		return -1;
	a->addrs = s;
	a->port = (int)p;
	return 0;
}

/* ====} */

int cmd_agent(int argc, char **argv)
{
	struct uargs a = {.mode = MODE_BOOT};
	int wipe = 0, recon = 0;

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		int more = i + 1 < argc;
		if (!strcmp(o, "--wipe")) {
			wipe = 1;
		} else if (!strcmp(o, "--recon")) {
			recon = 1;
		} else if (!strcmp(o, "-n") || !strcmp(o, "--dry-run")) {
			a.dry_run = 1;
		} else if (!strcmp(o, "--purge")) {
			a.purge = 1;
		} else if (!strcmp(o, "-v") || !strcmp(o, "--verbose")) {
			a.verbose = 1;
		} else if (!strcmp(o, "--foreground")) {
			a.foreground = 1;
		} else if (!strcmp(o, "--replace")) {
			a.replace = 1;
		} else if (!strcmp(o, "--boot") && more) {
			if (parse_boot(argv[++i], &a) < 0)
				return cmd_usage_error(
				    "agent", "--boot wants ADDR[,ADDR...]:PORT, not '%s'", argv[i]);
		} else if (!strcmp(o, "--universe") && more) {
			a.universe = argv[++i];
			if (strlen(a.universe) > 32 ||
			    strspn(a.universe, "0123456789abcdef") != strlen(a.universe))
				return cmd_usage_error("agent", "--universe wants a hex id");
		} else if (!strcmp(o, "--node") && more) {
			a.node = atoi(argv[++i]);
		} else if (!strcmp(o, "--tmpdir") && more) {
			a.tmpdir = argv[++i];
		} else if (!strncmp(o, "--rte-", 6)) {
			char err[512];
			if (boot_rte_arg(&a.rte, o, more ? argv[i + 1] : NULL, err, sizeof err) <
			    0) {
				boot_rte_free(&a.rte);
				return cmd_usage_error("agent", "%s", err);
			}
			i++;
		} else {
			return cmd_usage_error("agent", "unknown argument '%s'", o);
		}
	}
	if (wipe && recon)
		return cmd_usage_error("agent", "--wipe and --recon exclude each other");
	if (!a.addrs) {
		if (!wipe)
			return cmd_usage_error("agent",
			                       "the agent is started by 'lamkit boot' "
			                       "(--boot ADDR:PORT, key on stdin), or --wipe");
		char line[1024];
		int rc = wipe_here(a.dry_run, a.purge, a.verbose, line, sizeof line);
		if (!a.dry_run)
			epilog(&a, "wipe");
		printf("%s\n", line);
		boot_rte_free(&a.rte);
		return rc;
	}
	if (!a.universe || a.node < 0) {
		boot_rte_free(&a.rte);
		return cmd_usage_error("agent", "--boot needs --universe ID and --node N");
	}
	a.mode = wipe ? MODE_WIPE : recon ? MODE_RECON : MODE_BOOT;
	if (a.mode == MODE_BOOT) { /* lua/rte.lua's wrap: run again under it (the key is unread) */
		char err[600];
		if (a.rte.nwrap)
			a.addrs[strlen(a.addrs)] =
			    ':'; /* parse_boot cut --boot's ADDRS:PORT there */
		if (boot_rte_exec_wrapped(&a.rte, argc, argv, err, sizeof err) < 0) {
			fprintf(stderr, "lamkit agent: %s: rte: %s\n", core_hostname(), err);
			boot_rte_free(&a.rte);
			return EXIT_PROLOG;
		}
	}
	int rc = agent_universe(&a);
	boot_rte_free(&a.rte);
	return rc;
}
