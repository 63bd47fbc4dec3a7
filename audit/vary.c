/* vary.c - the control rebuild and one rebuild per changed factor. */
#define _GNU_SOURCE /* newlocale, glob */
#include "audit/vary.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit/inputs.h"
#include "common/buf.h"
#include "common/fileio.h"
#include "common/json.h"
#include "common/rbatime.h"
#include "common/strv.h"
#include "policy/policy.h"
#include "exec/exec.h"
#include "train/kernel.h"
#include "rebuild/rebuild.h"
#include "rebuild/runs.h"
#include "exec/sandbox.h"
#include "sample/sample.h"
#include "sample/scorer.h"

#ifndef RBA_SOURCE_DIR
#define RBA_SOURCE_DIR ""
#endif

void
vary_report_release(struct vary_report *r)
{
	if (r == NULL)
		return;
	free(r->version);
	for (size_t i = 0; i < r->nruns; i++)
		free(r->runs[i].detail);
	memset(r, 0, sizeof(*r));
}

int
vary_report_changed(const struct vary_report *r)
{
	for (size_t i = 0; i < r->nruns; i++)
		if (r->runs[i].state == VARY_CHANGES || r->runs[i].state == VARY_FAILS)
			return 1;
	return 0;
}

/* ---- the factors asked for ------------------------------------------ */

static int
in_list(const char *const *list, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && strncmp(list[i], name, len) == 0)
			return (int)i;
	return -1;
}

/* want[i] for each factor of kind k (all when factors is NULL); a
 * factor of the other kind is named as such. */
static int
factors_parse(const char *factors, const struct trainer_kind *k, int *want,
	      struct rba_detail *d)
{
	static const struct trainer_kind *const kinds[] = {
		&rebuild_builtin_kind, &exec_trainer_kind};
	const char *s = factors;

	for (size_t i = 0; i < k->nfactors; i++)
		want[i] = factors == NULL;
	while (s != NULL && *s) {
		const char *e = strchr(s, ',');
		size_t len = e != NULL ? (size_t)(e - s) : strlen(s);
		int f = in_list(k->factors, k->nfactors, s, len);
		if (len == 0) {
			s = e != NULL ? e + 1 : NULL;
			continue;
		}
		if (f < 0) {
			char name[64];
			snprintf(name, sizeof(name), "%.*s", (int)(len > 40 ? 40 : len), s);
			rba_detail_key(d, "--factors");
			for (size_t o = 0; o < sizeof(kinds) / sizeof(kinds[0]); o++)
				if (kinds[o] != k &&
				    in_list(kinds[o]->factors, kinds[o]->nfactors,
					    s, len) >= 0)
					return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
							"factor '%s' is one of %s "
							"trainers; this version's "
							"are: %s", name,
							kinds[o]->name,
							k->factors_text);
			return rba_fail(d, RBA_E_SCHEMA, NULL, 0, 0,
					"unknown factor '%s'; exec trainers have: %s; "
					"builtin trainers: %s", name,
					exec_trainer_kind.factors_text,
					rebuild_builtin_kind.factors_text);
		}
		want[f] = 1;
		s = e != NULL ? e + 1 : NULL;
	}
	return 0;
}

/* ---- one run's plan -------------------------------------------------- */

/* What a child does: the control, or one variation. */
struct plan {
	char factor[24];
	char *detail;
	struct exec_vary ev;	/* exec */
	uint32_t threads;	/* builtin: another determinism.threads */
	const char *isa;	/* builtin: RBA_STRICT_ISA */
	const char *cc;		/* builtin: the other compiler */
	char *not_tried;	/* the change cannot be made here: why */
	/* filled by the run */
	int err;
	char reason[384];
	uint8_t *artifact;
	size_t len;
	double seconds;
};

static void
plan_release(struct plan *p)
{
	free(p->detail);
	free(p->not_tried);
	free(p->artifact);
}

/* Values documented for the variables that choose a CPU path. */
struct cpu_var {
	const char *name;
	const char *values[7];
};

static const struct cpu_var cpu_vars[] = {
	{"ATEN_CPU_CAPABILITY", {"default", "avx2", "avx512"}},
	{"OPENBLAS_CORETYPE", {"Prescott", "Nehalem", "Sandybridge", "Haswell", "SkylakeX"}},
	{"MKL_ENABLE_INSTRUCTIONS", {"SSE4_2", "AVX", "AVX2", "AVX512"}},
	{"MKL_CBWR", {"COMPATIBLE", "SSE4_2", "AVX", "AVX2", "AVX512"}},
	{"ONEDNN_MAX_CPU_ISA", {"SSE41", "AVX", "AVX2", "AVX512_CORE"}},
	{"DNNL_MAX_CPU_ISA", {"SSE41", "AVX", "AVX2", "AVX512_CORE"}},
	{"NPY_DISABLE_CPU_FEATURES", {"AVX512F", "AVX2 FMA3 AVX512F"}},
};

