/*
 * evidence_export.c - the trusted comment, writing the evidence and its
 * signature into place, and export (render, check, sign, write).
 */
#include "evidence/evidence_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/dsse.h"
#include "common/seam.h"
#include "common/sign.h"
#include "common/fileio.h"

/* ---- the trusted comment ------------------------------------------------ */

int
evidence_trusted_comment(const struct evidence_summary *sum, const char *file,
			 char *out, size_t outlen)
{
	const char *base = strrchr(file, '/');
	char name[512];
	size_t i, k = 0;
	int n;

	base = base != NULL ? base + 1 : file;
	for (i = 0; base[i] && k + 1 < sizeof(name); i++) {
		unsigned char c = (unsigned char)base[i];
		name[k++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	name[k] = 0;
	if (base[i] != 0)
		return RBA_E_LIMIT;
	n = snprintf(out, outlen, "%sversion %s verdict %s audit %llu at %s file %s",
		     EVIDENCE_COMMENT_PREFIX, sum->version, sum->verdict,
		     (unsigned long long)sum->audit_id, sum->time_text, name);
	if (n < 0 || (size_t)n >= outlen || (size_t)n > SIGN_TRUSTED_COMMENT_MAX)
		return RBA_E_LIMIT;
	return 0;
}

/* ---- writing the pair ----------------------------------------------------- */

/* A temporary beside path, written and synced, not yet in place. */
static int
tmp_write(struct rba_atomic *a, const char *path, const void *p, size_t n,
	  struct rba_detail *d)
{
	int err = rba_atomic_open(a, path, 0644);

	if (err == 0)
		err = rba_atomic_write(a, p, n);
	if (err == 0 && fsync(a->fd) != 0)
		err = errno;
	if (err) {
		rba_atomic_abort(a);
		rba_fail(d, err, path, 0, 0, "%s", rba_strerror(err));
	}
	return err;
}

/*
 * Puts the synced temporary under its name: rename (force) or link,
 * which refuses an existing name.  A file system without hard links
 * gets a rename after a last look.  *named is set once the name is in
 * place, even when the sync of the directory after it fails, so that
 * the caller knows to take it away again.
 */
static int
tmp_place(struct rba_atomic *a, int force, int *named)
{
	int err = 0;

	if (force) {
		if (rename(a->tmp, a->path) != 0)
			err = errno;
		else
			a->tmp[0] = 0; /* the temporary's name is gone */
	} else if (link(a->tmp, a->path) != 0) {
		err = errno;
		if (err == EPERM || err == ENOTSUP || err == EOPNOTSUPP || err == ENOSYS ||
		    err == EXDEV) {
			struct stat st;
			if (lstat(a->path, &st) == 0)
				err = EEXIST;
			else if (rename(a->tmp, a->path) != 0)
				err = errno;
			else
				err = 0, a->tmp[0] = 0;
		}
	}
	if (err == 0) {
		*named = 1;
		err = rba_fsync_parent(a->path);
	}
	return err;
}

/*
 * rba_atomic_sweep looks in the directory part of the name; give it one
 * even for a bare file name.
 */
static void
sweep(const char *path)
{
	char p[EVIDENCE_PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s%s", strchr(path, '/') ? "" : "./", path);
	rba_atomic_sweep(p);
}

/* The test seam evidence_pause_ms (common/seam.h), in milliseconds. */
static long
pause_ms(void)
{
	long ms = rba_seams.evidence_pause_ms;

	return ms >= 1 && ms <= 1000 ? ms : 0;
}

static void
pause_step(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (ms > 0)
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
}

/*
 * Serializes exports into one directory: without it, two forced exports
 * to the same name could interleave their renames and leave one's
 * signature beside the other's evidence.  A file system without locks
 * goes unlocked.  Returns 0 with *fd the lock (or -1), or an errno.
 */
static int
dir_lock(const char *path, int *fd)
{
	char dir[EVIDENCE_PATH_MAX + 16];
	char *slash;

	*fd = -1;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = 0;
	else
		*slash = 0;
	*fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return errno;
	while (flock(*fd, LOCK_EX) != 0) {
		int e = errno;
		if (e == EINTR)
			continue;
		close(*fd);
		*fd = -1;
		if (e == ENOLCK || e == EOPNOTSUPP || e == EINVAL || e == ENOSYS)
			return 0;
		return e;
	}
	return 0;
}

static int
write_locked(const char *path, const char *sigpath, const void *doc,
	     size_t n, const void *sig, size_t siglen, int force,
	     struct rba_detail *d);

int
evidence_write(const char *path, const void *doc, size_t n, const void *sig,
	       size_t siglen, int force, struct rba_detail *d)
{
	char sigpath[EVIDENCE_PATH_MAX + sizeof(EVIDENCE_SIG_SUFFIX)];
	struct rba_detail local;
	int err, lock = -1;

	if (d == NULL)
		d = &local;
	if (strlen(path) > EVIDENCE_PATH_MAX || path[0] == '\0')
		return rba_fail(d, path[0] ? ENAMETOOLONG : ENOENT, path, 0, 0, "%s",
				path[0] ? "file name too long" : "empty file name");
	snprintf(sigpath, sizeof(sigpath), "%s%s", path, EVIDENCE_SIG_SUFFIX);
	if ((err = dir_lock(path, &lock)) != 0)
		return rba_fail(d, err, path, 0, 0, "%s", rba_strerror(err));
	err = write_locked(path, sigpath, doc, n, sig, siglen, force, d);
	if (lock >= 0)
		close(lock);
	return err;
}

static int
write_locked(const char *path, const char *sigpath, const void *doc,
	     size_t n, const void *sig, size_t siglen, int force,
	     struct rba_detail *d)
{
	struct rba_atomic ea = RBA_ATOMIC_INIT, sa = RBA_ATOMIC_INIT;
	struct stat st;
	long ms = pause_ms();
	int err, placed = 0, sig_placed = 0;

	sweep(path);
	sweep(sigpath);
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return rba_fail(d, EISDIR, path, 0, 0, "is a directory");
	if (!force) {
		const char *which = lstat(path, &st) == 0	 ? path
				    : lstat(sigpath, &st) == 0 ? sigpath
							       : NULL;
		if (which != NULL)
			return rba_fail(d, RBA_E_EXISTS, which, 0, 0,
					"already exists (--force replaces the "
					"evidence and its signature)");
	}
	pause_step(ms);
	if ((err = tmp_write(&ea, path, doc, n, d)) != 0)
		return err;
	pause_step(ms);
	if ((err = tmp_write(&sa, sigpath, sig, siglen, d)) != 0) {
		rba_atomic_abort(&ea);
		return err;
	}
	/*
	 * The old signature goes first, so that no moment shows it beside
	 * evidence it was not made for; the new signature comes last, so
	 * that whatever it sits beside is what it signs.
	 */
	pause_step(ms);
	if (force) {
		if (unlink(sigpath) != 0 && errno != ENOENT) {
			err = errno;
			rba_fail(d, err, sigpath, 0, 0, "%s", rba_strerror(err));
			goto fail;
		}
		if ((err = rba_fsync_parent(sigpath)) != 0) {
			rba_fail(d, err, sigpath, 0, 0, "%s", rba_strerror(err));
			goto fail;
		}
		pause_step(ms);
	}
	if ((err = tmp_place(&ea, force, &placed)) != 0) {
		rba_fail(d, err == EEXIST ? RBA_E_EXISTS : err, path, 0, 0, "%s",
			 err == EEXIST ? "already exists (--force replaces the "
					 "evidence and its signature)"
				       : rba_strerror(err));
		if (err == EEXIST)
			err = RBA_E_EXISTS;
		goto fail;
	}
	pause_step(ms);
	if ((err = tmp_place(&sa, force, &sig_placed)) != 0) {
		rba_fail(d, err == EEXIST ? RBA_E_EXISTS : err, sigpath, 0, 0, "%s",
			 err == EEXIST ? "already exists" : rba_strerror(err));
		if (err == EEXIST)
			err = RBA_E_EXISTS;
		goto fail;
	}
	/* After a link the temporaries are second names: drop them. */
	rba_atomic_abort(&ea);
	rba_atomic_abort(&sa);
	return 0;
fail:
	/* Neither unsigned evidence nor a signature without its evidence
	 * is left behind (the signature goes first, as it came last). */
	if (sig_placed)
		unlink(sigpath);
	if (placed)
		unlink(path);
	if (placed || sig_placed)
		rba_fsync_parent(path);
	rba_atomic_abort(&ea);
	rba_atomic_abort(&sa);
	return err;
}

/* ---- export ---------------------------------------------------------------- */

int
evidence_export(struct store *s, const struct evidence_request *rq,
		struct evidence_result *res, struct rba_detail *d)
{
	struct rba_buf doc, sig;
	struct evidence_log_request lr;
	struct evidence_summary chk;
	struct rba_detail local;
	int err;

	if (d == NULL)
		d = &local;
	memset(res, 0, sizeof(*res));
	if (s == NULL || rq == NULL || rq->version == NULL || rq->key == NULL ||
	    rq->path == NULL)
		return evidence_fail(d, RBA_E_USAGE, "an export needs a store, a version, a "
			   "key and a file name");
	if (strlen(rq->path) > EVIDENCE_PATH_MAX)
		return rba_fail(d, ENAMETOOLONG, rq->path, 0, 0, "file name too long");
	rba_buf_init(&doc);
	rba_buf_init(&sig);
	lr.key = rq->key;
	lr.origin = rq->origin;
	lr.checkpoint = rq->checkpoint;
	if ((err = evidence_render_log(s, rq->version, rq->audit_id,
				       (rq->include_inputs ? EVIDENCE_RENDER_INPUTS : 0) |
					       (rq->include_cases ? EVIDENCE_RENDER_CASES : 0),
				       &lr, &doc, &res->sum, d)) != 0)
		goto out;
	if (evidence_trusted_comment(&res->sum, rq->path, res->trusted_comment,
				     sizeof(res->trusted_comment)) != 0) {
		err = evidence_fail(d, RBA_E_LIMIT, "the trusted comment would be too long");
		goto out;
	}
	/* Nothing is signed that verify would refuse. */
	if ((err = evidence_check(doc.p, doc.len, res->trusted_comment, &chk, d)) !=
	    0) {
		char why[sizeof(d->reason)];
		if (err == RBA_E_NOMEM)
			goto out;
		snprintf(why, sizeof(why), "%s", d->reason);
		err = evidence_fail(d, RBA_E_SCHEMA, "audit record %llu does not give "
			  "consistent evidence: %s",
			  (unsigned long long)res->sum.audit_id, why);
		goto out;
	}
	if (rq->dsse) {
		/* the envelope alone: no trusted comment, no .minisig */
		if ((err = dsse_envelope_sign(rq->key, DSSE_TYPE_INTOTO, doc.p,
					      doc.len, &sig, d)) != 0 ||
		    (err = rba_file_write_output(rq->path, sig.p, sig.len, 0644,
						 rq->force ? RBA_OUTPUT_FORCE : 0,
						 NULL, d)) != 0)
			goto out;
		rba_digest_bytes(sig.p, sig.len, &res->file_digest);
		res->size = sig.len;
		goto out;
	}
	if ((err = sign_file_sign(rq->key, doc.p, doc.len, NULL,
				  res->trusted_comment, &sig, d)) != 0)
		goto out;
	if ((err = evidence_write(rq->path, doc.p, doc.len, sig.p, sig.len,
				  rq->force, d)) != 0)
		goto out;
	rba_digest_bytes(doc.p, doc.len, &res->file_digest);
	res->size = doc.len;
out:
	rba_buf_release(&doc);
	rba_buf_release(&sig);
	return err;
}
