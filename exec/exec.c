/* exec.c - the user's trainer and scorer at a pinned commit, sandboxed. */
#include "exec/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/json.h"
#include "common/rbatime.h"
#include "common/strv.h"
#include "model/artifact.h"
#include "data/csv.h"
#include "data/encode.h"
#include "train/envrec.h"
#include "exec/gitexport.h"
#include "model/xgboost.h"

/* Ends vector v of n strings with a NULL (not counted in n). */
static int
strv_end(char ***v, size_t n)
{
	char **nv = realloc(*v, (n + 1) * sizeof(char *));

	if (nv == NULL)
		return RBA_E_NOMEM;
	nv[n] = NULL;
	*v = nv;
	return 0;
}

void
exec_run_release(struct exec_run *r)
{
	if (r == NULL)
		return;
	free(r->artifact);
	free(r->argv_text);
	free(r->metrics);
	memset(r, 0, sizeof(*r));
}

/*
 * The pins' classes on an XGBoost model: its class k is the pins' k-th
 * label in bytewise order (encode.h), so the names the sample and the
 * policy use are the snapshot's.  A binary model gives the probability
 * of its class 1, which must then be the pins' positive class.
 */
static int
xgboost_relabel(struct artifact *x, struct encode_spec *pins_spec,
		const struct pins *p, struct rba_detail *d)
{
	struct encode_spec *s = &x->spec;
	char *label = pins_spec->label;

	if (s->nclasses != pins_spec->nclasses)
		return rba_detail_key(d, "trainer.format"),
		       rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"version '%s': the XGBoost model has %u classes, "
				"the snapshot's label '%s' has %u",
				p->version, s->nclasses, label, pins_spec->nclasses);
	if (s->positive != ENCODE_NO_POSITIVE &&
	    pins_spec->positive != s->positive)
		return rba_detail_key(d, "data.positive"),
		       rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"version '%s': a binary XGBoost model scores its "
				"class 1, which is the pins' second label in "
				"bytewise order ('%s'); data.positive names '%s'",
				p->version, pins_spec->classes[1],
				pins_spec->positive == ENCODE_NO_POSITIVE
					? "none"
					: pins_spec->classes[pins_spec->positive]);
	for (uint32_t k = 0; k < s->nclasses; k++)
		free(s->classes[k]);
	free(s->classes);
	free(s->label);
	s->classes = pins_spec->classes;
	s->label = pins_spec->label;
	s->positive = pins_spec->positive;
	pins_spec->classes = NULL;
	pins_spec->label = NULL;
	pins_spec->nclasses = 0;
	return 0;
}

int
exec_xgboost_load(const struct pins *p, const void *bytes, size_t n,
		  struct artifact *out, struct rba_detail *d)
{
	struct artifact x;
	int err;

	if ((err = xgboost_decode(bytes, n, p->trainer.artifact, &x, d)) != 0)
		return err;
	if ((err = xgboost_relabel(&x, &out->spec, p, d)) != 0) {
		artifact_release(&x);
		return err;
	}
	artifact_release(out);
	*out = x;
	return 0;
}

int
exec_artifact_open(const struct pins *p, const void *snap, size_t sn,
		   const uint8_t *bytes, size_t n, struct artifact *out,
		   struct rba_detail *d)
{
	struct csv_table *t = NULL;
	struct encode_data data;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&data, 0, sizeof(data));
	if (p->trainer.format != PINS_FORMAT_XGBOOST_JSON &&
	    p->trainer.score == NULL)
		return rba_detail_key(d, "trainer.score"),
		       rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"version '%s': this build cannot score format "
				"opaque itself and the pins give no trainer.score "
				"command",
				p->version);
	/* The snapshot as the trainer and the rebuild read it: with the
	 * pins' missing-value tokens (data.missing; the empty field by
	 * default), named by its digest as the rebuild names it. */
	{
		struct csv_missing m;
		char name[RBA_DIGEST_TEXT_LEN + 1];
		rba_digest_format(&p->snapshot, name);
		m.tok = pins_missing_tokens(p, &m.n);
		if ((err = csv_table_load_mem_missing(snap, sn, name, &m, &t,
						      d)) != 0)
			return err;
	}
	err = encode_fit(p, t, &out->spec, &data, d);
	csv_table_free(t);
	encode_data_release(&data);
	if (err) {
		artifact_release(out);
		return err;
	}
	/* Native scoring of XGBoost JSON (model/xgboost.h): the model's own
	 * inputs by name, the pins' classes; trainer.score is then unused. */
	if (p->trainer.format == PINS_FORMAT_XGBOOST_JSON) {
		if ((err = exec_xgboost_load(p, bytes, n, out, d)) != 0)
			artifact_release(out);
		return err;
	}
	out->exec_pins = p;
	out->exec_bytes = bytes;
	out->exec_len = n;
	return 0;
}

/*
 * Runs argv outside the sandbox (git, tar, dpkg-query) with stdout into
 * out (up to max bytes; NULL: discarded) and stderr's first line into
 * errline.  The exit status, or -1 when it could not run.
 */
