/*
 * cli_common.c - what several handlers share: diagnostics, usage, option
 * values, JSON strings, store opening, policy loading, and the number,
 * size and digest formats of the text reports.
 */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/sign.h"
#include "cli/commands.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "common/utf8.h"
#include "evidence/evidence.h"
#include "policy/policy.h"
#include "train/trainer.h"
#include "store/store.h"

int
cli_fail(const char *what, const char *subject, int err,
	 const struct rba_detail *d)
{
	const char *reason = rba_strerror(err);
	char subj[700], low[400];

	if (d != NULL && d->reason[0])
		reason = d->reason;
	/* Diagnostics are lower case: "No such file" from strerror too, but
	 * leave acronyms ("LMDB ...") alone. */
	if (reason[0] >= 'A' && reason[0] <= 'Z' && reason[1] >= 'a' &&
	    reason[1] <= 'z') {
		snprintf(low, sizeof(low), "%s", reason);
		low[0] = (char)(low[0] - 'A' + 'a');
		reason = low;
	}
	if (d != NULL && d->line > 0) {
		const char *file = d->file[0] ? d->file : subject;
		if (d->col > 0)
			snprintf(subj, sizeof(subj), "%s:%lu:%lu", file, d->line, d->col);
		else
			snprintf(subj, sizeof(subj), "%s:%lu", file, d->line);
		subject = subj;
	}
	fputs("rebuild-audit: ", stderr);
	cli_put_data(stderr, what);
	fputs(" '", stderr);
	cli_put_data(stderr, subject);
	fputs("': ", stderr);
	if (err == RBA_E_TAMPERED && strstr(reason, "tamper") == NULL)
		fputs("tampered: ", stderr);
	cli_put_data(stderr, reason);
	fputc('\n', stderr);
	return 2;
}

/* The formatted text of fmt and ap through the escaping rule. */
static void
put_formatted(FILE *f, const char *fmt, va_list ap)
{
	char small[1024], *text = small;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(small) && (text = malloc((size_t)n + 1)) != NULL)
		vsnprintf(text, (size_t)n + 1, fmt, ap);
	else if (text == NULL)
		text = small; /* cut short rather than not said */
	cli_put_data(f, text);
	if (text != small)
		free(text);
}

void
cli_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("rebuild-audit: warning: ", stderr);
	va_start(ap, fmt);
	put_formatted(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
cli_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("rebuild-audit: ", stderr);
	va_start(ap, fmt);
	put_formatted(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void
print_usage(FILE *f, const struct cli_command *cmd)
{
	const char *p = cmd->usage;

	fputs("usage: rebuild-audit ", f);
	for (; *p; p++) {
		fputc(*p, f);
		if (*p == '\n' && p[1])
			fputs("       rebuild-audit ", f);
	}
	fputc('\n', f);
}

int
cli_usage(struct cli_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rebuild-audit: bad usage '%s': ", ctx->cmd->name);
	va_start(ap, fmt);
	put_formatted(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_usage(stderr, ctx->cmd);
	return 2;
}

int
cli_help(struct cli_ctx *ctx)
{
	print_usage(stdout, ctx->cmd);
	printf("%s\n", ctx->cmd->summary);
	return 0;
}

int
cli_wants_help(struct cli_ctx *ctx, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			cli_help(ctx);
			return 1;
		}
	}
	return 0;
}

int
cli_seckey_load(const char *keypath, const char *passfile,
		struct sign_seckey **key)
{
	struct rba_detail d;
	char *pass = NULL;
	size_t passlen = 0;
	int err;

	*key = NULL;
	rba_detail_clear(&d);
	if (passfile != NULL &&
	    (err = sign_passphrase_read(passfile, &pass, &passlen, &d)) != 0)
		return cli_fail("cannot read passphrase", passfile, err, &d);
	rba_detail_clear(&d);
	err = sign_seckey_load(keypath, pass, passlen, key, &d);
	sign_passphrase_free(pass);
	if (err != 0) {
		if (err == RBA_E_USAGE && passfile == NULL)
			snprintf(d.reason, sizeof(d.reason),
				 "the key is passphrase-protected: give "
				 "--passphrase-file");
		return cli_fail("cannot read secret key", keypath, err, &d);
	}
	return 0;
}

int
cli_store_open(struct cli_ctx *ctx, int read_only)
{
	struct rba_detail d;
	int err;

	if (ctx->store != NULL)
		return 0;
	rba_detail_clear(&d);
	cli_guard_store("cannot read store", ctx->store_path);
	/* A snapshot made for workers is read without locks, so reading
	 * it leaves no lock file behind; anything else as usual. */
	if (read_only &&
	    store_snapshot_open(ctx->store_path, &ctx->store, NULL, NULL) == 0)
		return 0;
	err = store_open(ctx->store_path, read_only, &ctx->store, &d);
	if (err)
		return cli_fail("cannot open store", ctx->store_path, err, &d);
	return 0;
}

int
cli_txn_begin(struct cli_ctx *ctx, int write, uint64_t size_hint,
	      const char *what, const char *subject, struct store_txn **txn)
{
	struct rba_detail d;
	int err;

	*txn = NULL;
	if ((err = cli_store_open(ctx, !write)) != 0)
		return err;
	rba_detail_clear(&d);
	err = store_txn_begin(ctx->store, write, size_hint, txn, &d);
	if (err)
		return cli_fail(what, subject, err, &d);
	return 0;
}

int
cli_stdout_gone(int err)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };

	if (err == EPIPE)
		return 1;
	/* The error came from an earlier write and nothing was left to
	 * write again: a pipe without a reader says so to poll. */
	return err == 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0;
}

