/* lib/pmi/pmi_client.c: libpmi core: connect, init, KVS put/get, barrier, finalize, abort. */
#include "pmi.h"
#include "pmi_client_int.h"
#include "pmi_server.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct pmic pmic = {.fd = -1};

/* ---- transport ---- */

int pmic_send(const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(pmic.fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = write(pmic.fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Next line from the server into line[cap] without '\n'. Its length, or -1. */
static long read_line(char *line, size_t cap)
{
	for (;;) {
		char *nl = memchr(pmic.rbuf, '\n', pmic.rlen);
		if (nl) {
			size_t n = (size_t)(nl - pmic.rbuf);
			if (n >= cap) {
				errno = EMSGSIZE;
				return -1;
			}
			memcpy(line, pmic.rbuf, n);
			line[n] = '\0';
			pmic.rlen -= n + 1;
			memmove(pmic.rbuf, nl + 1, pmic.rlen);
			return (long)n;
		}
		if (pmic.rlen == sizeof(pmic.rbuf)) {
			errno = EMSGSIZE;
			return -1;
		}
		ssize_t r = read(pmic.fd, pmic.rbuf + pmic.rlen, sizeof(pmic.rbuf) - pmic.rlen);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errno = r == 0 ? ECONNRESET : errno;
			return -1;
		}
		pmic.rlen += (size_t)r;
	}
}

int pmic_read_exact(char *buf, size_t n)
{
	size_t take = pmic.rlen < n ? pmic.rlen : n;

	memcpy(buf, pmic.rbuf, take);
	pmic.rlen -= take;
	memmove(pmic.rbuf, pmic.rbuf + take, pmic.rlen);
	while (take < n) {
		ssize_t r = read(pmic.fd, buf + take, n - take);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errno = r == 0 ? ECONNRESET : errno;
			return -1;
		}
		take += (size_t)r;
	}
	return 0;
}

/* Read one reply line and check its cmd. */
static long expect(const char *want, char *line, size_t cap)
{
	long n = read_line(line, cap);
	size_t clen;
	const char *cmd;

	if (n < 0)
		return -1;
	cmd = pmi_wire_find(line, (size_t)n, "cmd", &clen);
	if (!cmd || clen != strlen(want) || memcmp(cmd, want, clen) != 0) {
		errno = EPROTO;
		return -1;
	}
	return n;
}

long pmic_xact(const char *req, const char *want, char *line, size_t cap)
{
	if (pmic_send(req, strlen(req)) < 0)
		return -1;
	return expect(want, line, cap);
}

int pmic_rc(const char *line, size_t len)
{
	int rc;

	if (pmi_wire_get_int(line, len, "rc", &rc) == 0)
		return rc;
	return errno == ENOENT ? 0 : -1;
}

int pmic_token_ok(const char *s)
{
	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return 0;
	}
	return 1;
}

int pmic_copy(char *out, int len, const char *s)
{
	size_t n = strlen(s);

	if (!out || len <= 0 || n >= (size_t)len)
		return PMI_ERR_INVALID_LENGTH;
	memcpy(out, s, n + 1);
	return PMI_SUCCESS;
}

/* ---- local store (singleton) ---- */

static struct pmic_kv *local_find(int ns, const char *key)
{
	for (size_t i = 0; i < pmic.nlocal; i++) {
		if (pmic.local[i].ns == ns && strcmp(pmic.local[i].key, key) == 0)
			return &pmic.local[i];
	}
	return NULL;
}

int pmic_local_set(int ns, const char *key, const char *val)
{
	struct pmic_kv *e = local_find(ns, key);
	char *v = strdup(val);

	if (!v)
		return -1;
	if (e) {
		free(e->val);
		e->val = v;
		return 0;
	}
	if (pmic.nlocal == pmic.caplocal) {
		size_t cap = pmic.caplocal ? pmic.caplocal * 2 : 16;
		struct pmic_kv *n = realloc(pmic.local, cap * sizeof(*n));
		if (!n) {
			free(v);
			return -1;
		}
		pmic.local = n;
		pmic.caplocal = cap;
	}
	e = &pmic.local[pmic.nlocal];
	e->key = strdup(key);
	if (!e->key) {
		free(v);
		return -1;
	}
	e->ns = ns;
	e->val = v;
	pmic.nlocal++;
	return 0;
}

const char *pmic_local_get(int ns, const char *key)
{
	const struct pmic_kv *e = local_find(ns, key);

	return e ? e->val : NULL;
}