static const char *
other_locale(void)
{
	static const char *const cand[] = {"fr_CH.UTF-8", "de_DE.UTF-8", "en_US.UTF-8",
					   "fr_FR.UTF-8", "en_GB.UTF-8", "es_ES.UTF-8"};

	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		locale_t l = newlocale(LC_ALL_MASK, cand[i], (locale_t)0);
		if (l != (locale_t)0) {
			freelocale(l);
			return cand[i];
		}
	}
	return "POSIX";
}

/* libfaketime's preload library under /usr (NULL: not installed). */
static const char *
faketime_lib(void)
{
	static char path[512];
	glob_t g;

	if (glob("/usr/lib/*/faketime/libfaketime.so.1", 0, NULL, &g) != 0)
		return NULL;
	snprintf(path, sizeof(path), "%s", g.gl_pathv[0]);
	globfree(&g);
	return path;
}

/* The thread variables the pins declare, for the detail. */
static void
thread_vars(const struct pins *p, struct rba_buf *b)
{
	static const char *const names[] = {
		"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
		"NUMEXPR_NUM_THREADS", "NUMEXPR_MAX_THREADS", "VECLIB_MAXIMUM_THREADS",
		"BLIS_NUM_THREADS", "NUMBA_NUM_THREADS", "RAYON_NUM_THREADS",
		"TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "GOTO_NUM_THREADS"};

	for (size_t i = 0; i < p->trainer.nvars; i++)
		for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); j++)
			if (strcmp(p->trainer.var_names[i], names[j]) == 0)
				rba_buf_printf(b, ", %s", names[j]);
}

static int
add_plan(struct plan *plans, size_t *n, const char *factor, char *detail)
{
	struct plan *p;

	if (*n > VARY_MAX_RUNS || detail == NULL) {
		free(detail);
		return RBA_E_NOMEM;
	}
	p = &plans[(*n)++];
	memset(p, 0, sizeof(*p));
	snprintf(p->factor, sizeof(p->factor), "%s", factor);
	p->detail = detail;
	return 0;
}

/*
 * The plan of one exec factor other than cpu-features: the change it
 * makes to the sandbox (ev) and what it says it changed.
 */
static int
plan_exec_factor(const struct pins *pins, const char *name,
		 struct plan *plans, size_t *n)
{
	uint32_t t = pins->determinism.threads, t2 = t == 1 ? 2 : 1;
	struct plan *p;
	int err = 0;

	if (strcmp(name, "threads") == 0) {
		struct rba_buf b;
		rba_buf_init(&b);
		thread_vars(pins, &b);
		err = add_plan(plans, n, name,
			       rba_strdupf("{threads}%s: %u -> %u",
					   b.len ? rba_buf_cstr(&b) : "", t, t2));
		rba_buf_release(&b);
		if (err == 0)
			plans[*n - 1].ev.threads = t2;
	} else if (strcmp(name, "timezone") == 0) {
		if ((err = add_plan(plans, n, name,
				    strdup("TZ=UTC -> GMT-14 (UTC+14)"))) == 0)
			plans[*n - 1].ev.tz = "GMT-14";
	} else if (strcmp(name, "locale") == 0) {
		const char *l = other_locale();
		if ((err = add_plan(plans, n, name,
				    rba_strdupf("LANG and LC_ALL: C.UTF-8 -> %s", l))) == 0)
			plans[*n - 1].ev.lang = l;
	} else if (strcmp(name, "umask") == 0) {
		if ((err = add_plan(plans, n, name, strdup("umask 0022 -> 0002"))) == 0)
			plans[*n - 1].ev.umask_group_write = 1;
	} else if (strcmp(name, "hostname") == 0) {
		if ((err = add_plan(plans, n, name,
				    strdup("host name sandbox -> rebuild-audit-vary"))) == 0)
			plans[*n - 1].ev.hostname = "rebuild-audit-vary";
	} else if (strcmp(name, "time") == 0) {
		const char *lib = faketime_lib();
		if ((err = add_plan(plans, n, name,
				    strdup("the clock 3650 days later "
					   "(libfaketime, FAKETIME=+3650d)"))) == 0) {
			p = &plans[*n - 1];
			if (lib == NULL)
				p->not_tried = strdup("libfaketime is not installed "
						      "(Debian package faketime)");
			p->ev.faketime = lib;
			p->ev.faketime_offset = "+3650d";
		}
	} else if (strcmp(name, "path") == 0) {
		if ((err = add_plan(plans, n, name,
				    strdup("/code, /in, /out -> /srv/rebuild-audit-vary/"
					   "code, in, out (the working directory with "
					   "them)"))) == 0)
			plans[*n - 1].ev.root = "/srv/rebuild-audit-vary";
	} else if (strcmp(name, "environment-order") == 0) {
		if ((err = add_plan(plans, n, name,
				    strdup("the variables in reverse order"))) == 0)
			plans[*n - 1].ev.reverse_env = 1;
	} else if (strcmp(name, "aslr") == 0) {
		if ((err = add_plan(plans, n, name,
				    strdup("address space randomization off "
					   "(ADDR_NO_RANDOMIZE)"))) == 0)
			plans[*n - 1].ev.no_aslr = 1;
	} else if (strcmp(name, "file-order") == 0) {
		if ((err = add_plan(plans, n, name,
				    strdup("/code and /in copied onto tmpfs, every "
					   "directory's entries created in the "
					   "reverse of their listed order"))) == 0)
			plans[*n - 1].ev.reorder_files = 1;
	}
	return err;
}

