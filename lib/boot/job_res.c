/* lib/boot/job_res.c: resources the ranks of one job registered through PMI (shared-memory
 * segments, files, helper processes): kept in the job's session records, which `wipe` also
 * reads ("res-files", "res-procs"), and removed when their rank ends and when the job ends. */
#include "job_internal.h"
#include "core.h"
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#define RES_MAX 4096 /* registrations one job may hold */

struct boot_res {
	int rank;
	char kind; /* 's' shm, 'f' file, 'p' pid, 'M' SysV shm, 'S' SysV sem, 'Q' SysV msg */
	int releasing;
	pid_t pid;
	unsigned long long start;
	char *path; /* file path, or /dev/shm/<segment> */
};

static int shm_name_ok(const char *n)
{
	size_t len = strlen(n);

	return n[0] == '/' && len > 1 && len < NAME_MAX && !strchr(n + 1, '/') &&
	       strcmp(n, "/.") != 0 && strcmp(n, "/..") != 0;
}

/* An absolute path without ".", ".." or "//" under dir/. */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (path[0] != '/' || strstr(path, "//") || strstr(path, "/./") || strstr(path, "/../"))
		return 0;
	size_t pl = strlen(path);
	if ((pl >= 2 && !strcmp(path + pl - 2, "/.")) || (pl >= 3 && !strcmp(path + pl - 3, "/..")))
		return 0;
	return n && strncmp(path, dir, n) == 0 && path[n] == '/' && path[n + 1];
}

/* Write res-files and res-procs in full (temporary file, then rename). */
static void write_records(boot_job_t *j)
{
	struct core_wbuf f = {0}, p = {0};
	char line[64], path[4400];

	for (int i = 0; i < j->nres; i++) {
		struct boot_res *r = &j->res[i];
		if (r->kind == 'p') {
			int n = snprintf(line, sizeof line, "%ld %llu %d\n", (long)r->pid, r->start,
			                 r->rank);
			core_w_bytes(&p, line, (size_t)n);
		} else if (strchr("MSQ", r->kind)) {
			int n = snprintf(line, sizeof line, "%s:%ld\n", boot_sysv_kind(r->kind),
			                 (long)r->pid);
			core_w_bytes(&f, line, (size_t)n);
		} else {
			core_w_bytes(&f, r->path, strlen(r->path));
			core_w_bytes(&f, "\n", 1);
		}
	}
	const struct core_wbuf *b[2] = {&f, &p};
	const char *name[2] = {"res-files", "res-procs"};
	for (int k = 0; k < 2 && j->dir[0]; k++) {
		snprintf(path, sizeof path, "%s/%s", j->dir, name[k]);
		if (core_write_file_atomic(path, b[k]->p ? b[k]->p : "", b[k]->len, 0600) < 0)
			core_log(CORE_LOG_WARN, "agent: job %u: cannot write %s: %s", j->js.jobid,
			         path, strerror(errno));
	}
	core_w_free(&f);
	core_w_free(&p);
}

static int find(const boot_job_t *j, char kind, const char *path, pid_t pid)
{
	for (int i = 0; i < j->nres; i++) {
		const struct boot_res *r = &j->res[i];
		if (r->kind == kind && (r->path ? !strcmp(r->path, path) : r->pid == pid))
			return i;
	}
	return -1;
}

static void drop(boot_job_t *j, int i)
{
	free(j->res[i].path);
	j->res[i] = j->res[--j->nres];
}

const char *boot_sysv_kind(char code)
{
	return code == 'M' ? "sysv-shm" : code == 'S' ? "sysv-sem" : "sysv-msg";
}

char boot_sysv_code(const char *kind)
{
	return !strcmp(kind, "sysv-shm")   ? 'M'
	       : !strcmp(kind, "sysv-sem") ? 'S'
	       : !strcmp(kind, "sysv-msg") ? 'Q'
	                                   : 0;
}

