/*
 * fuzz_store.c - a store opened from a mutated data.mdb.
 *
 * LMDB trusts its pages: a damaged one can fault inside liblmdb, which
 * the tool catches (cli/cli_guard.c) and turns into exit 2.  So the store
 * is not opened in this process: each input becomes the data.mdb of a
 * scratch store, and the built binary ($RBA_BIN, else the one named at
 * compile time) runs on it in a child, as a user would run it.  Judged
 * by the child's exit: every command ends with 0, 1 or 2 (never a
 * signal, never a hang), an exit 2 says one line, and when `store check`
 * finds the store clean the read commands succeed on it.
 *
 * Coverage is of this process only, so libFuzzer explores blind here;
 * the value is in the seed stores, their mutations and the replay.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"

#ifndef FUZZ_RBA_BIN
#define FUZZ_RBA_BIN "build/rebuild-audit"
#endif
#define CHILD_SECONDS 30

static char dir[64];

static void
scratch(void)
{
	if (dir[0] != '\0')
		return;
	snprintf(dir, sizeof(dir), "%s", "/tmp/rba-fuzz-store.XXXXXX");
	if (mkdtemp(dir) == NULL)
		fuzz_fail("mkdtemp: %s", strerror(errno));
}

/* Runs the binary with args on the scratch store; returns its exit
 * status after judging how it ended. */
static int
run(const char *const *args)
{
	char errpath[128];
	const char *bin = getenv("RBA_BIN");
	const char *argv[12];
	int st, fd, lines = 0, c;
	size_t i = 0;
	pid_t pid;
	FILE *f;

	if (bin == NULL || *bin == '\0')
		bin = FUZZ_RBA_BIN;
	argv[i++] = bin;
	argv[i++] = "-S";
	argv[i++] = dir;
	for (; *args != NULL && i < 11; args++)
		argv[i++] = *args;
	argv[i] = NULL;
	snprintf(errpath, sizeof(errpath), "%s/err", dir);

	pid = fork();
	if (pid < 0)
		fuzz_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(fd, 1);
		fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		alarm(CHILD_SECONDS);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			fuzz_fail("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(st))
		fuzz_fail("'%s' ended by signal %d%s", argv[3], WTERMSIG(st),
			  WTERMSIG(st) == SIGALRM ? " (a hang)" : "");
	if (WEXITSTATUS(st) == 127)
		fuzz_fail("cannot run %s", bin);
	if (WEXITSTATUS(st) > 2)
		fuzz_fail("'%s' exited %d", argv[3], WEXITSTATUS(st));
	if (WEXITSTATUS(st) == 2) {
		if ((f = fopen(errpath, "r")) == NULL)
			fuzz_fail("no stderr file");
		while ((c = getc(f)) != EOF)
			lines += c == '\n';
		fclose(f);
		if (lines != 1)
			fuzz_fail("'%s' exited 2 with %d lines on stderr",
				  argv[3], lines);
	}
	return WEXITSTATUS(st);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const check[] = { "store", "check", NULL };
	static const char *const verify[] = { "history", "--verify", NULL };
	static const char *const versions[] = { "version", "list", NULL };
	static const char *const snapshots[] = { "snapshot", "list", NULL };
	static const char *const hist[] = { "history", NULL };
	char path[128];
	int fd, clean;

	scratch();
	snprintf(path, sizeof(path), "%s/lock.mdb", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd) != 0)
		fuzz_fail("cannot write %s: %s", path, strerror(errno));

	clean = run(check) == 0;
	int v = run(verify), l = run(versions), s = run(snapshots);
	(void)run(hist);
	if (clean && (v != 0 || l != 0 || s != 0))
		fuzz_fail("store check found the store clean, but history "
			  "--verify exited %d, version list %d, snapshot list %d",
			  v, l, s);
	return 0;
}
