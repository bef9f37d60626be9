/* tests/unit/t_boot_wipe.c: boot_wipe_node against a hand-made session tree and real sleeps. */
#include "tap.h"
#include "core.h"
#include "session.h"
#include "wipe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmp[256], root[512], shm1[128], shm2[128];
static pid_t kids[16];
static int nkids;

/* At exit, even after failures: end every process this test started, by pid. */
static void cleanup(void)
{
	for (int i = 0; i < nkids; i++) {
		if (kids[i] > 0 && kill(kids[i], SIGKILL) == 0)
			waitpid(kids[i], NULL, 0);
	}
	unlink(shm1);
	unlink(shm2);
	if (tmp[0])
		core_rm_rf(tmp);
}

/* Start argv in its own session (killed with us); env_dir: set LAMKIT_SESSION_DIR to it. */
static pid_t start(const char *env_dir, char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setsid();
		if (env_dir)
			setenv("LAMKIT_SESSION_DIR", env_dir, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid > 0 && nkids < (int)(sizeof kids / sizeof *kids))
		kids[nkids++] = pid;
	return pid;
}

static pid_t sleeper(const char *env_dir)
{
	char *argv[] = {"sleep", "30", NULL};
	return start(env_dir, argv);
}

/* Alive and not a zombie. */
static int running(pid_t pid)
{
	char path[64], *s;
	size_t len;
	int r;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	s = core_read_file(path, 4096, &len);
	if (!s)
		return 0;
	char *p = strrchr(s, ')');
	r = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	free(s);
	return r;
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[1024];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || core_write_all(fd, text, strlen(text)) < 0)
		printf("# cannot write %s: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static char notes[16384];

static void on_note(void *arg, enum boot_wipe_note kind, const char *line)
{
	size_t n = strlen(notes);
	snprintf(notes + n, sizeof notes - n, "%c %s\n", "ASF"[kind], line);
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return d ? n : -1;
}

/* Wait (at most 5 s) for the child of sh to write its pid. */
static pid_t read_pid(const char *path)
{
	for (int i = 0; i < 250; i++) {
		size_t len;
		char *s = core_read_file(path, 64, &len);
		pid_t pid = s ? (pid_t)atoi(s) : 0;
		free(s);
		if (pid > 0)
			return pid;
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return 0;
}

int main(void)
{
	char err[512], a1[600], j1[700], j2[700], outside[300], j9[400], line[4096], path[1024];
	struct boot_wipe_report rep;
	struct boot_wipe_opts o = {.note = on_note};

	atexit(cleanup);
	snprintf(tmp, sizeof tmp, "/tmp/lamkit-t-wipe.XXXXXX");
	if (!mkdtemp(tmp)) {
		tmp[0] = '\0';
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(path, sizeof path, "%s/tmp", tmp);
	mkdir(path, 0700);
	setenv("LAMKIT_TMPDIR", path, 1);

	is_int(boot_wipe_node(&o, &rep, err, sizeof err), 0, "no session root: fine");
	is_int(rep.killed + rep.dirs_removed + rep.gone + rep.failed, 0, "no root: nothing to do");

	ok(boot_session_root(root, sizeof root, err, sizeof err) == 0, "session root %s", root);
	snprintf(a1, sizeof a1, "%s/local-1", root);
	snprintf(j1, sizeof j1, "%s/job-1", a1);
	snprintf(j2, sizeof j2, "%s/job-2", a1);
	snprintf(outside, sizeof outside, "%s/outside", tmp);
	snprintf(j9, sizeof j9, "%s/job-9", outside);
	ok(core_mkdir_p(j1, 0700) == 0 && core_mkdir_p(j2, 0700) == 0 &&
	       core_mkdir_p(j9, 0700) == 0,
	   "fake session tree");

	/* the processes */
	pid_t rank0 = sleeper(NULL), agent = sleeper(NULL), reused = sleeper(NULL);
	pid_t untrusted = sleeper(NULL), far = sleeper(NULL), env_kid = sleeper(j2);
	snprintf(path, sizeof path, "%s/kid.pid", tmp);
	char *sh_argv[] = {"sh", "-c", "sleep 30 & echo $! >\"$0\"; wait", path, NULL};
	pid_t sh = start(NULL, sh_argv), grandkid = read_pid(path);
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	ok(rank0 > 0 && agent > 0 && reused > 0 && untrusted > 0 && far > 0 && env_kid > 0 &&
	       sh > 0 && grandkid > 0,
	   "started the processes");

	/* the records */
	snprintf(line, sizeof line, "%d %llu\n", (int)agent, boot_proc_starttime(agent));
	put(a1, "agent", line);
	snprintf(line, sizeof line, "%d %llu 0\n%d 4242 1\n%d %llu 2\n%d 0 3\n", (int)rank0,
	         boot_proc_starttime(rank0), (int)dead, (int)reused,
	         boot_proc_starttime(reused) + 12345, (int)untrusted);
	put(j1, "procs", line);
	snprintf(line, sizeof line, "%d %llu 0\n", (int)sh, boot_proc_starttime(sh));
	put(j2, "procs", line);
	snprintf(line, sizeof line, "%d %llu 0\n", (int)far, boot_proc_starttime(far));
	put(j9, "procs", line); /* reachable only through the symlinks */
	put(outside, "keep.txt", "not lamkit's\n");
	snprintf(shm1, sizeof shm1, "/dev/shm/lamkit-test-%d", (int)getpid());
	snprintf(shm2, sizeof shm2, "/dev/shm/lamkit-test2-%d", (int)getpid());
	put("/dev/shm", shm1 + 9, "x");
	put("/dev/shm", shm2 + 9, "x");
	snprintf(line, sizeof line, "%s\n%s/keep.txt\n%s/escape/keep.txt\n", shm1, outside, j1);
	put(j1, "files", line);
	snprintf(line, sizeof line, "%s\n", shm2 + 8);
	put(j1, "shm-lamkit-test2", line);
	snprintf(path, sizeof path, "%s/escape", j1);
	ok(symlink(outside, path) == 0, "symlink out of a job dir planted");
	snprintf(path, sizeof path, "%s/evil", root);
	ok(symlink(outside, path) == 0, "symlink out of the root planted");

	/* dry run: counts what it would do, changes nothing */
	o.dry_run = 1;
	is_int(boot_wipe_node(&o, &rep, err, sizeof err), 0, "dry run");
	is_int(rep.killed, 5, "dry run: would kill rank, agent, env match, sh and its child");
	is_int(rep.dirs_removed, 3, "dry run: would remove 3 dirs");
	is_int(rep.files_removed, 2, "dry run: would remove 2 registered files");
	ok(running(rank0) && running(agent) && running(sh) && running(grandkid) &&
	       running(env_kid) && exists(shm1) && exists(shm2) && exists(j1),
	   "dry run changed nothing");
	ok(strstr(notes, "A would kill pid") != NULL, "dry run lists what it would kill");

	notes[0] = '\0';
	o.dry_run = 0;
	is_int(boot_wipe_node(&o, &rep, err, sizeof err), 0, "wipe");
	for (const char *l = notes, *e; (e = strchr(l, '\n')); l = e + 1)
		printf("# %.*s\n", (int)(e - l), l);
	int st = 0;
	is_int(waitpid(rank0, &st, 0), rank0, "rank reaped");
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "recorded rank SIGKILLed");
	is_int(waitpid(agent, &st, 0), agent, "agent reaped");
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "recorded agent SIGKILLed");
	is_int(waitpid(env_kid, &st, 0), env_kid, "unrecorded process of job-2 reaped");
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "found by LAMKIT_SESSION_DIR and killed");
	is_int(waitpid(sh, &st, 0), sh, "sh reaped");
	ok(!running(grandkid), "the recorded process's child was killed too");
	snprintf(line, sizeof line, "S %s/procs: pid %d is now another process", j1, (int)reused);
	ok(strstr(notes, line) != NULL, "the reused pid is reported with its record's path");
	is_int(rep.killed, 5, "killed 5");
	is_int(rep.gone, 1, "one record already gone");
	is_int(rep.reused, 1, "one reused pid");
	is_int(rep.untrusted, 1, "one record without a start time");
	ok(running(reused), "a live pid with a different start time survives");
	ok(running(untrusted), "a pid recorded without start time survives");
	ok(running(far), "a process recorded behind a symlink survives");

	is_int(rep.files_removed, 2, "two registered files removed");
	ok(!exists(shm1) && !exists(shm2), "the /dev/shm files are gone");
	is_int(rep.files_skipped, 2, "outside path and path through a symlink skipped");
	snprintf(path, sizeof path, "%s/keep.txt", outside);
	ok(exists(path), "the file outside survives");
	snprintf(path, sizeof path, "%s/procs", j9);
	ok(exists(path), "nothing behind the symlinks was removed");
	is_int(rep.dirs_removed, 3, "three session dirs removed");
	is_int(rep.failed, 0, "no failures");
	is_int(entries(root), 0, "the session root is empty");

	notes[0] = '\0';
	is_int(boot_wipe_node(&o, &rep, err, sizeof err), 0, "wipe again");
	is_int(rep.killed + rep.gone + rep.dirs_removed + rep.files_removed + rep.failed, 0,
	       "second wipe: nothing to do");
	is_str(notes, "", "and nothing to say");
	return done_testing();
}
