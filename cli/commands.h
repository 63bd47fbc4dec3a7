/*
 * commands.h - the command table and what every handler shares.
 *
 * Checklist for adding a command:
 *   1. a handler `int cmd_<name>(struct cli_ctx *, int argc, char **argv)`
 *      declared below and defined in its own file cli/cmd_<name>.c (its
 *      subcommands and static helpers live there too; a helper a second
 *      command needs moves to cli_common.c, declared below); argv[0] is
 *      the command name; it returns the exit status (0 yes, 1 no, 2 could
 *      not answer) and prints diagnostics only through cli_fail*();
 *      it parses its arguments first and only then opens the store, if
 *      it needs one, with cli_store_open() or cli_txn_begin(), so a usage
 *      error is reported before a missing store (main.c closes it);
 *   2. a row in the alphabetical table in cli/main.c, with its one-line
 *      usage (the same text -h prints and the man SYNOPSIS has);
 *   3. a section in man/rebuild-audit.1 (SYNOPSIS and COMMANDS) and the
 *      README;
 *   4. CLI tests in tests/cli/ for each exit status it can return.
 */
#ifndef RBA_COMMANDS_H
#define RBA_COMMANDS_H

#include <stdint.h>
#include <stdio.h>

#include "common/digest.h"
#include "common/json.h"
#include "common/rba.h"
#include "common/rbatime.h"

struct pins;
struct policy;
struct rba_buf;
struct rebuild_progress;
struct store;
struct store_txn;

struct cli_ctx {
	const char *prog;	/* "rebuild-audit" */
	const char *store_path; /* -S, $REBUILD_AUDIT_STORE, ./audit-store */
	int json;		/* --json */
	int quiet;		/* -q */
	int verbose;		/* -v */
	int progress;		/* stderr is a terminal and not -q */
	double wait;		/* --wait: seconds a writer waits (store_wait_set) */
	struct store *store;	/* opened by cli_store_open(), closed by main */
	const struct cli_command *cmd;
};

typedef int (*cli_handler)(struct cli_ctx *ctx, int argc, char **argv);

/* The largest --wait: a day. */
#define CLI_WAIT_MAX 86400

struct cli_command {
	const char *name;
	cli_handler fn;
	const char *usage;   /* "snapshot add FILE [--name N]" (may have \n) */
	const char *summary; /* one line for --help */
};

/*
 * Diagnostics, one line each on stderr:
 *   rebuild-audit: <what> '<subject>': <reason>
 * With d carrying a line, the subject becomes FILE:LINE:COL; with a key
 * and no line, "<subject>' (key '<key>')..." is not used: the key is put
 * in the reason by the callee.  Returns 2 so handlers can
 * `return cli_fail(...)`.
 *
 * Every diagnostic (cli_fail, cli_usage, cli_warn, cli_diag) is written
 * through the escaping rule of cli_fput_data: a subject or a reason that
 * quotes a file's column name, a case id, a file name or a value shows
 * its CR, LF, escape sequences and bidirectional controls as \r, \n,
 * \xHH, and stays one line that cannot drive the terminal.
 */
int cli_fail(const char *what, const char *subject, int err,
	     const struct rba_detail *d);