/* The id exists and uid owns or created it. */
int boot_sysv_owned(char code, int id, uid_t uid)
{
	struct shmid_ds sh;
	struct semid_ds se;
	struct msqid_ds mq;
	struct ipc_perm *p = code == 'M' ? &sh.shm_perm : code == 'S' ? &se.sem_perm : &mq.msg_perm;
	int rc = code == 'M'   ? shmctl(id, IPC_STAT, &sh)
	         : code == 'S' ? semctl(id, 0, IPC_STAT, &se)
	         : code == 'Q' ? msgctl(id, IPC_STAT, &mq)
	                       : -1;

	return rc == 0 && (p->uid == uid || p->cuid == uid);
}

int boot_sysv_remove(char code, int id, uid_t uid)
{
	if (!boot_sysv_owned(code, id, uid))
		return -1;
	return code == 'M'   ? shmctl(id, IPC_RMID, NULL)
	       : code == 'S' ? semctl(id, 0, IPC_RMID)
	                     : msgctl(id, IPC_RMID, NULL);
}

/* Remove or kill what entry i names. */
static void destroy(boot_job_t *j, const struct boot_res *r)
{
	if (r->kind == 'p') {
		if (r->start && boot_proc_starttime(r->pid) == r->start &&
		    kill(r->pid, SIGKILL) == 0)
			core_log(CORE_LOG_INFO, "agent: job %u: killed rank %d's helper %ld",
			         j->js.jobid, r->rank, (long)r->pid);
		return;
	}
	if (strchr("MSQ", r->kind)) {
		if (boot_sysv_remove(r->kind, (int)r->pid, getuid()) == 0)
			core_log(CORE_LOG_INFO, "agent: job %u: removed rank %d's %s id %ld",
			         j->js.jobid, r->rank, boot_sysv_kind(r->kind), (long)r->pid);
		return;
	}
	int rc = r->kind == 's' ? shm_unlink(r->path + strlen("/dev/shm")) : unlink(r->path);
	if (rc == 0)
		core_log(CORE_LOG_INFO, "agent: job %u: removed rank %d's %s", j->js.jobid, r->rank,
		         r->path);
}

int boot_job_res_op(boot_job_t *j, int rank, int op, const char *kind, const char *name, char *why,
                    size_t whylen)
{
	char path[4400], root[4096], err[256];
	char k = !strcmp(kind, "shm")    ? 's'
	         : !strcmp(kind, "file") ? 'f'
	         : !strcmp(kind, "pid")  ? 'p'
	                                 : boot_sysv_code(kind);
	long pid = 0;
	char *end;

	if (!k) {
		snprintf(why, whylen, "unknown_kind");
		return -1;
	}
	if (k == 'p' || strchr("MSQ", k)) {
		errno = 0;
		pid = strtol(name, &end, 10);
		if (errno || *end || end == name || pid < (k == 'p' ? 2 : 0) || pid > INT_MAX) {
			snprintf(why, whylen, k == 'p' ? "bad_pid" : "bad_ipc_id");
			return -1;
		}
		if (k != 'p' && !boot_sysv_owned(k, (int)pid, getuid())) {
			snprintf(why, whylen, "no_such_ipc_id");
			return -1;
		}
	} else if (k == 's') {
		if (!shm_name_ok(name)) {
			snprintf(why, whylen, "bad_shm_name");
			return -1;
		}
		snprintf(path, sizeof path, "/dev/shm%s", name);
	} else {
		/* only where `wipe` would remove it too: /dev/shm or the user's session root */
		if (boot_session_root(root, sizeof root, err, sizeof err) < 0 ||
		    (!under(name, "/dev/shm") && !under(name, root))) {
			snprintf(why, whylen, "path_not_allowed");
			return -1;
		}
		snprintf(path, sizeof path, "%s", name);
	}
	int i = find(j, k, path, (pid_t)pid);
	if (op == PMI_RES_REGISTER) {
		if (i >= 0) {
			j->res[i].releasing = 0; /* registered again: guarded again */
			return 0;
		}
		if (j->nres >= RES_MAX) {
			snprintf(why, whylen, "too_many");
			return -1;
		}
		unsigned long long start = k == 'p' ? boot_proc_starttime((pid_t)pid) : 0;
		if (k == 'p' && (!start || kill((pid_t)pid, 0) < 0)) {
			snprintf(why, whylen, "no_such_process");
			return -1;
		}
		if (j->nres == j->capres) {
			int cap = j->capres ? 2 * j->capres : 8;
			struct boot_res *n = realloc(j->res, (size_t)cap * sizeof *n);
			if (!n) {
				snprintf(why, whylen, "no_memory");
				return -1;
			}
			j->res = n;
			j->capres = cap;
		}
		struct boot_res *r = &j->res[j->nres];
		*r = (struct boot_res){.rank = rank, .kind = k, .pid = (pid_t)pid, .start = start};
		r->path = k == 'p' || strchr("MSQ", k) ? NULL : strdup(path);
		if (!r->path && (k == 's' || k == 'f')) {
			snprintf(why, whylen, "no_memory");
			return -1;
		}
		j->nres++;
	} else if (i < 0) {
		snprintf(why, whylen, "not_registered");
		return -1;
	} else if (op == PMI_RES_RELEASE_BEGIN) {
		j->res[i].releasing = 1; /* still removed if the rank dies before release_end */
		return 0;
	} else {
		drop(j, i);
	}
	write_records(j);
	return 0;
}