/* An output's failure, by cli_output_open's rule. */
static int
output_fail(const char *what, const char *subject, const char *path, int err,
	    const struct rba_detail *d)
{
	struct rba_detail n;
	char low[sizeof(n.reason)];

	if (strcmp(path, "-") == 0 && cli_stdout_gone(err))
		return 2;
	if (strcmp(subject, path) == 0)
		return cli_fail(what, path, err, d);
	snprintf(low, sizeof(low), "%s",
		 d != NULL && d->reason[0] ? d->reason : rba_strerror(err));
	if (low[0] >= 'A' && low[0] <= 'Z' && low[1] >= 'a' && low[1] <= 'z')
		low[0] = (char)(low[0] - 'A' + 'a');
	rba_detail_clear(&n);
	snprintf(n.reason, sizeof(n.reason), "cannot write '%.200s': %.160s",
		 path, low);
	return cli_fail(what, subject, err, &n);
}

int
cli_output_open(const char *path, int force, FILE *dash, const char *what,
		const char *subject, struct rba_output *o)
{
	struct rba_detail d;
	int err;

	rba_detail_clear(&d);
	err = rba_output_open(o, path, 0644, force ? RBA_OUTPUT_FORCE : 0, dash, &d);
	if (err)
		return output_fail(what, subject, path, err, &d);
	return 0;
}

int
cli_output_finish(struct rba_output *o, int err, const char *what,
		  const char *subject, const struct rba_detail *d)
{
	struct rba_detail cd;
	char path[sizeof(o->path)];
	int werr = o->err;

	snprintf(path, sizeof(path), "%s", o->path);
	if (err != 0) {
		rba_output_abort(o);
		if (werr != 0)
			return output_fail(what, subject, path, werr, NULL);
		return cli_fail(what, subject, err, d);
	}
	rba_detail_clear(&cd);
	if ((err = rba_output_commit(o, &cd)) != 0)
		return output_fail(what, subject, path, err, &cd);
	return 0;
}