/*
 * The plans of cpu-features: one per documented value of each variable
 * of environment.pass that names a CPU's features, other than the value
 * here; one not tried when there is none.
 */
static int
plans_cpu_features(const struct pins *pins, const char *name,
		   struct plan *plans, size_t *n)
{
	size_t before = *n;
	int err = 0;

	for (size_t i = 0; i < pins->trainer.npass && err == 0; i++)
		for (size_t k = 0; k < sizeof(cpu_vars) / sizeof(cpu_vars[0]); k++) {
			const struct cpu_var *cv = &cpu_vars[k];
			const char *now = getenv(cv->name);
			if (strcmp(pins->trainer.pass[i], cv->name) != 0)
				continue;
			for (size_t j = 0; j < 7 && cv->values[j] && err == 0; j++) {
				if (now != NULL && strcmp(now, cv->values[j]) == 0)
					continue;
				err = add_plan(plans, n, name,
					       rba_strdupf("%s=%s (here: %s)",
							   cv->name, cv->values[j],
							   now ? now : "unset"));
				if (err == 0) {
					plans[*n - 1].ev.var_name = cv->name;
					plans[*n - 1].ev.var_value = cv->values[j];
				}
			}
		}
	if (err == 0 && *n == before &&
	    (err = add_plan(plans, n, name,
			    strdup("no variable of environment.pass"))) == 0)
		plans[*n - 1].not_tried = rba_strdupf(
			"environment.pass names no variable with documented "
			"values (ATEN_CPU_CAPABILITY, OPENBLAS_CORETYPE, "
			"MKL_ENABLE_INSTRUCTIONS, MKL_CBWR, ONEDNN_MAX_CPU_ISA, "
			"DNNL_MAX_CPU_ISA, NPY_DISABLE_CPU_FEATURES)");
	return err;
}

static int
plans_exec(const struct pins *pins, const int *want, struct plan *plans, size_t *n)
{
	int err = 0;

	for (size_t f = 0; f < exec_trainer_kind.nfactors && err == 0; f++) {
		const char *name = exec_trainer_kind.factors[f];
		if (!want[f])
			continue;
		if (strcmp(name, "cpu-features") == 0)
			err = plans_cpu_features(pins, name, plans, n);
		else
			err = plan_exec_factor(pins, name, plans, n);
	}
	return err;
}

/* The compiler that built this binary is gcc, or clang: the other one. */
static const char *
other_compiler(void)
{
#ifdef __clang__
	return "gcc";
#else
	return "clang";
#endif
}

static int
on_path(const char *prog)
{
	char p[256];

	snprintf(p, sizeof(p), "/usr/bin/%s", prog);
	return access(p, X_OK) == 0;
}

static int
plans_builtin(const struct pins *pins, const int *want, struct plan *plans,
	      size_t *n)
{
	uint32_t t = pins->determinism.threads, t2 = t == 1 ? 2 : 1;
	int err = 0;

	for (size_t f = 0; f < rebuild_builtin_kind.nfactors && err == 0; f++) {
		const char *name = rebuild_builtin_kind.factors[f];
		if (!want[f])
			continue;
		if (strcmp(name, "threads") == 0) {
			if ((err = add_plan(plans, n, name,
					    rba_strdupf("determinism.threads %u -> %u", t,
							t2))) == 0)
				plans[*n - 1].threads = t2;
		} else if (strcmp(name, "isa") == 0) {
			const char *isa[3];
			size_t k = kernel_strict_isas(isa);
			const char *wide = isa[k - 1];
			if (k == 1 && (err = add_plan(plans, n, name,
						      strdup("RBA_STRICT_ISA"))) == 0)
				plans[*n - 1].not_tried =
					strdup("this CPU has one strict kernel path (base)");
			for (size_t i = 0; i + 1 < k && err == 0; i++)
				if ((err = add_plan(plans, n, name,
						    rba_strdupf("strict kernels %s -> %s "
								"(RBA_STRICT_ISA)",
								wide, isa[i]))) == 0)
					plans[*n - 1].isa = isa[i];
		} else if (strcmp(name, "compiler") == 0) {
			const char *cc = other_compiler();
			char mk[600];
			snprintf(mk, sizeof(mk), "%s/Makefile", RBA_SOURCE_DIR);
			if ((err = add_plan(plans, n, name,
					    rba_strdupf("the tool built by %s from %s", cc,
							RBA_SOURCE_DIR[0] ? RBA_SOURCE_DIR
									  : "its source"))) != 0)
				break;
			plans[*n - 1].cc = cc;
			if (RBA_SOURCE_DIR[0] == 0 || access(mk, R_OK) != 0)
				plans[*n - 1].not_tried = rba_strdupf(
					"this build's source tree (%s) is not here to build "
					"another", RBA_SOURCE_DIR[0] ? RBA_SOURCE_DIR : "unknown");
			else if (!on_path(cc) || !on_path("make"))
				plans[*n - 1].not_tried =
					rba_strdupf("%s or make is not installed", cc);
		}
	}
	return err;
}