void boot_job_res_clean(boot_job_t *j, int rank)
{
	int before = j->nres;

	for (int i = 0; i < j->nres;) {
		if (rank >= 0 && j->res[i].rank != rank) {
			i++;
			continue;
		}
		destroy(j, &j->res[i]);
		drop(j, i);
	}
	if (j->nres != before)
		write_records(j);
}

void boot_job_res_node_segment(boot_job_t *j)
{
	char name[sizeof j->node_seg], path[sizeof j->dir + 16], line[sizeof name + 1];
	int fd;

	snprintf(name, sizeof name, "/lkmpi-a%u-%ld", j->js.jobid, (long)getpid());
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) { /* left by an agent of the same pid that was killed */
		shm_unlink(name);
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (fd < 0) {
		core_log(CORE_LOG_DEBUG,
		         "agent: job %u: no node segment %s: %s (ranks make their own)",
		         j->js.jobid, name, strerror(errno));
		return;
	}
	close(fd);
	/* recorded before the ranks can know it: a crash from here on leaves a record to wipe */
	snprintf(path, sizeof path, "%s/shm-node", j->dir);
	int n = snprintf(line, sizeof line, "%s\n", name);
	if (!j->dir[0] || core_write_file_atomic(path, line, (size_t)n, 0600) < 0) {
		core_log(CORE_LOG_WARN, "agent: job %u: cannot record %s in %s: %s; not used",
		         j->js.jobid, name, path, strerror(errno));
		shm_unlink(name);
		return;
	}
	snprintf(j->node_seg, sizeof j->node_seg, "%s", name);
}

/* The segments lamkit's own MPI records as shm-<name> files in the job dir (tp_shm.c). */
static void clean_shm_records(boot_job_t *j)
{
	DIR *d = j->dir[0] ? opendir(j->dir) : NULL;
	struct dirent *de;
	char path[sizeof j->dir + NAME_MAX + 2], buf[NAME_MAX + 2];

	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "shm-", 4) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", j->dir, de->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		/* the node segment this agent made is removed at every job's end: no news; any
		 * other record here is a segment a rank made and could not remove (it died) */
		if (shm_name_ok(buf) && shm_unlink(buf) == 0)
			core_log(strcmp(de->d_name, "shm-node") ? CORE_LOG_INFO : CORE_LOG_DEBUG,
			         "agent: job %u: removed segment %s", j->js.jobid, buf);
	}
	if (d)
		closedir(d);
}

void boot_job_res_fini(boot_job_t *j)
{
	boot_job_res_clean(j, -1);
	clean_shm_records(j);
	/* the node segment this agent made, also when its record is gone with the job dir */
	if (j->node_seg[0] && shm_unlink(j->node_seg) == 0)
		core_log(CORE_LOG_DEBUG, "agent: job %u: removed segment %s", j->js.jobid,
		         j->node_seg);
	free(j->res);
	j->res = NULL;
	j->nres = j->capres = 0;
}