int
cli_args_force(struct cli_ctx *ctx, int argc, char **argv, int want,
	       const char **pos, int *force, const char *need)
{
	int n = 0, dashdash = 0;

	*force = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!dashdash && strcmp(a, "--") == 0)
			dashdash = 1;
		else if (!dashdash && strcmp(a, "--force") == 0)
			*force = 1;
		else if (!dashdash && a[0] == '-' && a[1] != '\0')
			return cli_usage(ctx, "unknown option '%s'", a);
		else if (n < want)
			pos[n++] = a;
		else
			return cli_usage(ctx, "%s", need);
	}
	if (n != want)
		return cli_usage(ctx, "%s", need);
	return 0;
}

int
cli_opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0)
		return 0;
	if (a[n] == '\0') {
		if (*i + 1 >= argc)
			return -1;
		*val = argv[++*i];
		return 1;
	}
	if (name[1] == '-' && a[n] == '=') {
		*val = a + n + 1;
		return 1;
	}
	if (name[1] != '-' && n == 2) {
		*val = a + 2;
		return 1;
	}
	return 0;
}

int
cli_policy_load(const char *path, struct policy **out)
{
	struct rba_detail d;
	int err;

	*out = NULL;
	if (path == NULL)
		return 0;
	rba_detail_clear(&d);
	err = policy_load(path, out, &d);
	if (err)
		return cli_fail("invalid policy", path, err, &d);
	return 0;
}

void
cli_json_begin(struct rba_json_w *w, struct rba_buf *b)
{
	rba_buf_init(b);
	rba_json_w_init(w, b);
	rba_json_w_open(w, NULL, '{');
}

int
cli_json_print(struct rba_buf *b)
{
	int err = rba_buf_status(b);

	if (err == 0) {
		fwrite(b->p, 1, b->len, stdout);
		fputc('\n', stdout);
	}
	rba_buf_release(b);
	return err ? cli_fail("cannot write", "stdout", err, NULL) : 0;
}

void
cli_json_w_sep(struct rba_json_w *w, struct rba_buf *b, const char *sep)
{
	rba_buf_put(b, sep, strlen(sep));
	rba_json_w_init(w, b);
}

void
cli_json_w_fmt(struct rba_json_w *w, const char *key, const char *fmt, ...)
{
	char text[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	assert(n >= 0 && (size_t)n < sizeof(text));
	rba_json_w_raw(w, key, text, (size_t)n);
}

size_t
cli_fput_data(FILE *f, const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *)s;
	char out[4 * 256 + 1];
	size_t total = 0;

	while (n > 0) {
		size_t k = n < 256 ? n : 256;
		/* pieces end before a character, never inside one */
		for (int back = 0; k < n && back < 3 && (p[k] & 0xC0) == 0x80; back++)
			k--;
		total += rba_utf8_escape(p, k, f != NULL ? out : NULL,
					 f != NULL ? sizeof(out) : 0);
		if (f != NULL)
			fputs(out, f);
		p += k;
		n -= k;
	}
	return total;
}

size_t
cli_put_data(FILE *f, const char *s)
{
	return s == NULL ? 0 : cli_fput_data(f, s, strlen(s));
}

void
cli_put_data_pad(FILE *f, const char *s, size_t w)
{
	for (size_t have = cli_put_data(f, s); have < w; have++)
		fputc(' ', f);
}

/* When the progress line was last written (one command at a time). */
static double progress_last;

static void
progress_line(const char *unit, uint32_t done, uint32_t total)
{
	double now = rba_time_mono();

	if (done < total && now - progress_last < 0.1)
		return;
	progress_last = now;
	fprintf(stderr, "\rtraining: %s %u/%u", unit, done, total);
	fflush(stderr);
}

static void
progress_epoch(void *ctx, uint32_t done, uint32_t total)
{
	(void)ctx;
	progress_line("epoch", done, total);
}

/* A boosting round: one tree per class group. */
static void
progress_round(void *ctx, uint32_t done, uint32_t total)
{
	(void)ctx;
	progress_line("round", done, total);
}

const struct rebuild_progress *
cli_progress_training(struct cli_ctx *ctx, const struct pins *p,
		      struct rebuild_progress *out)
{
	if (!ctx->progress)
		return NULL;
	progress_last = 0.0;
	out->epoch = p->model.kind == PINS_MODEL_GBDT ? progress_round
						       : progress_epoch;
	out->ctx = NULL;
	return out;
}