int pmic_local_del(int ns, const char *key)
{
	struct pmic_kv *e = local_find(ns, key);

	if (!e)
		return -1;
	free(e->key);
	free(e->val);
	size_t idx = (size_t)(e - pmic.local);
	memmove(e, e + 1, (pmic.nlocal - idx - 1) * sizeof(*e));
	pmic.nlocal--;
	return 0;
}

const struct pmic_kv *pmic_local_at(int ns, int idx)
{
	for (size_t i = 0; i < pmic.nlocal; i++) {
		if (pmic.local[i].ns == ns && idx-- == 0)
			return &pmic.local[i];
	}
	return NULL;
}

void pmic_reset(void)
{
	if (pmic.fd >= 0)
		close(pmic.fd);
	pmic_pmix_reap();
	for (size_t i = 0; i < pmic.nlocal; i++) {
		free(pmic.local[i].key);
		free(pmic.local[i].val);
	}
	free(pmic.local);
	free(pmic.clique);
	pmi_topo_view_free(&pmic.topo);
	memset(&pmic, 0, sizeof(pmic));
	pmic.fd = -1;
	pmic.node = pmic.nnodes = -1;
	pmic.mode = PMIC_NONE;
}

/* ---- connecting ---- */

/* Integer environment variable; -1 when absent or not a number. */
static int env_int(const char *name, int *out)
{
	const char *v = getenv(name);

	if (!v || pmi_wire_parse_int(v, strlen(v), out) < 0)
		return -1;
	return 0;
}

/* Connect to "host:port". The fd, or -1. */
static int tcp_connect(const char *hostport)
{
	char host[256];
	const char *colon = strrchr(hostport, ':');
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
	int fd = -1;

	if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof(host))
		return -1;
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = '\0';
	if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
		return -1;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

/* PMI_PORT + PMI_ID: identify ourselves and learn size and rank. */
static int initack(int id)
{
	char req[64], line[PMIC_LINE];
	int got = 0;

	snprintf(req, sizeof(req), "cmd=initack pmiid=%d\n", id);
	if (pmic_xact(req, "initack", line, sizeof(line)) < 0)
		return -1;
	for (int i = 0; i < 3; i++) {
		long n = expect("set", line, sizeof(line));
		if (n < 0)
			return -1;
		if (pmi_wire_get_int(line, (size_t)n, "size", &pmic.size) == 0)
			got |= 1;
		if (pmi_wire_get_int(line, (size_t)n, "rank", &pmic.rank) == 0)
			got |= 2;
	}
	return got == 3 ? 0 : -1;
}

/* Pick the transport from the environment; PMIC_SINGLETON when there is none. */
static int connect_pm(void)
{
	int fd, id;
	const char *port = getenv("PMI_PORT");

	pmic.rank = 0;
	pmic.size = 1;
	if (env_int("PMI_FD", &fd) == 0) {
		if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
			return -1;
		pmic.fd = fd;
	} else if (port && *port) {
		pmic.fd = tcp_connect(port);
		if (pmic.fd < 0)
			return -1;
		if (env_int("PMI_ID", &id) == 0) {
			pmic.mode = PMIC_WIRE;
			return initack(id);
		}
	} else {
		pmic.mode = PMIC_SINGLETON;
		return 0;
	}
	pmic.mode = PMIC_WIRE;
	if (env_int("PMI_RANK", &pmic.rank) < 0 || env_int("PMI_SIZE", &pmic.size) < 0) {
		pmic.rank = 0; /* like MPICH: without them every process is rank 0 of 1 */
		pmic.size = 1;
	}
	return 0;
}

/* PMI-2 first? LAMKIT_PMI_VERSION=1|2 decides; otherwise yes on PMI_FD when the launcher
 * says it serves PMI-2 (PMI_JOBID: lamkit's agents and Slurm's pmi2 plugin set it). */
static int want_v2(void)
{
	const char *v = getenv("LAMKIT_PMI_VERSION"), *mt = getenv("SLURM_MPI_TYPE");

	if (v && *v)
		return strcmp(v, "2") == 0;
	if (!getenv("PMI_FD"))
		return 0;
	return getenv("PMI_JOBID") != NULL || (mt && strcmp(mt, "pmi2") == 0);
}

