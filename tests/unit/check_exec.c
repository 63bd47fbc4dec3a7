/*
 * check_exec.c - the exec/ folder: the sandbox as bubblewrap runs it
 * (the limits, the first program, what it hands back from /out: regular
 * files only, read after every process ended; nothing of this process's
 * environment inside; every writable place bounded) and its work
 * directory.  Whole exec trainers, git export and their attacks are
 * driven by tests/cli/t-exec*.sh and tests/attacks/.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "exec/sandbox.h"
#include "tests/unit/suites.h"

/* ---- the sandbox (exec/sandbox.h) ------------------------------------ */

static int
sb_run(char **argv, size_t argc, uint64_t seconds, uint64_t output,
       struct sandbox_result *r, struct rba_buf *cap)
{
	static char *names[] = {"FOO"}, *values[] = {"bar"};
	struct sandbox_spec s;
	struct rba_detail d;

	memset(&s, 0, sizeof(s));
	s.argv = argv;
	s.argc = argc;
	s.var_names = names;
	s.var_values = values;
	s.nvars = 1;
	s.cwd = "/tmp";
	s.seconds = seconds;
	s.memory = UINT64_C(1) << 30;
	s.output = output;
	s.processes = 64;
	return sandbox_run(&s, r, cap, &d);
}

/* sb_run with the files of /out named in collect brought back. */
static int
sb_collect(const char *script, const char *const *collect, size_t n,
	   uint64_t output, struct sandbox_result *r, struct rba_buf *cap)
{
	char *argv[] = {"/usr/bin/sh", "-c", (char *)script};
	struct sandbox_spec s;
	struct rba_detail d;

	memset(&s, 0, sizeof(s));
	s.argv = argv;
	s.argc = 3;
	s.cwd = "/tmp";
	s.seconds = 20;
	s.memory = UINT64_C(1) << 30;
	s.output = output;
	s.processes = 32;
	s.collect = collect;
	s.ncollect = n;
	return sandbox_run(&s, r, cap, &d);
}

/* What the sandbox hands back: regular files only, read after every
 * process ended; nothing of this process's environment inside; every
 * writable place bounded; the processes capped. */
START_TEST(test_sandbox_outputs)
{
	static const char *const names[] = {"reg", "link", "fifo", "dir",
					    "none", "late"};
	struct sandbox_result r;
	struct rba_buf cap;

	ck_assert_int_eq(sb_collect("printf abc > /out/reg; "
				    "ln -s /etc/passwd /out/link; "
				    "mkfifo /out/fifo; mkdir /out/dir; "
				    "(sleep 1; echo late > /out/late) & exit 0",
				    names, 6, 1 << 20, &r, NULL),
			 0);
	ck_assert(r.exited && r.status == 0);
	ck_assert_int_eq(r.files[0].kind, SANDBOX_FILE_REGULAR);
	ck_assert_uint_eq(r.files[0].len, 3);
	ck_assert(memcmp(r.files[0].bytes, "abc", 3) == 0);
	ck_assert_int_eq(r.files[1].kind, SANDBOX_FILE_SYMLINK);
	ck_assert_int_eq(r.files[2].kind, SANDBOX_FILE_FIFO);
	ck_assert_int_eq(r.files[3].kind, SANDBOX_FILE_DIRECTORY);
	ck_assert_int_eq(r.files[4].kind, SANDBOX_FILE_ABSENT);
	/* the child left behind was killed before /out was read */
	ck_assert_int_eq(r.files[5].kind, SANDBOX_FILE_ABSENT);
	ck_assert(r.files[1].bytes == NULL && r.files[2].bytes == NULL);
	ck_assert(r.seconds < 1.0);
	sandbox_result_release(&r);

	/* no variable of the tool in any process of the sandbox */
	setenv("RBA_UNIT_SECRET", "s3cret", 1);
	rba_buf_init(&cap);
	ck_assert_int_eq(sb_collect("wc -c < /proc/1/environ; "
				    "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | "
				    "grep -c RBA_UNIT_SECRET; exit 0",
				    NULL, 0, 1 << 20, &r, &cap),
			 0);
	ck_assert_str_eq(rba_buf_cstr(&cap), "0\n0\n");
	rba_buf_release(&cap);
	unsetenv("RBA_UNIT_SECRET");

	/* / and /dev read-only; /tmp, /dev/shm and /out hold the output
	 * limit at most */
	rba_buf_init(&cap);
	ck_assert_int_eq(sb_collect("touch /x 2>/dev/null || echo ro-root; "
				    "touch /dev/x 2>/dev/null || echo ro-dev; "
				    "for d in /tmp /dev/shm /out; do "
				    "head -c 300000 /dev/zero > $d/f 2>/dev/null || echo full; done",
				    NULL, 0, 131072, &r, &cap),
			 0);
	ck_assert_str_eq(rba_buf_cstr(&cap), "ro-root\nro-dev\nfull\nfull\nfull\n");
	rba_buf_release(&cap);

	/* a fork bomb meets the process limit: the shell gives up when a
	 * fork fails, having written how many it started */
	{
		static const char *const c[] = {"count"};
		long started;
		ck_assert_int_eq(sb_collect("n=0; while [ $n -lt 500 ]; do sleep 5 & "
					    "n=$((n+1)); echo $n > /out/count; done",
					    c, 1, 1 << 20, &r, NULL),
				 0);
		ck_assert(r.exited && r.status != 0);
		ck_assert_int_eq(r.files[0].kind, SANDBOX_FILE_REGULAR);
		started = strtol((const char *)r.files[0].bytes, NULL, 10);
		ck_assert_int_ge(started, 20);
		ck_assert_int_le(started, 32);
		ck_assert(r.seconds < 5);
		sandbox_result_release(&r);
	}
}
END_TEST

