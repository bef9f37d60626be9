/* tests/unit/t_boot_jobspec.c: job spec encoding round trip and malformed payloads. */
#include "proto.h"
#include "tap.h"

int main(void)
{
	char *argv0[] = {"./a.out", "x y", NULL};
	char *argv1[] = {"b", NULL};
	char *env[] = {"A=1", "B=two words", NULL};
	char *aenv[] = {"C=3", NULL};
	struct boot_app apps[2] = {
	    {.exe = "./a.out", .argv = argv0, .argc = 2, .nprocs = 3, .first_rank = 0},
	    {.exe = "b",
	     .argv = argv1,
	     .argc = 1,
	     .nprocs = 1,
	     .first_rank = 3,
	     .wdir = "/tmp",
	     .env = aenv,
	     .nenv = 1},
	};
	int ranks[] = {0, 1, 2, 3};
	char *pre[] = {"PARENT_ROOT_PORT_NAME", "tag#0$port#9", NULL};
	struct boot_jobspec js = {.jobid = 42,
	                          .kvsname = "kvs_1_42",
	                          .size = 4,
	                          .universe_size = 8,
	                          .tag_output = 1,
	                          .mpi_kind = BOOT_MPI_MPICH,
	                          .wdir = "/home",
	                          .env = env,
	                          .nenv = 2,
	                          .apps = apps,
	                          .napps = 2,
	                          .process_mapping = "(vector,(0,1,4))",
	                          .ranks = ranks,
	                          .nranks = 4,
	                          .nagents = 1,
	                          .spawner = "kvs_1_41",
	                          .names_at = "10.0.0.1:7000",
	                          .preput = pre,
	                          .npreput = 2};
	struct core_wbuf w = {0};
	boot_jobspec_encode(&w, &js);
	ok(!w.err && w.len > 0, "encodes");

	struct boot_jobspec d;
	is_int(boot_jobspec_decode(&d, w.p, w.len), 0, "decodes");
	is_int(d.jobid, 42, "jobid");
	is_str(d.kvsname, "kvs_1_42", "kvsname");
	is_int(d.size, 4, "size");
	is_int(d.tag_output, 1, "tag");
	is_int(d.nenv, 2, "env count");
	is_str(d.env[1], "B=two words", "env value with spaces");
	ok(d.env[2] == NULL, "env NULL-terminated");
	is_int(d.napps, 2, "apps");
	is_str(d.apps[0].argv[1], "x y", "argument with space");
	ok(d.apps[0].argv[2] == NULL, "argv NULL-terminated");
	ok(d.apps[0].wdir == NULL, "empty wdir decodes as NULL");
	is_str(d.apps[1].wdir, "/tmp", "app wdir");
	is_str(d.apps[1].env[0], "C=3", "app env");
	is_int(boot_jobspec_app(&d, 3)->first_rank, 3, "rank 3 is in app 1");
	ok(boot_jobspec_app(&d, 4) == NULL, "rank 4 is in no app");
	is_str(d.process_mapping, "(vector,(0,1,4))", "mapping");
	is_int(d.nranks, 4, "local ranks");
	is_str(d.spawner, "kvs_1_41", "spawner");
	is_str(d.names_at, "10.0.0.1:7000", "name service");
	is_int(d.npreput, 2, "preput pair");
	is_str(d.preput[1], "tag#0$port#9", "preput value");
	boot_jobspec_free(&d);

	int bad = 0;
	for (size_t cut = 0; cut < w.len; cut++) /* every truncation is rejected, never read past */
		bad += boot_jobspec_decode(&d, w.p, cut) == 0;
	is_int(bad, 0, "every truncated payload is rejected");
	char *junk = malloc(w.len + 1);
	memcpy(junk, w.p, w.len);
	junk[w.len] = 'x';
	ok(boot_jobspec_decode(&d, junk, w.len + 1) < 0, "trailing bytes are rejected");
	memcpy(junk, w.p, w.len);
	junk[7] = (char)0x7f; /* the kvsname length, high byte: about 2 GB */
	ok(boot_jobspec_decode(&d, junk, w.len) < 0, "a huge string length is rejected");
	apps[1].first_rank = 9;
	struct core_wbuf w2 = {0};
	boot_jobspec_encode(&w2, &js);
	ok(boot_jobspec_decode(&d, w2.p, w2.len) < 0, "an app past the job size is rejected");
	free(junk);
	core_w_free(&w);
	core_w_free(&w2);
	return done_testing();
}