/* ---- running one plan in a child ------------------------------------- */

/* Runs argv (argv[0] a path) with stdout and stderr to log: its status. */
static int
run_logged(char *const *argv, const char *log)
{
	int st = 0;
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int nul = open("/dev/null", O_RDONLY);
		/* killed with vary, even if vary died before the prctl */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (fd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 ||
		    dup2(fd, 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The tool built by cc from the source tree into dir; its path in bin. */
static int
build_other(const char *cc, const char *dir, char *bin, size_t n, char *why,
	    size_t wn)
{
	char build[4300], ok[4400], log[4400], bopt[4400], ccopt[64];
	char *argv[] = {"/usr/bin/make", "-s", "-C", RBA_SOURCE_DIR, bopt, ccopt,
			"WERROR=", bin, NULL};
	int fd, st;

	snprintf(build, sizeof(build), "%s/build", dir);
	snprintf(ok, sizeof(ok), "%s/.deps-ok", build);
	snprintf(log, sizeof(log), "%s/make.log", dir);
	snprintf(bin, n, "%s/rebuild-audit", build);
	snprintf(bopt, sizeof(bopt), "BUILD=%s", build);
	snprintf(ccopt, sizeof(ccopt), "CC=%s", cc);
	if (mkdir(build, 0700) != 0 || (fd = open(ok, O_WRONLY | O_CREAT, 0600)) < 0) {
		snprintf(why, wn, "cannot make %.200s: %s", build, strerror(errno));
		return -1;
	}
	close(fd);
	/* with .deps-ok in place make installs nothing */
	if ((st = run_logged(argv, log)) != 0) {
		snprintf(why, wn, "make with CC=%s failed (status %d)", cc, st);
		return -1;
	}
	return 0;
}

/* train PINS with the other build: the artifact's bytes. */
static int
train_other(const struct audit_inputs *c, const char *cc, struct plan *p)
{
	struct sandbox_dir w;
	struct rba_buf canon;
	char bin[4400], pins[4400], snap[4400], art[4400], log[4400];
	char *argv[] = {bin, "train", pins, "--snapshot", snap, "-o", art, "--no-keep",
			NULL};
	int err = 0, st;

	if (sandbox_dir_make(&w, NULL) != 0) {
		snprintf(p->reason, sizeof(p->reason), "cannot make a work directory");
		return RBA_E_IO;
	}
	rba_buf_init(&canon);
	policy_pins_canonical(c->pins, &canon);
	snprintf(pins, sizeof(pins), "%s/pins.yaml", w.path);
	snprintf(snap, sizeof(snap), "%s/snapshot.csv", w.path);
	snprintf(art, sizeof(art), "%s/artifact", w.path);
	snprintf(log, sizeof(log), "%s/train.log", w.path);
	if (rba_buf_status(&canon) != 0 ||
	    rba_file_write_atomic(pins, canon.p, canon.len, 0600) != 0 ||
	    rba_file_write_atomic(snap, c->snap, c->sn, 0600) != 0) {
		snprintf(p->reason, sizeof(p->reason), "cannot write the inputs");
		err = RBA_E_IO;
	} else if (build_other(cc, w.path, bin, sizeof(bin), p->reason,
			       sizeof(p->reason)) != 0) {
		err = RBA_E_IO;
	} else if ((st = run_logged(argv, log)) != 0) {
		snprintf(p->reason, sizeof(p->reason),
			 "the %s build's train failed (status %d)", cc, st);
		err = RBA_E_IO;
	} else if (rba_file_read(art, ARTIFACT_MAX_BYTES, &p->artifact, &p->len,
				 NULL) != 0) {
		snprintf(p->reason, sizeof(p->reason), "the %s build wrote no artifact",
			 cc);
		err = RBA_E_IO;
	}
	rba_buf_release(&canon);
	sandbox_dir_remove(&w);
	return err;
}

/* In the child, an exec version: its command under the plan's change. */
static int
run_plan_exec(struct audit_inputs *c, struct plan *p, struct rba_detail *d)
{
	struct exec_run xr;
	int err;

	err = exec_train_varied(c->pins, c->snap, c->sn, c->pins->train.seed,
				c->pins->determinism.threads,
				p->factor[0] ? &p->ev : NULL, &xr, d);
	if (err == 0) {
		p->artifact = xr.artifact;
		p->len = xr.artifact_len;
		xr.artifact = NULL;
	}
	exec_run_release(&xr);
	return err;
}

/* In the child, a builtin version: another build, another kernel path
 * or other threads. */
static int
run_plan_builtin(struct audit_inputs *c, struct plan *p, struct rba_detail *d)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	uint32_t abi = c->pins->trainer_abi ? c->pins->trainer_abi : c->stored.abi;
	struct rebuild_result rb;
	int err;

	if (p->cc != NULL)
		return train_other(c, p->cc, p);
	if (p->isa != NULL)
		setenv("RBA_STRICT_ISA", p->isa, 1);
	if (p->threads)
		c->pins->determinism.threads = p->threads;
	memset(&rb, 0, sizeof(rb));
	rba_digest_format(&c->v.snapshot, hex);
	err = rebuild_from_snapshot(c->pins, abi, c->snap, c->sn, hex, NULL, &rb, d);
	if (err == 0) {
		p->artifact = rb.artifact;
		p->len = rb.artifact_len;
		rb.artifact = NULL;
	}
	rebuild_result_release(&rb);
	return err;
}

/*
 * What vary does for each trainer kind (exec/kind.h): its plans from
 * the factors asked for, and a run under one plan.  These are vary's
 * own (they need struct plan), so they are kept here beside the entry
 * they belong to rather than in it.
 */
struct vary_recipe {
	const struct trainer_kind *kind;
	int (*plans)(const struct pins *pins, const int *want,
		     struct plan *plans, size_t *n);
	int (*run)(struct audit_inputs *c, struct plan *p, struct rba_detail *d);
};

static const struct vary_recipe vary_recipes[] = {
	{&rebuild_builtin_kind, plans_builtin, run_plan_builtin},
	{&exec_trainer_kind, plans_exec, run_plan_exec},
};

/* The recipe of kind k: every kind has one. */
static const struct vary_recipe *
recipe_of(const struct trainer_kind *k)
{
	size_t i = 0;

	while (vary_recipes[i].kind != k)
		i++;
	assert(i < sizeof(vary_recipes) / sizeof(vary_recipes[0]));
	return &vary_recipes[i];
}

/* In the child: the run the plan says, its artifact into p. */
static int
run_plan(struct audit_inputs *c, struct plan *p, struct rba_detail *d)
{
	return recipe_of(c->kind)->run(c, p, d);
}

/* The child's answer on its pipe: i32 err, reason[384], u64 len, bytes. */
static void
child_main(struct audit_inputs *c, struct plan *p, int fd, pid_t parent)
{
	struct rba_detail d;
	struct rba_buf b;
	int err;

	/* Killed with vary, even if vary died between the fork and the
	 * prctl: no variation runs on with nobody to read it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	rba_detail_clear(&d);
	err = run_plan(c, p, &d);
	rba_buf_init(&b);
	rba_buf_put_u32(&b, (uint32_t)err);
	if (err && !p->reason[0])
		snprintf(p->reason, sizeof(p->reason), "%s",
			 d.reason[0] ? d.reason : rba_strerror(err));
	rba_buf_put(&b, p->reason, sizeof(p->reason));
	rba_buf_put_u64(&b, err ? 0 : p->len);
	if (!err)
		rba_buf_put(&b, p->artifact, p->len);
	if (rba_buf_status(&b) == 0) {
		const uint8_t *q = b.p;
		size_t left = b.len;
		while (left > 0) {
			ssize_t k = write(fd, q, left);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				break;
			q += k;
			left -= (size_t)k;
		}
	}
	_exit(0);
}

struct child {
	pid_t pid;
	int fd;
	struct rba_buf got;
	size_t plan;
	double t0;
};

/* Takes what child k sent into its plan. */
static void
child_done(struct child *k, struct plan *p)
{
	struct rba_cursor cur;
	uint32_t err;
	const uint8_t *reason, *bytes;
	uint64_t len;

	rba_cursor_init(&cur, k->got.p, k->got.len);
	err = rba_cursor_u32(&cur);
	reason = rba_cursor_bytes(&cur, sizeof(p->reason));
	len = rba_cursor_u64(&cur);
	bytes = rba_cursor_bytes(&cur, (size_t)len);
	p->seconds = rba_time_mono() - k->t0;
	if (rba_buf_status(&k->got) != 0 || !rba_cursor_ok(&cur)) {
		p->err = RBA_E_IO;
		snprintf(p->reason, sizeof(p->reason), "the run ended without an answer");
		return;
	}
	p->err = (int)err;
	memcpy(p->reason, reason, sizeof(p->reason));
	p->reason[sizeof(p->reason) - 1] = 0;
	if (err == 0 && (p->artifact = malloc(len ? (size_t)len : 1)) != NULL) {
		memcpy(p->artifact, bytes, (size_t)len);
		p->len = (size_t)len;
	} else if (err == 0) {
		p->err = RBA_E_NOMEM;
	}
}

/* Runs plans[0..n) at most jobs at a time, each in a child. */
static void
run_all(struct audit_inputs *c, struct plan *plans, size_t n, unsigned jobs)
{
	struct child kids[64];
	size_t next = 0, live = 0;
	pid_t self;

	if (jobs < 1)
		jobs = 1;
	if (jobs > 64)
		jobs = 64;
	while (next < n || live > 0) {
		struct pollfd fds[64];
		while (live < jobs && next < n) {
			int pp[2];
			struct plan *p = &plans[next];
			if (p->not_tried != NULL) {
				next++;
				continue;
			}
			if (pipe(pp) != 0) {
				p->err = errno;
				snprintf(p->reason, sizeof(p->reason), "pipe: %s", strerror(errno));
				next++;
				continue;
			}
			fflush(NULL);
			self = getpid();
			kids[live].pid = fork();
			if (kids[live].pid == 0) {
				close(pp[0]);
				child_main(c, p, pp[1], self);
			}
			close(pp[1]);
			if (kids[live].pid < 0) {
				close(pp[0]);
				p->err = errno;
				snprintf(p->reason, sizeof(p->reason), "fork: %s", strerror(errno));
				next++;
				continue;
			}
			kids[live].fd = pp[0];
			kids[live].plan = next++;
			kids[live].t0 = rba_time_mono();
			rba_buf_init(&kids[live].got);
			live++;
		}
		if (live == 0)
			continue;
		for (size_t i = 0; i < live; i++) {
			fds[i].fd = kids[i].fd;
			fds[i].events = POLLIN;
		}
		if (poll(fds, (nfds_t)live, -1) < 0)
			continue;
		for (size_t i = 0; i < live; i++) {
			char buf[65536];
			ssize_t k;
			if (!fds[i].revents)
				continue;
			k = read(kids[i].fd, buf, sizeof(buf));
			if (k < 0 && errno == EINTR)
				continue;
			if (k > 0) {
				rba_buf_put(&kids[i].got, buf, (size_t)k);
				continue;
			}
			close(kids[i].fd);
			while (waitpid(kids[i].pid, NULL, 0) < 0 && errno == EINTR)
				;
			child_done(&kids[i], &plans[kids[i].plan]);
			rba_buf_release(&kids[i].got);
			kids[i] = kids[--live];
			fds[i] = fds[live];
			i--;
		}
	}
}

/* ---- scoring what differs -------------------------------------------- */

struct scored {
	float *probs;	/* cases x nclasses */
	uint64_t cases;
	uint32_t nclasses;
	char **ids;	/* the case ids, for the largest difference */
};

static void
scored_release(struct scored *s)
{
	free(s->probs);
	if (s->ids != NULL)
		for (uint64_t i = 0; i < s->cases; i++)
			free(s->ids[i]);
	free(s->ids);
	memset(s, 0, sizeof(*s));
}

struct walk {
	struct sample_scorer *sc;
	struct scored *out;
	uint64_t cap;
	const struct sample_layout *l;
	struct rba_detail *d;
};

static int
walk_chunk(void *ctx, uint32_t chunk_no, const struct sample_chunk *c)
{
	struct walk *w = ctx;
	struct scored *s = w->out;
	uint32_t nc = s->nclasses;
	int err;

	(void)chunk_no;
	if (s->cases + c->ncases > w->cap) {
		uint64_t cap = (w->cap + c->ncases) * 2;
		float *np = realloc(s->probs, cap * nc * sizeof(float));
		char **ni = realloc(s->ids, cap * sizeof(char *));
		if (np != NULL)
			s->probs = np;
		if (ni != NULL)
			s->ids = ni;
		if (np == NULL || ni == NULL)
			return RBA_E_NOMEM;
		w->cap = cap;
	}
	if ((err = sample_scorer_run(w->sc, c, s->probs + s->cases * nc, NULL, w->d)) != 0)
		return err;
	for (uint32_t i = 0; i < c->ncases; i++) {
		s->ids[s->cases + i] = strdup(c->ids != NULL && c->ids[i] != NULL ? c->ids[i] : "");
	}
	s->cases += c->ncases;
	return 0;
}

/* Scores the sample with the artifact bytes a (an exec version's opened
 * as exec_artifact_open does). */
static int
score_bytes(struct store_txn *txn, struct audit_inputs *c,
	    const struct sample_layout *l, const uint8_t *a, size_t n,
	    struct scored *out, struct rba_detail *d)
{
	struct artifact art;
	struct walk w;
	int err;

	memset(out, 0, sizeof(*out));
	memset(&art, 0, sizeof(art));
	memset(&w, 0, sizeof(w));
	err = c->kind->artifact_open(c->pins, c->snap, c->sn, a, n, &art, d);
	if (err)
		return err;
	out->nclasses = art.spec.nclasses;
	w.out = out;
	w.l = l;
	w.d = d;
	if ((err = sample_scorer_new(&art, &w.sc, d)) == 0 &&
	    (err = sample_scorer_bind(w.sc, l, d)) == 0)
		err = sample_walk(txn, c->name, l, walk_chunk, &w, d);
	sample_scorer_free(w.sc);
	artifact_release(&art);
	if (err)
		scored_release(out);
	return err;
}

/* Flips and the largest difference of b against a, under the policy. */
static void
compare_scores(const struct audit_inputs *c, const struct scored *a,
	       const struct scored *b, struct vary_run *r)
{
	uint32_t nc = a->nclasses, pos = c->stored.spec.positive;

	r->scored = 1;
	r->flips = 0;
	r->max_delta = 0;
	for (uint64_t i = 0; i < a->cases && i < b->cases; i++) {
		const float *x = a->probs + i * nc, *y = b->probs + i * nc;
		double delta = 0;
		int flip;
		for (uint32_t k = 0; k < nc; k++) {
			double dk = fabs((double)x[k] - (double)y[k]);
			if (dk > delta || isnan(dk))
				delta = dk;
		}
		if (c->pol->argmax || pos >= nc) {
			double px[64], py[64];
			uint32_t m = nc < 64 ? nc : 64;
			for (uint32_t k = 0; k < m; k++) {
				px[k] = x[k];
				py[k] = y[k];
			}
			flip = policy_decide_argmax(c->pol, px, m, NULL) !=
			       policy_decide_argmax(c->pol, py, m, NULL);
		} else {
			const char *dx = policy_decide(c->pol, x[pos], NULL);
			const char *dy = policy_decide(c->pol, y[pos], NULL);
			flip = dx == NULL || dy == NULL || strcmp(dx, dy) != 0;
		}
		r->flips += (uint64_t)flip;
		if (delta > r->max_delta || (isnan(delta) && !isnan(r->max_delta))) {
			r->max_delta = delta;
			snprintf(r->max_delta_case, sizeof(r->max_delta_case), "%s",
				 a->ids[i]);
		}
	}
}

/* ---- the record -------------------------------------------------------- */

static const char *
state_name(enum vary_state s)
{
	switch (s) {
	case VARY_SAME: return "same";
	case VARY_CHANGES: return "changes";
	case VARY_FAILS: return "fails";
	default: return "not-tried";
	}
}

void
vary_report_json(const struct vary_report *r, struct rba_buf *b)
{
	struct rba_json_w w;

	rba_json_w_init(&w, b);
	rba_json_w_open(&w, NULL, '{');
	rba_json_w_str(&w, "schema", VARY_SCHEMA);
	rba_json_w_str(&w, "version", r->version);
	rba_json_w_str(&w, "time", r->time);
	rba_json_w_str(&w, "trainer", r->kind->name);
	rba_json_w_digest(&w, "pinned", &r->pinned, 1);
	rba_json_w_open(&w, "control", '{');
	rba_json_w_digest(&w, "artifact", &r->control, 1);
	rba_json_w_bool(&w, "pinned", rba_digest_equal(&r->control, &r->pinned));
	rba_json_w_close(&w, '}');
	rba_json_w_u64(&w, "sample_cases", r->cases);
	rba_json_w_str(&w, "not_scored",
		       r->why_not_scored[0] ? r->why_not_scored : NULL);
	rba_json_w_open(&w, "factors", '[');
	for (size_t i = 0; i < r->nruns; i++) {
		const struct vary_run *f = &r->runs[i];
		int has = f->state == VARY_SAME || f->state == VARY_CHANGES;
		rba_json_w_open(&w, NULL, '{');
		rba_json_w_str(&w, "factor", f->factor);
		rba_json_w_str(&w, "state", state_name(f->state));
		rba_json_w_bool(&w, "changes_artifact", f->state == VARY_CHANGES);
		rba_json_w_digest(&w, "artifact", &f->artifact, has);
		if (f->scored)
			rba_json_w_u64(&w, "flips", f->flips);
		else
			rba_json_w_str(&w, "flips", NULL);
		rba_json_w_num(&w, "max_score_delta",
			       f->scored ? f->max_delta : NAN);
		rba_json_w_str(&w, "max_delta_case",
			       f->scored && f->max_delta > 0 ? f->max_delta_case
							     : NULL);
		rba_json_w_num(&w, "seconds", f->seconds);
		rba_json_w_str(&w, "detail", f->detail);
		rba_json_w_close(&w, '}');
	}
	rba_json_w_close(&w, ']');
	rba_json_w_close(&w, '}');
}

/* Keeps the report as a run record "vary/<version>@<t>". */
static int
keep(struct store *st, struct vary_report *r, int64_t now, struct rba_detail *d)
{
	struct store_txn *txn = NULL;
	struct rba_buf b;
	char subject[STORE_VERSION_NAME_MAX + 8], id[RUNS_ID_SIZE];
	int err;

	snprintf(subject, sizeof(subject), "vary/%s", r->version);
	rba_buf_init(&b);
	if ((err = store_txn_begin(st, 1, 0, &txn, d)) != 0)
		return err;
	if ((err = runs_id_new(txn, subject, now, id, d)) == 0) {
		snprintf(r->run_id, sizeof(r->run_id), "%s", id);
		vary_report_json(r, &b);
		err = rba_buf_status(&b);
	}
	if (err == 0)
		err = store_run_put(txn, id, b.p, b.len, d);
	if (err == 0)
		err = store_txn_commit(txn, d);
	else
		store_txn_abort(txn);
	rba_buf_release(&b);
	return err;
}

/* ---- the use case ------------------------------------------------------ */

/* The sample a variation is scored on, and the control's scores. */
struct vary_sample {
	struct sample_layout layout;
	struct store_sample_info info;
	struct scored ctl;
	int have_layout, have_ctl;
};

/* The sample, when there is one, scored by the control's artifact;
 * when it cannot be, out->why_not_scored says why. */
static void
score_control(struct store_txn *txn, struct audit_inputs *c,
	      const char *version, const struct plan *control,
	      struct vary_sample *vs, struct vary_report *out,
	      struct rba_detail *d)
{
	int err = sample_layout_load(txn, version, &vs->info, &vs->layout, d);

	if (err == 0) {
		vs->have_layout = 1;
		err = score_bytes(txn, c, &vs->layout, control->artifact,
				  control->len, &vs->ctl, d);
		if (err == 0) {
			vs->have_ctl = 1;
			out->cases = vs->ctl.cases;
		} else {
			snprintf(out->why_not_scored, sizeof(out->why_not_scored),
				 "the control cannot score the sample: %s", d->reason);
		}
	} else {
		snprintf(out->why_not_scored, sizeof(out->why_not_scored), "%s",
			 err == RBA_E_NOTFOUND ? "the version has no sample" : d->reason);
	}
}

/* What one factor's rebuild p came to against the control's artifact,
 * and, when it changes the artifact, on the sample. */
static void
judge_run(struct store_txn *txn, struct audit_inputs *c,
	  const struct vary_sample *vs, const struct plan *p,
	  const struct rba_digest *control, struct vary_run *r)
{
	struct scored s;
	struct rba_detail sd;

	snprintf(r->factor, sizeof(r->factor), "%s", p->factor);
	r->seconds = p->seconds;
	if (p->not_tried != NULL) {
		r->state = VARY_NOT_TRIED;
		r->detail = rba_strdupf("%s: not tried: %s", p->detail, p->not_tried);
		return;
	}
	if (p->err) {
		r->state = VARY_FAILS;
		r->detail = rba_strdupf("%s: the rebuild fails: %s", p->detail, p->reason);
		return;
	}
	r->detail = strdup(p->detail);
	rba_digest_bytes(p->artifact, p->len, &r->artifact);
	r->state = rba_digest_equal(&r->artifact, control) ? VARY_SAME
							   : VARY_CHANGES;
	if (r->state != VARY_CHANGES || !vs->have_ctl)
		return;
	rba_detail_clear(&sd);
	if (score_bytes(txn, c, &vs->layout, p->artifact, p->len, &s, &sd) == 0) {
		compare_scores(c, &vs->ctl, &s, r);
		scored_release(&s);
	} else {
		char *more = rba_strdupf("%s (the sample could not be scored "
					 "with it: %s)", p->detail, sd.reason);
		if (more != NULL) {
			free(r->detail);
			r->detail = more;
		}
	}
}

int
vary_version(struct store *st, const char *version, const char *factors,
	     unsigned jobs, struct vary_report *out, struct rba_detail *d)
{
	struct audit_inputs c;
	struct store_txn *txn = NULL;
	struct plan *plans = NULL;
	struct vary_sample vs;
	int want[16], err;
	size_t n = 0;
	int64_t now = (int64_t)time(NULL);

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	memset(&vs, 0, sizeof(vs));
	if ((err = store_txn_begin(st, 0, 0, &txn, d)) != 0)
		return err;
	if ((err = audit_inputs_load(txn, version, NULL, &c, d)) != 0)
		goto out;
	if ((err = factors_parse(factors, c.kind, want, d)) != 0)
		goto out;
	if (c.kind->sandboxed && (err = sandbox_available(d)) != 0)
		goto out;
	if ((plans = calloc(VARY_MAX_RUNS + 1, sizeof(*plans))) == NULL) {
		err = RBA_E_NOMEM;
		goto out;
	}
	/* plans[0] is the control: no factor */
	n = 1;
	err = recipe_of(c.kind)->plans(c.pins, want, plans, &n);
	if (err)
		goto out;
	run_all(&c, plans, n, jobs);
	if (plans[0].err) {
		err = rba_fail(d, plans[0].err, NULL, 0, 0,
			       "the control rebuild of version '%s' failed: %s",
			       version, plans[0].reason);
		goto out;
	}
	out->version = strdup(version);
	out->kind = c.kind;
	out->pinned = c.v.artifact;
	rba_digest_bytes(plans[0].artifact, plans[0].len, &out->control);
	rba_time_utc(now, out->time);
	score_control(txn, &c, version, &plans[0], &vs, out, d);
	rba_detail_clear(d);
	for (size_t i = 1; i < n && out->nruns < VARY_MAX_RUNS; i++)
		judge_run(txn, &c, &vs, &plans[i], &out->control,
			  &out->runs[out->nruns++]);
	store_txn_abort(txn);
	txn = NULL;
	err = keep(st, out, now, d);
out:
	if (txn != NULL)
		store_txn_abort(txn);
	if (vs.have_layout)
		sample_layout_release(&vs.layout);
	store_sample_info_release(&vs.info);
	scored_release(&vs.ctl);
	for (size_t i = 0; plans != NULL && i < n; i++)
		plan_release(&plans[i]);
	free(plans);
	audit_inputs_release(&c);
	if (err)
		vary_report_release(out);
	return err;
}