/* init (PMI-2 if wanted and accepted), then get_maxes, get_appnum, get_my_kvsname. */
static int handshake(void)
{
	char line[PMIC_LINE];
	long n;
	int ver = 1;

	pmic.ver = 1;
	if (want_v2()) {
		n = pmic_xact("cmd=init pmi_version=2 pmi_subversion=0\n", "response_to_init", line,
		              sizeof(line));
		if (n < 0)
			return -1;
		if (pmic_rc(line, (size_t)n) == 0 &&
		    pmi_wire_get_int(line, (size_t)n, "pmi_version", &ver) == 0 && ver == 2) {
			pmic.ver = 2;
			return pmic2_init();
		}
		/* refused but still connected: fall back to PMI-1 below */
	}
	n = pmic_xact("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", line,
	              sizeof(line));
	ver = 1;
	if (n < 0 || pmic_rc(line, (size_t)n) != 0)
		return -1;
	if (pmi_wire_get_int(line, (size_t)n, "pmi_version", &ver) == 0 && ver != 1)
		return -1;
	n = pmic_xact("cmd=get_maxes\n", "maxes", line, sizeof(line));
	if (n < 0 || pmi_wire_get_int(line, (size_t)n, "kvsname_max", &pmic.kvsname_max) < 0 ||
	    pmi_wire_get_int(line, (size_t)n, "keylen_max", &pmic.keylen_max) < 0 ||
	    pmi_wire_get_int(line, (size_t)n, "vallen_max", &pmic.vallen_max) < 0)
		return -1;
	n = pmic_xact("cmd=get_appnum\n", "appnum", line, sizeof(line));
	if (n < 0 || pmi_wire_get_int(line, (size_t)n, "appnum", &pmic.appnum) < 0)
		return -1;
	n = pmic_xact("cmd=get_my_kvsname\n", "my_kvsname", line, sizeof(line));
	if (n < 0 ||
	    pmi_wire_get_str(line, (size_t)n, "kvsname", pmic.kvsname, sizeof(pmic.kvsname)) < 0)
		return -1;
	return 0;
}

int PMI_Init(int *spawned)
{
	int sp = 0;

	if (!spawned)
		return PMI_ERR_INVALID_ARG;
	if (pmic.mode != PMIC_NONE) {
		*spawned = pmic.spawned;
		return PMI_SUCCESS;
	}
	pmic_reset();
	if (pmic_pmix_bridge() < 0 || connect_pm() < 0 ||
	    (pmic.mode == PMIC_WIRE && handshake() < 0) || pmic.size < 1 || pmic.rank < 0 ||
	    pmic.rank >= pmic.size) {
		pmic_reset();
		return PMI_FAIL;
	}
	if (pmic.mode == PMIC_SINGLETON) {
		pmic.kvsname_max = PMI_KVSNAME_MAX;
		pmic.keylen_max = PMI_KEYLEN_MAX;
		pmic.vallen_max = PMI_VALLEN_MAX;
		snprintf(pmic.kvsname, sizeof(pmic.kvsname), "singleton-%ld", (long)getpid());
	}
	pmic.usize = -1;
	pmic.spawned = pmic.spawned || (env_int("PMI_SPAWNED", &sp) == 0 && sp != 0);
	*spawned = pmic.spawned;
	return PMI_SUCCESS;
}

int PMI_Initialized(PMI_BOOL *initialized)
{
	if (!initialized)
		return PMI_ERR_INVALID_ARG;
	*initialized = pmic.mode != PMIC_NONE ? PMI_TRUE : PMI_FALSE;
	return PMI_SUCCESS;
}

int PMI_Finalize(void)
{
	char line[PMIC_LINE];
	int rc = PMI_SUCCESS;

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (pmic.mode == PMIC_WIRE && pmic.ver == 2) {
		struct pmi2_out o;
		pmi2_out_begin(&o, "finalize");
		rc = pmic2_simple(&o, "finalize-response");
	} else if (pmic.mode == PMIC_WIRE &&
	           pmic_xact("cmd=finalize\n", "finalize_ack", line, sizeof(line)) < 0) {
		rc = PMI_FAIL;
	}
	pmic_reset();
	return rc;
}

int PMI_Abort(int exit_code, const char error_msg[])
{
	char req[PMI_LINE_MAX];
	int n = snprintf(req, sizeof(req) - 1, "cmd=abort exitcode=%d", exit_code);

	if (pmic.mode == PMIC_WIRE && pmic.ver == 2) {
		struct pmi2_out o;
		pmi2_out_begin(&o, "abort");
		pmi2_out_add(&o, "isworld", "TRUE");
		pmi2_out_add(&o, "msg", error_msg ? error_msg : "");
		pmi2_out_addi(&o, "exitcode", exit_code); /* lamkit's extension; others ignore it */
		long len = pmi2_out_finish(&o);
		n = len > 0 && pmic_send(o.buf, (size_t)len) == 0 ? 0 : -1;
		pmi2_out_free(&o);
		if (n == 0) {
			struct pollfd p = {.fd = pmic.fd, .events = POLLIN};
			char sink[256];
			while (poll(&p, 1, 30000) > 0 && read(pmic.fd, sink, sizeof(sink)) > 0)
				;
		}
	} else if (pmic.mode == PMIC_WIRE) {
		if (error_msg && *error_msg) {
			n += snprintf(req + n, sizeof(req) - 1 - (size_t)n, " error_msg=%s",
			              error_msg);
			n = n < (int)sizeof(req) - 1 ? n : (int)sizeof(req) - 2;
			for (int i = 0; i < n; i++) /* one line: no control bytes */
				req[i] =
				    (unsigned char)req[i] < ' ' || req[i] == 0x7f ? ' ' : req[i];
		}
		req[n++] = '\n';
		if (pmic_send(req, (size_t)n) == 0) {
			struct pollfd p = {.fd = pmic.fd, .events = POLLIN};
			char sink[256];
			/* the launcher ends the job; wait for it a while, draining input */
			while (poll(&p, 1, 30000) > 0 && read(pmic.fd, sink, sizeof(sink)) > 0)
				;
		}
	}
	_exit(exit_code);
}