static int
run_tool(char *const *argv, struct rba_buf *out, size_t max, char *errline,
	 size_t errn)
{
	int po[2], pe[2], st = 0;
	char buf[8192];
	size_t got = 0, eg = 0;
	pid_t pid;
	ssize_t k;

	if (errline != NULL && errn > 0)
		errline[0] = 0;
	if (pipe(po) != 0)
		return -1;
	if (pipe(pe) != 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(po[0]);
		close(po[1]);
		close(pe[0]);
		close(pe[1]);
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	while ((k = read(po[0], buf, sizeof(buf))) > 0) {
		if (out != NULL && got < max)
			rba_buf_put(out, buf, (size_t)k > max - got ? max - got : (size_t)k);
		got += (size_t)k;
	}
	while ((k = read(pe[0], buf, sizeof(buf))) > 0) {
		if (errline != NULL && eg + 1 < errn) {
			size_t take = (size_t)k < errn - 1 - eg ? (size_t)k : errn - 1 - eg;
			memcpy(errline + eg, buf, take);
			eg += take;
			errline[eg] = 0;
		}
	}
	if (errline != NULL && errn > 0)
		errline[strcspn(errline, "\n")] = 0;
	close(po[0]);
	close(pe[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int
is_url(const char *r)
{
	const char *at = strchr(r, '@'), *colon = strchr(r, ':');

	return strstr(r, "://") != NULL ||
	       (at != NULL && colon != NULL && at < colon && strchr(r, '/') > colon);
}

/* Trims a final newline of b's text; its C string. */
static const char *
trimmed(struct rba_buf *b)
{
	const char *s = rba_buf_cstr(b);
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		((char *)s)[--n] = 0;
	return s;
}

/*
 * A URL cloned (bare) into dir/repo.git, path into repo: git with the
 * operator's environment (credentials, ssh agent) but no replace
 * objects, no prompt, no protocol only a user may ask for, no template
 * (so no hook), bounded by the deadline.
 */
static int
clone_url(const struct pins *p, const char *dir, char *repo, size_t n,
	  double deadline, struct rba_detail *d)
{
	extern char **environ;
	const struct pins_trainer *t = &p->trainer;
	char *clone[] = {"/usr/bin/git", "clone", "--bare", "--quiet", "--template=",
			 "--no-local", "--", (char *)t->repository, repo, NULL};
	/* no ext:: or fd:: transport: only those that fetch */
	static const char *const add[] = {"GIT_NO_REPLACE_OBJECTS=1",
					  "GIT_TERMINAL_PROMPT=0",
					  "GIT_ALLOW_PROTOCOL=file:git:http:https:ssh"};
	char **env, err[300];
	size_t ne = 0, k = 0;
	int st;

	snprintf(repo, n, "%s/repo.git", dir);
	while (environ[ne] != NULL)
		ne++;
	if ((env = calloc(ne + 4, sizeof(char *))) == NULL)
		return RBA_E_NOMEM;
	for (size_t i = 0; i < ne; i++)
		if (strncmp(environ[i], "GIT_", 4) != 0)
			env[k++] = environ[i];
	for (size_t i = 0; i < 3; i++)
		env[k++] = (char *)add[i];
	env[k] = NULL;
	st = git_tool_run(clone, env, NULL, 0, err, sizeof(err), deadline);
	free(env);
	if (st == 0)
		return 0;
	rba_detail_key(d, "trainer.repository");
	if (st == -2)
		return rba_fail(d, RBA_E_LIMIT, p->src.file, p->src.repository.line,
				p->src.repository.col,
				"cannot clone repository %s within the time limit "
				"(limits.seconds)", t->repository);
	return rba_fail(d, RBA_E_NOTFOUND, p->src.file, p->src.repository.line,
			p->src.repository.col, "cannot clone repository %s: %s",
			t->repository, err[0] ? err : "git failed");
}

/*
 * The pinned commit into dir/code (exec/gitexport.h: its objects
 * only), its tree id into tree.  A URL is cloned (bare) into
 * dir/repo.git first.  Bounded by the pins' time limit.
 */
static int
checkout(const struct pins *p, const char *dir, char tree[41],
	 struct rba_detail *d)
{
	const struct pins_trainer *t = &p->trainer;
	struct git_export_request rq;
	struct git_export_result res;
	char repo[4200], code[4200], scratch[4200];
	double deadline = rba_time_mono() + (double)t->seconds;
	int err;

	if (is_url(t->repository)) {
		if ((err = clone_url(p, dir, repo, sizeof(repo), deadline, d)) != 0)
			return err;
	} else {
		snprintf(repo, sizeof(repo), "%s", t->repository);
	}
	snprintf(code, sizeof(code), "%s/code", dir);
	snprintf(scratch, sizeof(scratch), "%s/git", dir);
	if (mkdir(code, 0700) != 0 || chmod(code, 0755) != 0 || mkdir(scratch, 0700) != 0)
		return rba_fail(d, errno, NULL, 0, 0, "mkdir under %s: %s", dir,
				strerror(errno));
	memset(&rq, 0, sizeof(rq));
	rq.repository = repo;
	rq.commit = t->revision;
	rq.dst = code;
	rq.scratch = scratch;
	rq.deadline = deadline;
	err = git_export(&rq, &res, d);
	if (err == RBA_E_NOTFOUND && d != NULL) {
		/* at the key that names what is missing */
		char was[sizeof(d->reason)];
		int rev = strstr(d->reason, "is not in repository") != NULL ||
			  strstr(d->reason, ", not a commit") != NULL;
		snprintf(was, sizeof(was), "%s", d->reason);
		rba_detail_key(d, rev ? "trainer.revision" : "trainer.repository");
		rba_fail(d, err, p->src.file,
			 rev ? p->src.revision.line : p->src.repository.line,
			 rev ? p->src.revision.col : p->src.repository.col, "%s", was);
	}
	if (err)
		return err;
	memcpy(tree, res.tree, 41);
	return 0;
}

static int
write_input(const char *dir, const char *name, const void *p, size_t n,
	    struct rba_detail *d)
{
	char path[4300];
	int fd;
	size_t done = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
	/* readable by the sandbox's user whatever the umask */
	if (fd < 0 || fchmod(fd, 0444) != 0)
		return rba_fail(d, errno, NULL, 0, 0, "%s: %s", path, strerror(errno));
	while (done < n) {
		ssize_t k = write(fd, (const char *)p + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int e = errno;
			close(fd);
			return rba_fail(d, e, NULL, 0, 0, "%s: %s", path, strerror(e));
		}
		done += (size_t)k;
	}
	close(fd);
	return 0;
}

struct subst {
	const char *name, *value;
};

/* argv with every {name} replaced; unknown braces stay as written. */
static int
fill_argv(char *const *in, size_t n, const struct subst *s, size_t ns,
	  char ***out)
{
	size_t i, cnt = 0;
	int err = 0;

	*out = NULL;
	for (i = 0; i < n && err == 0; i++) {
		struct rba_buf b;
		const char *a = in[i];
		char *c;
		rba_buf_init(&b);
		while (*a) {
			size_t j, hit = ns;
			for (j = 0; j < ns && *a == '{'; j++) {
				size_t l = strlen(s[j].name);
				if (strncmp(a + 1, s[j].name, l) == 0 && a[1 + l] == '}') {
					hit = j;
					break;
				}
			}
			if (hit < ns) {
				rba_buf_put(&b, s[hit].value, strlen(s[hit].value));
				a += strlen(s[hit].name) + 2;
			} else {
				rba_buf_put_u8(&b, (uint8_t)*a++);
			}
		}
		err = rba_buf_status(&b);
		c = err == 0 ? strdup(rba_buf_cstr(&b)) : NULL;
		rba_buf_release(&b);
		if (c == NULL || rba_strv_add(out, &cnt, c) != 0) {
			free(c);
			err = RBA_E_NOMEM;
		}
	}
	if (err == 0 && strv_end(out, cnt) != 0)
		err = RBA_E_NOMEM;
	if (err) {
		rba_strv_free(*out, cnt);
		*out = NULL;
	}
	return err;
}

static char *
argv_json(char *const *argv)
{
	struct rba_buf b;
	char *s;

	rba_buf_init(&b);
	rba_buf_put_u8(&b, '[');
	for (size_t i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			rba_buf_put_u8(&b, ',');
		rba_json_put_str(&b, argv[i]);
	}
	rba_buf_put_u8(&b, ']');
	s = rba_buf_status(&b) == 0 ? strdup(rba_buf_cstr(&b)) : NULL;
	rba_buf_release(&b);
	return s;
}

/* Variables that set a thread count (the threads factor sets them). */
static int
is_thread_var(const char *name)
{
	static const char *const names[] = {
		"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
		"NUMEXPR_NUM_THREADS", "NUMEXPR_MAX_THREADS", "VECLIB_MAXIMUM_THREADS",
		"BLIS_NUM_THREADS", "NUMBA_NUM_THREADS", "RAYON_NUM_THREADS",
		"TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "GOTO_NUM_THREADS"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return 0;
}

/* Adds name=value to the pair of vectors. */
static int
var_add(char ***vn, char ***vv, size_t *a, size_t *b, const char *name,
	const char *value)
{
	char *x = strdup(name), *y = strdup(value);

	if (x == NULL || y == NULL || rba_strv_add(vn, a, x) != 0) {
		free(x);
		free(y);
		return RBA_E_NOMEM;
	}
	if (rba_strv_add(vv, b, y) != 0) {
		free(y);
		return RBA_E_NOMEM;
	}
	return 0;
}

/*
 * The declared and passed variables, for the sandbox (vn/vv owned), as
 * the variation v (NULL: none) changes them: the thread variables, one
 * passed variable, and the sandbox's own TZ, LANG, LC_ALL and the
 * clock's LD_PRELOAD and FAKETIME.
 */
static int
vars_of(const struct pins *p, const struct exec_vary *v, char ***vn,
	char ***vv, size_t *n)
{
	const struct pins_trainer *t = &p->trainer;
	size_t i, a = 0, b = 0;
	int err = 0;

	*vn = *vv = NULL;
	*n = 0;
	for (i = 0; i < t->nvars && err == 0; i++) {
		const char *val = t->var_values[i];
		char thr[16];
		if (v != NULL && v->threads != 0 && is_thread_var(t->var_names[i])) {
			snprintf(thr, sizeof(thr), "%u", v->threads);
			val = thr;
		}
		err = var_add(vn, vv, &a, &b, t->var_names[i], val);
	}
	for (i = 0; i < t->npass && err == 0; i++) {
		const char *val = getenv(t->pass[i]);
		if (v != NULL && v->var_name != NULL && strcmp(v->var_name, t->pass[i]) == 0)
			val = v->var_value;
		if (val == NULL)
			continue;
		err = var_add(vn, vv, &a, &b, t->pass[i], val);
	}
	if (v != NULL && err == 0 && v->tz != NULL)
		err = var_add(vn, vv, &a, &b, "TZ", v->tz);
	if (v != NULL && err == 0 && v->lang != NULL) {
		err = var_add(vn, vv, &a, &b, "LANG", v->lang);
		if (err == 0)
			err = var_add(vn, vv, &a, &b, "LC_ALL", v->lang);
	}
	if (v != NULL && err == 0 && v->faketime != NULL) {
		err = var_add(vn, vv, &a, &b, "LD_PRELOAD", v->faketime);
		if (err == 0)
			err = var_add(vn, vv, &a, &b, "FAKETIME", v->faketime_offset);
		if (err == 0)
			err = var_add(vn, vv, &a, &b, "FAKETIME_DONT_RESET", "1");
	}
	*n = a < b ? a : b;
	if (err) {
		rba_strv_free(*vn, a);
		rba_strv_free(*vv, b);
		*vn = *vv = NULL;
		*n = 0;
	}
	return err;
}

/*
 * Runs argv in the sandbox with dir's code (with_code) and inputs bound
 * read-only, bringing back the files collect names from /out; r filled
 * (the caller releases it).
 */
static int
run_in(const struct pins *p, const char *dir, char **argv, int with_code,
       const char *const *collect, size_t ncollect, const struct exec_vary *v,
       struct sandbox_result *r, struct rba_buf *capture, const char *what,
       struct rba_detail *d)
{
	const struct pins_trainer *t = &p->trainer;
	char code[4200], in[4200], why[400], codedst[300], indst[300], outdst[300];
	struct sandbox_bind binds[2];
	struct sandbox_spec s;
	char **vn = NULL, **vv = NULL;
	size_t nv = 0, nb = 0, argc = 0;
	int err;

	memset(r, 0, sizeof(*r));
	snprintf(code, sizeof(code), "%s/code", dir);
	snprintf(in, sizeof(in), "%s/in", dir);
	exec_vary_paths(v, codedst, indst, outdst, sizeof(codedst));
	if (with_code) {
		binds[nb].src = code;
		binds[nb].dst = codedst;
		binds[nb++].writable = 0;
	}
	binds[nb].src = in;
	binds[nb].dst = indst;
	binds[nb++].writable = 0;
	if ((err = vars_of(p, v, &vn, &vv, &nv)) != 0)
		return err;
	while (argv[argc] != NULL)
		argc++;
	memset(&s, 0, sizeof(s));
	s.argv = argv;
	s.argc = argc;
	s.binds = binds;
	s.nbinds = nb;
	s.var_names = vn;
	s.var_values = vv;
	s.nvars = nv;
	s.cwd = with_code ? codedst : "/tmp";
	if (v != NULL) {
		s.hostname = v->hostname;
		s.umask_group_write = v->umask_group_write;
		s.no_aslr = v->no_aslr;
		s.reverse_env = v->reverse_env;
		s.reorder_files = v->reorder_files;
		s.out_dir = v->root != NULL ? outdst : NULL;
	}
	s.seconds = t->seconds;
	s.memory = t->memory;
	s.output = t->output;
	s.processes = t->processes;
	s.collect = collect;
	s.ncollect = ncollect;
	err = sandbox_run(&s, r, capture, d);
	if (err == 0 && !(r->exited && r->status == 0)) {
		sandbox_failure(&s, r, why, sizeof(why));
		err = rba_fail(d, r->timed_out || r->output_exceeded ||
					  (r->signaled && r->sig == SIGXFSZ)
				  ? RBA_E_LIMIT
				  : RBA_E_IO,
			       NULL, 0, 0, "%s of version '%s' at commit %.12s %s",
			       what, p->version, t->revision, why);
	} else if (err == RBA_E_NOTFOUND) {
		char was[sizeof(d->reason)];
		snprintf(was, sizeof(was), "%s", d->reason);
		rba_detail_key(d, "trainer.command");
		rba_fail(d, err, p->src.file, p->src.command.line,
			 p->src.command.col, "%s of version '%s': %s", what,
			 p->version, was);
	}
	rba_strv_free(vn, nv);
	rba_strv_free(vv, nv);
	return err;
}

/*
 * File i of a run's collected files, taken (its bytes moved to *out):
 * 0; RBA_E_NOTFOUND when absent and optional (*out NULL); otherwise
 * RBA_E_IO naming the file and what it was (absent, a link, a FIFO,
 * ...), RBA_E_LIMIT when over max bytes.
 */
static int
take_output(const struct pins *p, struct sandbox_result *r, size_t i,
	    const char *path, size_t max, const char *limit, int optional,
	    const char *what, uint8_t **out, size_t *len, struct rba_detail *d)
{
	struct sandbox_file *f = &r->files[i];

	*out = NULL;
	*len = 0;
	if (f->kind == SANDBOX_FILE_ABSENT && optional)
		return RBA_E_NOTFOUND;
	if (f->kind == SANDBOX_FILE_ABSENT)
		return rba_fail(d, RBA_E_IO, NULL, 0, 0,
				"%s of version '%s' at commit %.12s exited 0 but "
				"wrote no %s%s",
				what, p->version, p->trainer.revision,
				i == 0 && strcmp(what, "the trainer") == 0 ? "artifact " : "",
				path);
	if (f->kind != SANDBOX_FILE_REGULAR)
		return rba_fail(d, f->kind == SANDBOX_FILE_TOO_LARGE ? RBA_E_LIMIT
								      : RBA_E_IO,
				NULL, 0, 0,
				"%s of version '%s' at commit %.12s left %s as %s, "
				"not a regular file: nothing read",
				what, p->version, p->trainer.revision, path,
				sandbox_file_kind_name(f->kind));
	if (f->len > max)
		return rba_fail(d, RBA_E_LIMIT, NULL, 0, 0,
				"%s of version '%s' at commit %.12s wrote %s of %zu "
				"bytes, over the limit of %zu bytes (%zu MiB) for %s",
				what, p->version, p->trainer.revision, path, f->len,
				max, max >> 20, limit);
	*out = f->bytes;
	*len = f->len;
	f->bytes = NULL;
	f->len = 0;
	return 0;
}

static int
mkdirs(const char *dir, struct rba_detail *d)
{
	char a[4200];

	snprintf(a, sizeof(a), "%s/in", dir);
	/* readable by the sandbox's user whatever the umask */
	if (mkdir(a, 0700) != 0 || chmod(a, 0755) != 0)
		return rba_fail(d, errno, NULL, 0, 0, "mkdir under %s: %s", dir,
				strerror(errno));
	return 0;
}

int
exec_train(const struct pins *p, const void *snap, size_t sn, uint64_t seed,
	   uint32_t threads, struct exec_run *out, struct rba_detail *d)
{
	return exec_train_varied(p, snap, sn, seed, threads, NULL, out, d);
}

void
exec_vary_paths(const struct exec_vary *v, char *code, char *in, char *out,
		size_t n)
{
	const char *root = v != NULL && v->root != NULL ? v->root : "";

	snprintf(code, n, "%s/code", root);
	snprintf(in, n, "%s/in", root);
	snprintf(out, n, "%s/out", root);
}

int
exec_train_varied(const struct pins *p, const void *snap, size_t sn,
		  uint64_t seed, uint32_t threads, const struct exec_vary *v,
		  struct exec_run *out, struct rba_detail *d)
{
	const struct pins_trainer *t = &p->trainer;
	struct sandbox_dir w;
	struct rba_buf params;
	char seedtext[32], thr[16], art[600], in[4200], mp[600], insnap[600];
	char inparams[600], codedst[300], indst[300], outdst[300];
	char **argv = NULL;
	double t0 = rba_time_mono();
	int err;

	memset(out, 0, sizeof(*out));
	/* Callers reach this through the exec entry (kind.c); the check
	 * stays so that pins of another kind never run anything. */
	if (!policy_pins_is_exec(p))
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0, "not an exec trainer");
	if ((err = sandbox_available(d)) != 0)
		return err;
	if ((err = sandbox_dir_make(&w, d)) != 0)
		return err;
	rba_buf_init(&params);
	if ((err = checkout(p, w.path, out->tree, d)) != 0)
		goto done;
	memcpy(out->commit, t->revision, 41);
	if ((err = mkdirs(w.path, d)) != 0)
		goto done;
	snprintf(in, sizeof(in), "%s/in", w.path);
	policy_pins_params_json(p, &params);
	if ((err = rba_buf_status(&params)) != 0 ||
	    (err = write_input(in, "snapshot.csv", snap, sn, d)) != 0 ||
	    (err = write_input(in, "params.json", params.p, params.len, d)) != 0)
		goto done;
	snprintf(seedtext, sizeof(seedtext), "%llu", (unsigned long long)seed);
	snprintf(thr, sizeof(thr), "%u", v != NULL && v->threads ? v->threads : threads);
	exec_vary_paths(v, codedst, indst, outdst, sizeof(codedst));
	snprintf(art, sizeof(art), "%s/%s", outdst, t->artifact);
	snprintf(mp, sizeof(mp), "%s/metrics.json", outdst);
	snprintf(insnap, sizeof(insnap), "%s/snapshot.csv", indst);
	snprintf(inparams, sizeof(inparams), "%s/params.json", indst);
	{
		const struct subst s[] = {
			{"snapshot", insnap}, {"params", inparams},
			{"artifact", art}, {"seed", seedtext}, {"threads", thr},
			{"metrics", mp}};
		if ((err = fill_argv(t->command, t->ncommand, s, 6, &argv)) != 0)
			goto done;
	}
	if ((out->argv_text = argv_json(argv)) == NULL) {
		err = RBA_E_NOMEM;
		goto done;
	}
	{
		const char *collect[] = {t->artifact, "metrics.json"};
		uint8_t *m = NULL;
		size_t mn = 0;
		err = run_in(p, w.path, argv, 1, collect, 2, v, &out->sb, NULL,
			     "the trainer", d);
		if (err == 0)
			err = take_output(p, &out->sb, 0, art, ARTIFACT_MAX_BYTES,
					  "an artifact", 0, "the trainer",
					  &out->artifact, &out->artifact_len, d);
		if (err == 0) {
			err = take_output(p, &out->sb, 1, mp, EXEC_MAX_METRICS,
					  "a metrics file", 1, "the trainer",
					  &m, &mn, d);
			if (err == RBA_E_NOTFOUND)
				err = 0;
			out->metrics = (char *)m;
			out->metrics_len = mn;
		}
		sandbox_result_release(&out->sb);
		if (err)
			goto done;
	}
	rba_digest_bytes(out->artifact, out->artifact_len, &out->digest);
	rba_detail_clear(d);
done:
	out->wall_seconds = rba_time_mono() - t0;
	rba_strv_free(argv, t->ncommand + 1);
	rba_buf_release(&params);
	sandbox_dir_remove(&w);
	if (err) {
		char keep[41], tree[41];
		memcpy(keep, out->commit, 41);
		memcpy(tree, out->tree, 41);
		exec_run_release(out);
		memcpy(out->commit, keep, 41);
		memcpy(out->tree, tree, 41);
	}
	return err;
}

/* One probability text: a JSON number in [0, 1]. */
static int
prob_parse(const char *s, size_t n, float *out)
{
	struct rba_json_value v;
	double x;

	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (n == 0 || rba_json_parse(s, n, &v, NULL) != 0)
		return -1;
	if (v.type != RBA_JSON_NUMBER) {
		rba_json_release(&v);
		return -1;
	}
	x = v.num;
	rba_json_release(&v);
	if (!(x >= 0 && x <= 1))
		return -1;
	*out = (float)x;
	return 0;
}

/*
 * The scorer's scores.txt (len bytes of text): one line per case of
 * ncases, the positive class's probability (two classes with a positive
 * one) or nclasses comma-separated ones, into probs (ncases x
 * nclasses).  0 or RBA_E_SCHEMA, said in d.
 */
static int
scores_parse(const struct pins *p, const uint8_t *text, size_t len,
	     size_t ncases, uint32_t nclasses, uint32_t positive, float *probs,
	     struct rba_detail *d)
{
	const char *s = (const char *)text, *end = s + len;
	size_t line = 0, i;
	int binary = nclasses == 2 && positive < nclasses;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl != NULL ? nl : end;
		float *row;
		if (line >= ncases) {
			line++;
			break;
		}
		row = probs + line * nclasses;
		if (binary) {
			float x;
			if (prob_parse(s, (size_t)(e - s), &x) != 0)
				return rba_fail(d, RBA_E_SCHEMA, "scores.txt",
						line + 1, 1,
						"the scorer's line %zu is not a "
						"probability in [0, 1]",
						line + 1);
			row[positive] = x;
			row[1 - positive] = 1.0f - x;
		} else {
			const char *q = s;
			for (i = 0; i < nclasses; i++) {
				const char *c = memchr(q, ',', (size_t)(e - q));
				const char *ce = (c != NULL && i + 1 < nclasses) ? c : e;
				if (prob_parse(q, (size_t)(ce - q), &row[i]) != 0 ||
				    (i + 1 < nclasses && c == NULL))
					return rba_fail(d, RBA_E_SCHEMA,
							"scores.txt", line + 1, 1,
							"the scorer's line %zu is "
							"not %u comma-separated "
							"probabilities",
							line + 1, nclasses);
				q = ce + 1;
			}
		}
		line++;
		s = nl != NULL ? nl + 1 : end;
	}
	if (line != ncases)
		return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
				"the scorer of version '%s' wrote %s%zu scores for "
				"%zu cases",
				p->version, line > ncases ? "more than " : "",
				line > ncases ? ncases : line, ncases);
	return 0;
}

int
exec_score(const struct pins *p, const void *artifact, size_t an,
	   const void *csv, size_t n, size_t ncases, uint32_t nclasses,
	   uint32_t positive, float *probs, struct rba_detail *d)
{
	const struct pins_trainer *t = &p->trainer;
	struct sandbox_dir w;
	struct sandbox_result r;
	char thr[16], art[300], in[4200], tree[41];
	char **argv = NULL;
	uint8_t *text = NULL;
	size_t len = 0;
	int err;

	if (t->score == NULL)
		return rba_detail_key(d, "trainer.score"),
		       rba_fail(d, RBA_E_SCHEMA, p->src.file, 0, 0,
				"version '%s' has an artifact of format %s and its "
				"pins give no trainer.score command to score it",
				p->version,
				t->format == PINS_FORMAT_XGBOOST_JSON ? "xgboost-json"
								      : "opaque");
	if ((err = sandbox_dir_make(&w, d)) != 0)
		return err;
	if ((err = checkout(p, w.path, tree, d)) != 0 || (err = mkdirs(w.path, d)) != 0)
		goto done;
	snprintf(in, sizeof(in), "%s/in", w.path);
	if ((err = write_input(in, t->artifact, artifact, an, d)) != 0 ||
	    (err = write_input(in, "cases.csv", csv, n, d)) != 0)
		goto done;
	snprintf(thr, sizeof(thr), "%u", p->determinism.threads);
	snprintf(art, sizeof(art), "/in/%s", t->artifact);
	{
		const struct subst s[] = {{"artifact", art},
					  {"cases", "/in/cases.csv"},
					  {"scores", "/out/scores.txt"},
					  {"threads", thr}};
		if ((err = fill_argv(t->score, t->nscore, s, 4, &argv)) != 0)
			goto done;
	}
	{
		const char *collect[] = {"scores.txt"};
		err = run_in(p, w.path, argv, 1, collect, 1, NULL, &r, NULL,
			     "the scorer", d);
		if (err == 0)
			err = take_output(p, &r, 0, "/out/scores.txt", (size_t)t->output,
					  "the scores (limits.output)", 0, "the scorer", &text,
					  &len, d);
		sandbox_result_release(&r);
		if (err)
			goto done;
	}
	err = scores_parse(p, text, len, ncases, nclasses, positive, probs, d);
done:
	free(text);
	rba_strv_free(argv, t->nscore + 1);
	sandbox_dir_remove(&w);
	return err;
}

/* envrec text rules: printable, no newline, no trailing spaces. */
static void
put_field(struct rba_buf *b, const char *key, const char *val)
{
	size_t i, n = strlen(val);

	while (n > 0 && val[n - 1] == ' ')
		n--;
	if (n > ENVREC_MAX_VALUE)
		n = ENVREC_MAX_VALUE;
	rba_buf_printf(b, "%s=", key);
	if (n == 0)
		rba_buf_put(b, "unknown", 7);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)val[i];
		rba_buf_put_u8(b, c >= 0x20 && c < 0x7f ? c : '?');
	}
	rba_buf_put_u8(b, '\n');
}

