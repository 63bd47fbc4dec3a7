/*
 * gitexport.h - one commit of a git repository written out exactly as
 * its objects say (rebuild-audit-pins(5), Sandbox; doc/design.md 7.10).
 *
 * Nothing of the repository decides what is written or runs, and no
 * git command runs with its configuration: the tool finds where the
 * repository keeps its objects as git does (a .git directory, a .git
 * file naming one, a bare repository, a commondir file), applying git's
 * rule of ownership ("dubious ownership" unless the system's or the
 * operator's safe.directory lists it); every object is then read through
 * an empty repository of the tool's own that borrows those objects
 * (GIT_ALTERNATE_OBJECT_DIRECTORIES) with no system, global or
 * repository configuration, no attributes, no refs and no replace
 * objects (GIT_NO_REPLACE_OBJECTS), by one `git cat-file --batch`.  The
 * tree is walked and each entry written by this module: a blob as its
 * bytes (mode 100644 as 0644, 100755 as 0755), a symbolic link as a
 * link, a tree as a directory 0755, a submodule as an empty directory;
 * every entry's time the committer's time (as git archive sets it).
 * No attribute applies (no export-subst, no export-ignore, no filter,
 * no end-of-line conversion).  A tree git itself would refuse to check
 * out (an entry ".", "..", ".git" in any case, with '/', twice, of an
 * unknown mode) is refused.  Every wait for git is bounded by the
 * request's deadline.
 */
#ifndef RBA_GITEXPORT_H
#define RBA_GITEXPORT_H

#include <stdint.h>

#include "common/rba.h"

#define GIT_EXPORT_MAX_ENTRIES 1000000		 /* files, links, directories */
#define GIT_EXPORT_MAX_BYTES (UINT64_C(1) << 34) /* blob bytes in all */
#define GIT_EXPORT_MAX_DEPTH 256		 /* directories deep */
#define GIT_EXPORT_MAX_OBJECT (UINT64_C(1) << 26) /* one commit or tree */

struct git_export_request {
	const char *repository; /* a directory of this machine */
	const char *commit;	/* 40 lowercase hex digits */
	const char *dst;	/* an empty directory to write the tree into */
	const char *scratch;	/* a private directory for the tool's own
				 * repository (made and removed there) */
	double deadline;	/* rba_time_mono() by which all is done */
};

struct git_export_result {
	char tree[41];	    /* the commit's tree id */
	int64_t time;	    /* the committer's time, seconds since 1970 */
	uint64_t entries, bytes;
};

/*
 * Writes rq->commit's tree into rq->dst.  0; RBA_E_UNSUPPORTED (git is
 * not installed), RBA_E_NOTFOUND (the repository is not one git reads:
 * git's own reason, "dubious ownership" among them; the commit is not
 * in it, or is not a commit), RBA_E_SCHEMA (a tree entry git would not
 * check out: the reason names it), RBA_E_LIMIT (the caps above, or the
 * deadline), RBA_E_IO (git failed part way), an errno of writing dst.
 * d's reason says which; on error dst holds part of the tree.
 */
int git_export(const struct git_export_request *rq,
	       struct git_export_result *out, struct rba_detail *d);

/*
 * Runs argv (argv[0] a program in /usr/bin or /bin) with the
 * environment env (NULL-terminated "NAME=VALUE"; NULL: this process's),
 * stdin /dev/null, stdout up to max bytes into out (NULL: discarded),
 * the first line of stderr into errline (errn bytes), killed at
 * deadline.  Its exit status; -1 when it could not run, -2 when killed
 * at the deadline.
 */
int git_tool_run(char *const *argv, char *const *env, char *out, size_t max,
		 char *errline, size_t errn, double deadline);

#endif
