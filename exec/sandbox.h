/*
 * sandbox.h - running a command the pins name, under bubblewrap
 * (bwrap(1), Debian package bubblewrap), and the private directory it
 * works in (rebuild-audit-pins(5), Sandbox; doc/design.md 7.10).
 *
 * The sandbox: the system read-only (/usr, the /lib*, /bin and /sbin
 * links of a merged /usr or read-only binds of them, and of /etc only
 * what the dynamic loader and Debian's alternatives need), every
 * namespace bwrap can unshare (network: only a loopback; user, PID,
 * IPC, UTS, mount, cgroup) with no user namespace inside it, all
 * capabilities dropped, a new session, the binds the caller gives (read
 * only: the code and the inputs), and nothing else writable but three
 * tmpfs of at most the output limit each: /tmp, /dev/shm and /out.  The
 * root and /dev are remounted read-only.
 *
 * bwrap starts with an empty environment and runs the sandbox's first
 * program (sandbox_init.c, carried by the tool as bytes), which starts
 * the command with the declared variables and LANG=C.UTF-8, TZ=UTC,
 * PYTHONHASHSEED=0, HOME=/tmp, PATH=/usr/bin:/bin only, under the
 * limits: the address space (RLIMIT_AS), the size of any file written
 * (RLIMIT_FSIZE), the number of processes and threads (RLIMIT_NPROC,
 * counted in the sandbox's own user namespace).  When the command ends
 * it kills whatever is left in the sandbox and only then reads the
 * files the caller asked for under /out, without following links or
 * blocking, and reports them on a pipe only it holds; the tool reads
 * that report, stdout and stderr with poll, bounded in bytes and by the
 * wall time.  At the time limit, or past the output limit, the whole
 * process group and with it the sandbox's PID namespace is killed with
 * SIGKILL.  bwrap gets PR_SET_PDEATHSIG SIGKILL and runs with
 * --die-with-parent, so a kill of this tool, even kill -9, kills the
 * sandbox and everything in it.
 *
 * Run as root, the tool starts bwrap as an unprivileged user
 * (REBUILD_AUDIT_SANDBOX_USER, default nobody; never uid 0): the code
 * runs as that user, not as root mapped into a namespace, and the
 * process limit holds (the kernel does not count root's processes).
 * That user reaches the binds through a mount namespace of the child's
 * own where each is also on a fresh tmpfs at /tmp/rba-bind-N, so no
 * directory above them ($TMPDIR may be 0700) needs a right for it; what
 * it reads must be readable by others (the tool writes it so).
 *
 * The work directory (sandbox_dir_make) is made with mkdtemp under
 * $TMPDIR (else /tmp) as rba-exec-XXXXXX, mode 0700, and a watcher
 * process (a /bin/sh that ignores SIGINT, SIGTERM and SIGHUP) holds the
 * read end of a pipe whose write end only this process holds: when this
 * process ends by any path (sandbox_dir_remove, exit, a signal, kill
 * -9) the watcher reads end of file and removes the directory, retrying
 * while a dying sandbox still holds it.
 */
#ifndef RBA_SANDBOX_H
#define RBA_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/digest.h"
#include "common/rba.h"

#define SANDBOX_TAIL 2048    /* bytes kept of the end of stdout, stderr */
#define SANDBOX_MAX_COLLECT 8 /* files of /out brought back by one run */

struct sandbox_bind {
	const char *src, *dst;
	int writable;
};

struct sandbox_spec {
	char *const *argv; /* argv[0]: an absolute path, a name found in
			    * /usr/bin or /bin, or a path under a bind */
	size_t argc;
	const struct sandbox_bind *binds;
	size_t nbinds;
	char *const *var_names, *const *var_values;
	size_t nvars;
	const char *cwd; /* inside the sandbox */
	uint64_t seconds, memory, output, processes;
	/* Names of files under /out to bring back (one path component
	 * each, at most SANDBOX_MAX_COLLECT). */
	const char *const *collect;
	size_t ncollect;
	/* Controlled changes, each off when zero (audit/vary.h): the host
	 * name (NULL: "sandbox"); the umask 0002 instead of 0022; address
	 * space randomization off; the environment in reverse order; the
	 * binds copied onto tmpfs with every directory's entries created in
	 * the reverse of their listed order; the output directory at
	 * another path (NULL: /out).  A variable of var_names with the name
	 * of one the sandbox sets (LANG, TZ, ...) replaces it. */
	const char *hostname;
	int umask_group_write, no_aslr, reverse_env, reorder_files;
	const char *out_dir;
};