struct field {
	char key[80];
	char *val;
};

static int
cmp_field(const void *a, const void *b)
{
	return strcmp(((const struct field *)a)->key, ((const struct field *)b)->key);
}

static void
key_of(char *out, size_t n, const char *prefix, const char *name)
{
	size_t i, j = (size_t)snprintf(out, n, "%s", prefix);

	for (i = 0; name[i] && j + 1 < n && j < 64; i++) {
		char c = name[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.'))
			c = '_';
		out[j++] = c;
	}
	out[j] = 0;
}

/* The program argv0 runs as, on the host: absolute path or NULL. */
static void
program_path(const char *a, char *out, size_t n)
{
	char tmp[4200];

	out[0] = 0;
	if (strchr(a, '/') == NULL)
		snprintf(tmp, sizeof(tmp), "/usr/bin/%s", a);
	else if (a[0] == '/')
		snprintf(tmp, sizeof(tmp), "%s", a);
	else
		return;
	if (realpath(tmp, out) == NULL)
		out[0] = 0;
	(void)n;
}

/* The fields of an exec trainer's environment record, as gathered. */
struct fields {
	struct field f[ENVREC_MAX_FIELDS];
	size_t n;
};

/* Adds key=val (NULL: "unknown") while there is room; a copy that fails
 * leaves a NULL val, found before the record is written. */
static void
field_add(struct fields *fs, const char *k, const char *v)
{
	if (fs->n < ENVREC_MAX_FIELDS) {
		snprintf(fs->f[fs->n].key, sizeof(fs->f[fs->n].key), "%s", k);
		fs->f[fs->n++].val = strdup(v != NULL ? v : "unknown");
	}
}

/* The interpreter command[0] runs: its path on the host and, when it
 * can be read, its digest. */
static void
fields_interpreter(struct fields *fs, const struct pins_trainer *t)
{
	char prog[4200];

	program_path(t->command[0], prog, sizeof(prog));
	if (prog[0]) {
		uint8_t *bytes = NULL;
		size_t bn = 0;
		char hex[RBA_DIGEST_TEXT_LEN + 1];
		field_add(fs, "interpreter.path", prog);
		if (rba_file_read(prog, 1u << 30, &bytes, &bn, NULL) == 0) {
			struct rba_digest dg;
			rba_digest_bytes(bytes, bn, &dg);
			rba_digest_format(&dg, hex);
			field_add(fs, "interpreter.sha256", hex);
		}
		free(bytes);
	} else {
		field_add(fs, "interpreter.path", t->command[0]);
	}
}

/* The pinned packages' installed versions, the pinned variables and the
 * passed ones as this process has them. */
static void
fields_packages_vars(struct fields *fs, const struct pins_trainer *t)
{
	size_t i;

	for (i = 0; i < t->npackages; i++) {
		char key[80], fmt[] = "${Version}";
		char *q[] = {"dpkg-query", "-W", "-f", fmt, t->packages[i], NULL};
		struct rba_buf v;
		rba_buf_init(&v);
		key_of(key, sizeof(key), "pkg.", t->packages[i]);
		if (run_tool(q, &v, 512, NULL, 0) == 0 && v.len > 0)
			field_add(fs, key, trimmed(&v));
		else
			field_add(fs, key, "not installed");
		rba_buf_release(&v);
	}
	for (i = 0; i < t->nvars; i++) {
		char key[80];
		key_of(key, sizeof(key), "var.", t->var_names[i]);
		field_add(fs, key, t->var_values[i][0] ? t->var_values[i] : "(empty)");
	}
	for (i = 0; i < t->npass; i++) {
		char key[80];
		const char *v = getenv(t->pass[i]);
		key_of(key, sizeof(key), "var.", t->pass[i]);
		field_add(fs, key, v == NULL ? "unset" : v[0] ? v : "(empty)");
	}
}

/* The pins' probe run in the sandbox, each line of its stdout (probe,
 * which it fills) a field probe.NNN, at most 100. */
static int
fields_probe(struct fields *fs, const struct pins *p, struct rba_buf *probe,
	     struct rba_detail *d)
{
	const struct pins_trainer *t = &p->trainer;
	struct sandbox_dir w;
	struct sandbox_result r;
	char **argv = NULL;
	int err;

	if ((err = sandbox_dir_make(&w, d)) != 0)
		return err;
	err = mkdirs(w.path, d);
	if (err == 0)
		err = fill_argv(t->probe, t->nprobe, NULL, 0, &argv);
	if (err == 0)
		err = run_in(p, w.path, argv, 0, NULL, 0, NULL, &r, probe,
			     "the probe", d);
	sandbox_result_release(&r);
	rba_strv_free(argv, t->nprobe + 1);
	sandbox_dir_remove(&w);
	if (err)
		return err;
	{
		char *s = (char *)rba_buf_cstr(probe), *nl;
		size_t k = 0;
		while (*s && k < 100) {
			char key[32];
			nl = strchr(s, '\n');
			if (nl != NULL)
				*nl = 0;
			snprintf(key, sizeof(key), "probe.%03zu", ++k);
			field_add(fs, key, s);
			if (nl == NULL)
				break;
			s = nl + 1;
		}
	}
	return 0;
}

int
exec_envrec(const struct pins *p, struct rba_buf *out, struct rba_detail *d)
{
	const struct pins_trainer *t = &p->trainer;
	struct fields fs;
	struct rba_buf base, probe;
	struct envrec er;
	size_t i;
	int err;
	static const char *const from_base[] = {"cpu.arch", "cpu.isa",
						"cpu.model", "lib.libc"};

	fs.n = 0;
	rba_buf_init(&base);
	rba_buf_init(&probe);
	memset(&er, 0, sizeof(er));
	if ((err = envrec_capture(PINS_DET_STRICT, 1, &base)) != 0 ||
	    (err = envrec_parse((const char *)base.p, base.len, &er, d)) != 0)
		goto out;
	for (i = 0; i < 4; i++)
		field_add(&fs, from_base[i], envrec_get(&er, from_base[i]));
	field_add(&fs, "trainer.kind", "exec");
	field_add(&fs, "sandbox.bwrap", sandbox_available(NULL) == 0
						? sandbox_name()
						: "unavailable");
	fields_interpreter(&fs, t);
	fields_packages_vars(&fs, t);
	if (t->probe != NULL && (err = fields_probe(&fs, p, &probe, d)) != 0)
		goto out;
	for (i = 0; i < fs.n; i++)
		if (fs.f[i].val == NULL)
			err = RBA_E_NOMEM;
	if (err == 0) {
		qsort(fs.f, fs.n, sizeof(fs.f[0]), cmp_field);
		for (i = 0; i < fs.n; i++)
			put_field(out, fs.f[i].key, fs.f[i].val);
		err = rba_buf_status(out);
	}
out:
	for (i = 0; i < fs.n; i++)
		free(fs.f[i].val);
	envrec_release(&er);
	rba_buf_release(&base);
	rba_buf_release(&probe);
	return err;
}