START_TEST(test_sandbox_run)
{
	char *a1[] = {"/usr/bin/sh", "-c", "echo hi; echo err >&2; exit 3"};
	char *a2[] = {"/usr/bin/sh", "-c",
		      "echo $LANG $TZ $PYTHONHASHSEED $FOO $HOME $PATH; "
		      "cat /proc/net/dev | tail -n +3 | cut -d: -f1; "
		      "touch /usr/x 2>/dev/null || echo ro"};
	char *a3[] = {"/usr/bin/sleep", "30"};
	char *a4[] = {"/usr/bin/yes"};
	char *a5[] = {"/usr/bin/no-such-program"};
	struct sandbox_result r;
	struct rba_buf cap;
	struct rba_detail d;
	char why[300];

	ck_assert_msg(sandbox_available(&d) == 0, "%s", d.reason);
	ck_assert_int_eq(sb_run(a1, 3, 10, 1024, &r, NULL), 0);
	ck_assert(r.exited && r.status == 3 && !r.timed_out);
	ck_assert_str_eq(r.out_tail, "hi\n");
	ck_assert_str_eq(r.err_tail, "err\n");
	ck_assert_uint_eq(r.out_bytes, 3);

	/* only the declared and the fixed variables; no network but lo;
	 * the system read-only */
	rba_buf_init(&cap);
	ck_assert_int_eq(sb_run(a2, 3, 10, 4096, &r, &cap), 0);
	ck_assert(r.exited && r.status == 0);
	ck_assert_str_eq(rba_buf_cstr(&cap),
			 "C.UTF-8 UTC 0 bar /tmp /usr/bin:/bin\n    lo\nro\n");
	rba_buf_release(&cap);

	/* killed at the time limit, the whole group */
	ck_assert_int_eq(sb_run(a3, 2, 1, 1024, &r, NULL), 0);
	ck_assert(r.timed_out && r.seconds < 5);
	ck_assert(!(r.exited && r.status == 0));

	/* killed past the output limit */
	ck_assert_int_eq(sb_run(a4, 1, 10, 4096, &r, NULL), 0);
	ck_assert(r.output_exceeded);
	ck_assert_uint_le(r.out_bytes, 4096 + 65536);

	ck_assert_int_eq(sb_run(a5, 1, 10, 1024, &r, NULL), RBA_E_NOTFOUND);

	{
		struct sandbox_spec s;
		memset(&s, 0, sizeof(s));
		s.seconds = 7;
		memset(&r, 0, sizeof(r));
		r.timed_out = 1;
		sandbox_failure(&s, &r, why, sizeof(why));
		ck_assert_str_eq(why, "killed at the time limit of 7 s (limits.seconds)");
		memset(&r, 0, sizeof(r));
		r.exited = 1;
		r.status = 2;
		snprintf(r.err_tail, sizeof(r.err_tail), "a\nlast line\n\n");
		sandbox_failure(&s, &r, why, sizeof(why));
		ck_assert_str_eq(why, "exited with status 2: last line");
	}
}
END_TEST

/* The work directory goes with its maker, however the maker ends. */
START_TEST(test_sandbox_dir)
{
	struct sandbox_dir w;
	struct rba_detail d;
	struct stat st;
	char path[sizeof(w.path) + 8];
	int p[2], status;
	pid_t pid;

	ck_assert_int_eq(sandbox_dir_make(&w, &d), 0);
	ck_assert_int_eq(stat(w.path, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	snprintf(path, sizeof(path), "%s/sub", w.path);
	ck_assert_int_eq(mkdir(path, 0555), 0);
	snprintf(path, sizeof(path), "%s", w.path);
	sandbox_dir_remove(&w);
	ck_assert_int_ne(stat(path, &st), 0);

	/* a child that makes one and is killed with SIGKILL */
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (sandbox_dir_make(&w, NULL) != 0)
			_exit(1);
		if (write(p[1], w.path, strlen(w.path) + 1) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	memset(path, 0, sizeof(path));
	ck_assert_int_gt(read(p[0], path, sizeof(path) - 1), 0);
	close(p[0]);
	ck_assert_int_eq(stat(path, &st), 0);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	for (int i = 0; i < 100 && stat(path, &st) == 0; i++)
		usleep(20000);
	ck_assert_msg(stat(path, &st) != 0, "%s outlived its maker", path);
}
END_TEST

Suite *
suite_exec(void)
{
	Suite *s = suite_create("exec");
	TCase *tc = tcase_create("sandbox");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_sandbox_run);
	tcase_add_test(tc, test_sandbox_outputs);
	tcase_add_test(tc, test_sandbox_dir);
	suite_add_tcase(s, tc);
	return s;
}