void
cli_progress_clear(struct cli_ctx *ctx)
{
	if (ctx->progress)
		fputs("\r\033[K", stderr);
}

/* Six significant digits: for the text reports. */
const char *
cli_fmt_g6(double v, char out[32])
{
	snprintf(out, 32, "%.6g", v);
	return out;
}

/* Shortened digest for text reports ("sha256:9aa79fa530cd86c7"). */
const char *
cli_digest_short(const struct rba_digest *dg, int verbose, char out[RBA_DIGEST_TEXT_LEN + 1])
{
	rba_digest_format(dg, out);
	if (!verbose)
		out[7 + 16] = 0;
	return out;
}

void
cli_fmt_size(uint64_t n, char out[32])
{
	if (n < 10240)
		snprintf(out, 32, "%llu B", (unsigned long long)n);
	else if (n < 10485760)
		snprintf(out, 32, "%.1f KiB", n / 1024.0);
	else
		snprintf(out, 32, "%.1f MiB", n / 1048576.0);
}

void
cli_fmt_size_short(uint64_t n, char out[32])
{
	if (n < 10240)
		snprintf(out, 32, "%lluB", (unsigned long long)n);
	else if (n < 10485760)
		snprintf(out, 32, "%.1fK", n / 1024.0);
	else if (n < 10737418240ull)
		snprintf(out, 32, "%.1fM", n / 1048576.0);
	else
		snprintf(out, 32, "%.1fG", n / 1073741824.0);
}

int
cli_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

int
cli_parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if ((*s < '0' || *s > '9') && !(lo < 0 && *s == '-') && *s != '.')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != 0 || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

/*
 * Who judged the exported audit and since when, and the version's
 * earlier audits the evidence lists (rebuild-audit-evidence(5)), one
 * line each; nothing for what the record does not say.
 */
void
cli_declared_print(const struct evidence_summary *sum)
{
	if (sum->ad_hoc == 1)
		printf("ad hoc: judged by a policy given for this audit, not the "
		       "one declared for the version: not the version's audit\n");
	if (strcmp(sum->judged_by, "version") == 0)
		printf("policy: the version's, declared %s\n", sum->declared_at);
	else if (strcmp(sum->judged_by, "sample") == 0)
		printf("policy: the sample's own, declared %s (the version's is "
		       "looser and was set after the sample)\n", sum->declared_at);
	else if (strcmp(sum->judged_by, "option") == 0 && sum->ad_hoc == 0)
		printf("policy: given for this audit, the one declared %s\n",
		       sum->declared_at);
	if (sum->format >= 2)
		printf("earlier audits %s: %llu listed, %llu did not reproduce or "
		       "did not measure\n",
		       sum->declared_at[0] ? "since the policy was declared"
					   : "of the version",
		       (unsigned long long)sum->earlier,
		       (unsigned long long)sum->earlier_failed);
}

/* The same as JSON members of w's open object. */
void
cli_declared_json(struct rba_json_w *w, const struct evidence_summary *sum)
{
	rba_json_w_open(w, "policy", '{');
	rba_json_w_str(w, "judged_by", sum->judged_by[0] ? sum->judged_by : NULL);
	rba_json_w_str(w, "declared_at",
		       sum->declared_at[0] ? sum->declared_at : NULL);
	if (sum->ad_hoc < 0)
		rba_json_w_str(w, "ad_hoc", NULL);
	else
		rba_json_w_bool(w, "ad_hoc", sum->ad_hoc);
	rba_json_w_close(w, '}');
	if (sum->format < 2) {
		rba_json_w_str(w, "earlier_audits", NULL);
		return;
	}
	rba_json_w_open(w, "earlier_audits", '{');
	rba_json_w_u64(w, "listed", sum->earlier);
	rba_json_w_u64(w, "not_reproduced_or_not_measured", sum->earlier_failed);
	rba_json_w_close(w, '}');
}