/* ---- job facts ---- */

int PMI_Get_size(int *size)
{
	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!size)
		return PMI_ERR_INVALID_ARG;
	*size = pmic.size;
	return PMI_SUCCESS;
}

int PMI_Get_rank(int *rank)
{
	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!rank)
		return PMI_ERR_INVALID_ARG;
	*rank = pmic.rank;
	return PMI_SUCCESS;
}

int PMI_Get_appnum(int *appnum)
{
	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!appnum)
		return PMI_ERR_INVALID_ARG;
	*appnum = pmic.appnum;
	return PMI_SUCCESS;
}

int PMI_Get_universe_size(int *size)
{
	char line[PMIC_LINE];

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!size)
		return PMI_ERR_INVALID_ARG;
	if (pmic.usize < 0 && pmic.mode == PMIC_WIRE && pmic.ver == 2) {
		char v[32];
		int found = 0;
		if (pmic2_query("info-getjobattr", "universeSize", NULL, NULL, v, sizeof(v),
		                &found) == PMI_SUCCESS &&
		    found && pmi_wire_parse_int(v, strlen(v), &pmic.usize) == 0 && pmic.usize > 0)
			;
		else
			pmic.usize = pmic.size;
	} else if (pmic.usize < 0 && pmic.mode == PMIC_WIRE) {
		long n = pmic_xact("cmd=get_universe_size\n", "universe_size", line, sizeof(line));
		if (n < 0 || pmi_wire_get_int(line, (size_t)n, "size", &pmic.usize) < 0)
			return PMI_FAIL;
	}
	*size = pmic.usize < 0 ? pmic.size : pmic.usize;
	return PMI_SUCCESS;
}

/* ---- KVS ---- */

int PMI_KVS_Get_my_name(char kvsname[], int length)
{
	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	return pmic_copy(kvsname, length, pmic.kvsname);
}

int PMI_KVS_Get_name_length_max(int *length)
{
	if (!length)
		return PMI_ERR_INVALID_ARG;
	*length = pmic.mode == PMIC_NONE ? PMI_KVSNAME_MAX : pmic.kvsname_max;
	return PMI_SUCCESS;
}

int PMI_KVS_Get_key_length_max(int *length)
{
	if (!length)
		return PMI_ERR_INVALID_ARG;
	*length = pmic.mode == PMIC_NONE ? PMI_KEYLEN_MAX : pmic.keylen_max;
	return PMI_SUCCESS;
}

/* Largest value (with NUL) whose put line fits in PMI_LINE_MAX with some escapes. */
static int value_max(void)
{
	int fixed = (int)strlen("cmd=put kvsname= key= value=\n") + PMIC_SLACK;
	int budget = PMI_LINE_MAX - fixed - (int)strlen(pmic.kvsname) - pmic.keylen_max;
	int max = pmic.mode == PMIC_NONE ? PMI_VALLEN_MAX : pmic.vallen_max;

	if (budget < 64)
		budget = 64;
	return max < budget ? max : budget;
}

int PMI_KVS_Get_value_length_max(int *length)
{
	if (!length)
		return PMI_ERR_INVALID_ARG;
	*length = value_max();
	return PMI_SUCCESS;
}

/* Common argument checks for put and get. */
static int kvs_args(const char *kvsname, const char *key)
{
	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (!pmic_token_ok(kvsname))
		return PMI_ERR_INVALID_ARG;
	if (!pmic_token_ok(key))
		return PMI_ERR_INVALID_KEY;
	if (strlen(key) >= (size_t)pmic.keylen_max)
		return PMI_ERR_INVALID_KEY_LENGTH;
	return PMI_SUCCESS;
}