/* What a name under /out was when the command had ended. */
enum sandbox_file_kind {
	SANDBOX_FILE_ABSENT,
	SANDBOX_FILE_REGULAR,
	SANDBOX_FILE_SYMLINK,
	SANDBOX_FILE_FIFO,
	SANDBOX_FILE_DIRECTORY,
	SANDBOX_FILE_DEVICE,
	SANDBOX_FILE_SOCKET,
	SANDBOX_FILE_UNREADABLE,
	SANDBOX_FILE_TOO_LARGE
};

struct sandbox_file {
	enum sandbox_file_kind kind;
	uint8_t *bytes; /* REGULAR: malloc'd (the caller may take it), else NULL */
	size_t len;
};

struct sandbox_result {
	int exited, status; /* exited normally with status */
	int signaled, sig;  /* killed by sig */
	int timed_out;	    /* killed at the time limit */
	int output_exceeded; /* killed at the output limit */
	int not_started;     /* the command could not be started: errno in status */
	int sandbox_failed;  /* bwrap or the sandbox's first program failed
			      * (status: bwrap's exit status) */
	double seconds;
	uint64_t out_bytes, err_bytes;
	struct rba_digest out_digest, err_digest;
	char out_tail[SANDBOX_TAIL + 1], err_tail[SANDBOX_TAIL + 1];
	struct sandbox_file files[SANDBOX_MAX_COLLECT]; /* spec->collect's */
};

/* Frees the files' bytes; r may be NULL. */
void sandbox_result_release(struct sandbox_result *r);

/* "a regular file", "a symbolic link", "a FIFO", ... (static). */
const char *sandbox_file_kind_name(enum sandbox_file_kind k);

/*
 * Whether bwrap runs here (one run of `bwrap --unshare-all ... true`,
 * remembered).  0; RBA_E_UNSUPPORTED with d saying why ("sandbox
 * unavailable: ...").
 */
int sandbox_available(struct rba_detail *d);
/* "bubblewrap X.Y.Z" (static; "bubblewrap" when unknown). */
const char *sandbox_name(void);
/* The text that says what the sandbox is, for evidence (static). */
const char *sandbox_description(void);

/*
 * Runs s; *r says how it went (released with sandbox_result_release
 * whatever is returned).  capture (NULL allowed) gets all of stdout, up
 * to s->output bytes.  0 when the command ran (whatever its status; r
 * says it, and r->files what each of s->collect was: only a regular
 * file has bytes); RBA_E_UNSUPPORTED (no sandbox), RBA_E_NOTFOUND
 * (argv[0] is not there: "command not found: X"), RBA_E_NOMEM, an errno.
 */
int sandbox_run(const struct sandbox_spec *s, struct sandbox_result *r,
		struct rba_buf *capture, struct rba_detail *d);

/*
 * One line saying why a run that did not exit 0 failed: "killed at the
 * time limit of N s", "exited with status N: <last stderr line>", ...
 * into buf (n bytes).
 */
void sandbox_failure(const struct sandbox_spec *s,
		     const struct sandbox_result *r, char *buf, size_t n);

/* A private work directory and its watcher (above). */
struct sandbox_dir {
	char path[4096];
	int fd;	    /* the pipe's write end, close-on-exec */
	pid_t pid;  /* the watcher */
};

/* 0 or an errno (d says what). */
int sandbox_dir_make(struct sandbox_dir *w, struct rba_detail *d);
/* Removes the directory (through the watcher) and waits for it. */
void sandbox_dir_remove(struct sandbox_dir *w);

#endif