/* A usage error for the current command: prints usage, returns 2. */
int cli_usage(struct cli_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Warnings (still one line, prefixed "rebuild-audit: warning: "). */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Any other diagnostic line: "rebuild-audit: " and the formatted text. */
void cli_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the command's usage (for -h); returns 0. */
int cli_help(struct cli_ctx *ctx);
/*
 * Shared option check: returns 1 when argv has -h/--help (and prints
 * usage), so a handler can `if (cli_wants_help(ctx, argc, argv)) return 0;`.
 */
int cli_wants_help(struct cli_ctx *ctx, int argc, char **argv);
/*
 * One option with a value, in any of the forms "-k VAL", "-kVAL",
 * "--name VAL" and "--name=VAL": returns 1 and sets *val when argv[*i] is
 * the option name (advancing *i past a separate value), 0 when it is not,
 * -1 when its value is missing.
 */
int cli_opt_value(int argc, char **argv, int *i, const char *name,
		  const char **val);
/*
 * Opens the store at ctx->store_path into ctx->store (read-only when
 * read_only) unless it is open already; on failure prints
 * "cannot open store '<path>': ..." and returns 2.
 */
int cli_store_open(struct cli_ctx *ctx, int read_only);
/*
 * Loads the secret key at keypath, decrypting it with the passphrase in
 * passfile (NULL: none) when it is protected.  0 with *key set (the
 * caller frees it with sign_seckey_free); otherwise prints the one-line
 * diagnostic and returns 2.
 */
struct sign_seckey;
int cli_seckey_load(const char *keypath, const char *passfile,
		    struct sign_seckey **key);
/*
 * From the moment a command opens a store, a fault reading it (SIGBUS,
 * SIGSEGV, SIGFPE, or abort() in an LMDB assertion: damaged pages) ends the
 * process with "rebuild-audit: <what> '<path>': the store is damaged:
 * ..." and exit status 2 instead of a signal death (cli_guard.c).
 * cli_store_open arms it; a handler that opens a store by other means
 * calls it first.
 */
void cli_guard_store(const char *what, const char *path);
/*
 * Opens the store (read-only unless write) and begins a transaction;
 * on failure prints "<what> '<subject>': ..." and returns 2.
 */
int cli_txn_begin(struct cli_ctx *ctx, int write, uint64_t size_hint,
		  const char *what, const char *subject, struct store_txn **txn);
/*
 * A command's output file (OUT, -o FILE) under the rule of
 * common/fileio.h: a new file, an existing regular file only with force
 * (--force), a device or a FIFO written as it is, never a symbolic link;
 * "-" is dash (stdout; NULL: "-" refused, the report being there).
 * A failure of the output is printed as "<what> '<path>': <reason>" when
 * subject is path ("cannot write artifact 'a.bin': exists (use --force
 * to replace it)"), else as "<what> '<subject>': cannot write '<path>':
 * <reason>" (what was being exported, and where to).
 * cli_output_open: 0, or the diagnostic and 2 (o idle).
 * cli_output_finish ends o after the work that wrote it returned err:
 * 0 commits it; otherwise it aborts it and prints the output's failure
 * when there was one, else "<what> '<subject>': ..." with d.  0 or 2; o
 * idle after.  "-" whose reader has gone (cli_stdout_gone) fails both
 * with 2 and no diagnostic.
 */
/*
 * 1 when a write to standard output failed with err because nobody reads
 * it any more (a closed pipe: `... | head`); err 0 asks about an error
 * an earlier write left (ferror).  The command then exits 2 without a
 * diagnostic: the reader asked for no more, and no one is there to be
 * told.  main.c keeps SIGPIPE from killing the tool first.
 */
int cli_stdout_gone(int err);
struct rba_output;
int cli_output_open(const char *path, int force, FILE *dash,
		    const char *what, const char *subject,
		    struct rba_output *o);
int cli_output_finish(struct rba_output *o, int err, const char *what,
		      const char *subject, const struct rba_detail *d);
/*
 * The arguments of a command whose only option is --force (snapshot
 * export, sample export, version export-artifact): exactly want
 * positional values into pos[], --force anywhere into *force.  0, or
 * 2 after a usage diagnostic naming what is needed (need).
 */
int cli_args_force(struct cli_ctx *ctx, int argc, char **argv, int want,
		   const char **pos, int *force, const char *need);
/*
 * Loads the policy file path into *out (NULL and 0 when path is NULL);
 * on failure prints "invalid policy '<path>': ..." and returns 2.  The
 * caller frees *out with policy_free().
 */
int cli_policy_load(const char *path, struct policy **out);
/*
 * Training progress on stderr (train, register) of pins p: when
 * ctx->progress, fills *out so that the trainer's epochs show as
 * "\rtraining: epoch N/M", or for trees the boosting rounds as
 * "\rtraining: round N/M" (at most ten times a second, and always the
 * last one) and returns out; otherwise returns NULL, and nothing is ever
 * printed.  cli_progress_clear() erases the line when ctx->progress.
 */
const struct rebuild_progress *cli_progress_training(struct cli_ctx *ctx,
						     const struct pins *p,
						     struct rebuild_progress *out);
void cli_progress_clear(struct cli_ctx *ctx);
/*
 * The --json documents: each is written through common/json.h's compact
 * writer (struct rba_json_w) into a struct rba_buf, then put on stdout
 * by cli_json_print, whose errors reach the exit status where every
 * other write to stdout does (main.c's finish: a closed pipe exits 2).
 * cli_json_print writes b and a newline and releases b: 0, or 2 after
 * "cannot write 'stdout': ..." when b could not hold the document (out
 * of memory; nothing is written then).
 */
int cli_json_print(struct rba_buf *b);
/* Starts a --json document: b empty, w on it, the outer object open. */
void cli_json_begin(struct rba_json_w *w, struct rba_buf *b);
/*
 * Documents laid out with line breaks the compact writer does not make
 * (the listings of history and versions, "[{...},\n {...}]", and store
 * check's): writes sep (NUL-terminated, "" for none) into b as it is,
 * then starts w afresh on b.  A writer started afresh writes one value,
 * or one "key": value member, with no separator before it: sep is the
 * separator.  The brackets around such items are opened and closed by
 * a writer of their own: closing writes no separator.
 */
void cli_json_w_sep(struct rba_json_w *w, struct rba_buf *b, const char *sep);
/*
 * A member (key not NULL) or an item of w: a number in a printf format
 * other than the shortest text that reads back (rba_json_w_num), for a
 * document that has always carried it so ("%.17g": audit --list's
 * costs).  The text is at most 63 bytes (asserted) and must be a JSON
 * number: the caller's format and value make it one.
 */
void cli_json_w_fmt(struct rba_json_w *w, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Writes n bytes of text that came from data (a file, the store, a
 * signed statement, a file name) to f so that no byte of it can move
 * the cursor, start a line or drive the terminal: the rule of
 * rba_utf8_escape (common/utf8.h; backslash as \\, CR, LF and TAB as
 * \r, \n and \t, other controls, bidirectional controls and invalid
 * UTF-8 as \xHH).  f NULL: writes nothing.  Returns the bytes it wrote
 * (or would write), for padding.  cli_put_data(f, s) is the same for a
 * C string (NULL: nothing).
 */
size_t cli_fput_data(FILE *f, const char *s, size_t n);
size_t cli_put_data(FILE *f, const char *s);
/* Writes s padded with spaces to width w, as %-*s would, by its shown width. */
void cli_put_data_pad(FILE *f, const char *s, size_t w);
/* v with six significant digits ("%.6g"), for text reports; returns out. */
const char *cli_fmt_g6(double v, char out[32]);
/*
 * dg as text into out; cut to "sha256:" and 16 hex digits unless
 * verbose, for text reports; returns out.
 */
const char *cli_digest_short(const struct rba_digest *dg, int verbose,
			     char out[RBA_DIGEST_TEXT_LEN + 1]);
/*
 * Byte counts for text reports, in two spellings that reports already
 * print and tests pin: cli_fmt_size "812 B", "12.3 KiB", "4.0 MiB" (the
 * sample reports); cli_fmt_size_short "812B", "12.3K", "4.0M", "1.2G"
 * (the snapshot list columns).
 */
void cli_fmt_size(uint64_t n, char out[32]);
void cli_fmt_size_short(uint64_t n, char out[32]);
/*
 * Parses s as a decimal integer of at most max into *out: digits only
 * (no sign, no space), nothing after them.  Returns 0, or -1 (and *out
 * unchanged) when s is not such a number.
 */
int cli_parse_u64(const char *s, uint64_t max, uint64_t *out);
/*
 * Parses s as a finite decimal number from lo to hi into *out (strtod in
 * the C locale's form: "0.0005", "5e-4"; no sign for lo >= 0), nothing
 * after it.  0, or -1 (and *out unchanged).
 */
int cli_parse_double(const char *s, double lo, double hi, double *out);

/* ---- forensics (cli_forensics.c) ---- */
struct rebuild_runrec;
struct fx_fault;
struct fx_progress;
struct fx_store;
struct fx_sweep;
struct fx_sweep_plan;
/* The options of the commands that train at seeds (sweep, compare,
 * gate validate/check, bisect). */
#define CLI_FX_MAX_SNAPS 8
struct cli_fx_opts {
	const char *seeds;		 /* --seeds A-B, as given; NULL */
	uint64_t jobs;			 /* -j N, 1 to FX_MAX_JOBS; 1 */
	char *snaps[CLI_FX_MAX_SNAPS];	 /* --snapshot FILE, repeatable */
	size_t nsnaps;
};
/* Sets o to its defaults. */
void cli_fx_opts_init(struct cli_fx_opts *o);
/*
 * Takes argv[*i] (and its value, advancing *i) into o when it is one of
 * those options: 1; 0 when it is not; 2 after a usage diagnostic.
 */
int cli_fx_opt(struct cli_ctx *ctx, int argc, char **argv, int *i,
	       struct cli_fx_opts *o);
/* The sweep plan of o at the n seeds (borrowed by out). */
void cli_fx_plan(const struct cli_fx_opts *o, const uint64_t *seeds, size_t n,
		 struct fx_sweep_plan *out);
/* The store of ctx as a use case gets it: opened writable when first
 * needed, with cli_store_open's diagnostic when it cannot be. */
void cli_fx_store(struct cli_ctx *ctx, struct fx_store *out);
/* Training progress on stderr when ctx->progress (NULL otherwise). */
const struct fx_progress *cli_fx_progress(struct cli_ctx *ctx);
/*
 * The one diagnostic of a failed forensics use case (err, f): the
 * step's words and f's subject, the store's path when it has none.
 * Returns 2.
 */
int cli_fx_fail(struct cli_ctx *ctx, const struct fx_fault *f, int err);
/*
 * The snapshot of digest want: the first of files whose bytes hash to
 * it, else the store's blob.  *buf malloc'd.  0, or 2 after a diagnostic.
 */
int cli_fx_snapshot(struct cli_ctx *ctx, const struct rba_digest *want,
		    char *const *files, size_t nfiles, uint8_t **buf, size_t *n);
/*
 * fx_sweep_run of p at the n seeds with o's jobs and snapshot files
 * (progress on stderr when ctx->progress, prefixed with label).  0, or
 * 2 after a diagnostic.
 */
int cli_sweep_run(struct cli_ctx *ctx, const struct pins *p,
		  const uint64_t *seeds, size_t n, const struct cli_fx_opts *o,
		  const char *label, struct fx_sweep *out);
/* fx_sweep_load of id.  0, or 2 after a diagnostic. */
int cli_sweep_load(struct cli_ctx *ctx, struct store_txn *txn, const char *id,
		   struct fx_sweep *out);
/* Train and validation loss by epoch as a character chart. */
void cli_curve_print(FILE *f, const struct rebuild_runrec *r);

/* Reads and checks a gate file; 0, or 2 after a diagnostic. */
struct fx_gate;
int cli_gate_load(const char *path, struct fx_gate *g);

/*
 * Who judged an exported or verified audit and since when, and the
 * earlier audits its evidence lists (rebuild-audit-evidence(5)): one
 * line each on stdout, nothing for what the record does not say; the
 * JSON form as the members "policy" and "earlier_audits" of w's open
 * object.
 */
struct evidence_summary;
void cli_declared_print(const struct evidence_summary *sum);
void cli_declared_json(struct rba_json_w *w, const struct evidence_summary *sum);

/* Handlers, in the order of the table in main.c (alphabetical). */
int cmd_audit(struct cli_ctx *, int, char **);
int cmd_bisect(struct cli_ctx *, int, char **);
int cmd_check(struct cli_ctx *, int, char **);
int cmd_compare(struct cli_ctx *, int, char **);
int cmd_diff(struct cli_ctx *, int, char **);
int cmd_dispute(struct cli_ctx *, int, char **);
int cmd_env(struct cli_ctx *, int, char **);
int cmd_evaluate(struct cli_ctx *, int, char **);
int cmd_export(struct cli_ctx *, int, char **);
int cmd_gate(struct cli_ctx *, int, char **);
int cmd_history(struct cli_ctx *, int, char **);
/* history's log subcommands (vkey, checkpoint, cosign, prove,
 * consistency, watch): cmd_history_log.c. */
int cmd_history_log(struct cli_ctx *ctx, int argc, char **argv);
int cmd_init(struct cli_ctx *, int, char **);
int cmd_keygen(struct cli_ctx *, int, char **);
int cmd_policy(struct cli_ctx *, int, char **);
int cmd_register(struct cli_ctx *, int, char **);
int cmd_runs(struct cli_ctx *, int, char **);
int cmd_sample(struct cli_ctx *, int, char **);
int cmd_score(struct cli_ctx *, int, char **);
int cmd_snapshot(struct cli_ctx *, int, char **);
int cmd_store(struct cli_ctx *, int, char **);
int cmd_sweep(struct cli_ctx *, int, char **);
int cmd_train(struct cli_ctx *, int, char **);
int cmd_report(struct cli_ctx *, int, char **);
int cmd_vary(struct cli_ctx *, int, char **);
int cmd_verify(struct cli_ctx *, int, char **);
int cmd_version(struct cli_ctx *, int, char **);

#endif