int PMI_KVS_Put(const char kvsname[], const char key[], const char value[])
{
	char esc[PMI_LINE_MAX], req[PMI_LINE_MAX + 1], line[PMIC_LINE];
	int rc = kvs_args(kvsname, key);

	if (rc != PMI_SUCCESS)
		return rc;
	if (!value)
		return PMI_ERR_INVALID_VAL;
	if (strlen(value) >= (size_t)value_max())
		return PMI_ERR_INVALID_VAL_LENGTH;
	if (pmic.mode == PMIC_SINGLETON)
		return pmic_local_set(PMIC_KVS, key, value) == 0 ? PMI_SUCCESS : PMI_ERR_NOMEM;
	if (pmi_wire_escape(value, esc, sizeof(esc)) < 0)
		return PMI_ERR_INVALID_VAL_LENGTH;
	if (pmic.ver == 2) {
		struct pmi2_out o;
		if (strlen(esc) > PMI2_VAL_MAX)
			return PMI_ERR_INVALID_VAL_LENGTH;
		pmi2_out_begin(&o, "kvs-put");
		pmi2_out_add(&o, "key", key);
		pmi2_out_add(&o, "value", esc);
		return pmic2_simple(&o, "kvs-put-response");
	}
	int n =
	    snprintf(req, sizeof(req), "cmd=put kvsname=%s key=%s value=%s\n", kvsname, key, esc);
	if (n < 0 || n > PMI_LINE_MAX) /* MPICH-style servers read at most 1024 bytes a line */
		return PMI_ERR_INVALID_VAL_LENGTH;
	long r = pmic_xact(req, "put_result", line, sizeof(line));
	return r >= 0 && pmic_rc(line, (size_t)r) == 0 ? PMI_SUCCESS : PMI_FAIL;
}

int pmic_get(const char *kvsname, const char *key, char *out, size_t outlen)
{
	char req[PMI_LINE_MAX + 1], line[PMIC_LINE];
	size_t vlen;

	if (pmic.mode == PMIC_SINGLETON) {
		const char *v = pmic_local_get(PMIC_KVS, key);
		if (!v)
			return PMI_FAIL;
		return pmic_copy(out, (int)outlen, v);
	}
	if (pmic.ver == 2) {
		char raw[PMI2_VAL_MAX + 1];
		int found = 0;
		int rc = pmic2_query("kvs-get", key, "jobid", kvsname, raw, sizeof(raw), &found);
		if (rc != PMI_SUCCESS || !found)
			return rc != PMI_SUCCESS ? rc : PMI_FAIL;
		return pmi_wire_unescape(raw, strlen(raw), out, outlen) < 0 ? PMI_ERR_INVALID_LENGTH
		                                                            : PMI_SUCCESS;
	}
	int n = snprintf(req, sizeof(req), "cmd=get kvsname=%s key=%s\n", kvsname, key);
	if (n < 0 || n > PMI_LINE_MAX)
		return PMI_ERR_INVALID_KEY_LENGTH;
	long r = pmic_xact(req, "get_result", line, sizeof(line));
	if (r < 0 || pmic_rc(line, (size_t)r) != 0)
		return PMI_FAIL;
	const char *v = pmi_wire_find(line, (size_t)r, "value", &vlen);
	if (!v)
		return PMI_FAIL;
	if (pmi_wire_unescape(v, vlen, out, outlen) < 0)
		return PMI_ERR_INVALID_LENGTH;
	return PMI_SUCCESS;
}

int PMI_KVS_Get(const char kvsname[], const char key[], char value[], int length)
{
	int rc = kvs_args(kvsname, key);

	if (rc != PMI_SUCCESS)
		return rc;
	if (!value || length <= 0)
		return PMI_ERR_INVALID_LENGTH;
	return pmic_get(kvsname, key, value, (size_t)length);
}

int PMI_KVS_Commit(const char kvsname[])
{
	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	return pmic_token_ok(kvsname) ? PMI_SUCCESS : PMI_ERR_INVALID_ARG;
}

int PMI_Barrier(void)
{
	char line[PMIC_LINE];

	if (pmic.mode == PMIC_NONE)
		return PMI_ERR_INIT;
	if (pmic.mode == PMIC_SINGLETON)
		return PMI_SUCCESS;
	if (pmic.ver == 2) {
		struct pmi2_out o;
		pmi2_out_begin(&o, "kvs-fence");
		return pmic2_simple(&o, "kvs-fence-response");
	}
	return pmic_xact("cmd=barrier_in\n", "barrier_out", line, sizeof(line)) < 0 ? PMI_FAIL
	                                                                            : PMI_SUCCESS;
}
