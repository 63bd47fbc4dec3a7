/*
 * cmd_report.c - report: the HTML page of a signed evidence file, made
 * after the file is verified (evidence/evidence.h, report/report.h).
 *
 *   report FILE -o OUT -p PUB [-x SIGFILE] [--unverified] [--force]
 *   report --store --history -o OUT [--force]
 *
 * Exit 0: the page is written; 1: the file does not verify (nothing
 * written) unless --unverified, which writes it with a banner on every
 * page; 2: could not answer (usage, an unreadable file, a file that is
 * not evidence, an output that exists without --force).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/report.h"
#include "evidence/evidence.h"
#include "cli/commands.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/fileio.h"
#include "common/dsse.h"
#include "common/sign.h"

struct report_args {
	const char *file, *out, *pub, *sig;
	int unverified, force, store, history;
};

static int
report_parse(struct cli_ctx *ctx, int argc, char **argv, struct report_args *a)
{
	int r, opts = 1;

	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (opts && strcmp(s, "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && ((r = cli_opt_value(argc, argv, &i, "-p", &a->pub)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "-x", &a->sig)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "-o", &a->out)) != 0)) {
			if (r < 0)
				return cli_usage(ctx, "option '%s' needs a value", s);
			continue;
		}
		if (opts && strcmp(s, "--unverified") == 0) {
			a->unverified = 1;
			continue;
		}
		if (opts && strcmp(s, "--force") == 0) {
			a->force = 1;
			continue;
		}
		if (opts && strcmp(s, "--store") == 0) {
			a->store = 1;
			continue;
		}
		if (opts && strcmp(s, "--history") == 0) {
			a->history = 1;
			continue;
		}
		if (opts && s[0] == '-' && s[1] != '\0')
			return cli_usage(ctx, "unknown option '%s'", s);
		if (a->file != NULL)
			return cli_usage(ctx, "unexpected argument '%s'", s);
		a->file = s;
	}
	if (a->store || a->history) {
		if (!a->store || !a->history)
			return cli_usage(ctx, "--store and --history go together");
		if (a->file != NULL || a->pub != NULL || a->sig != NULL || a->unverified)
			return cli_usage(ctx, "--store --history takes no FILE, -p, -x "
					 "or --unverified");
		if (a->out == NULL)
			return cli_usage(ctx, "-o OUT is required");
		return 0;
	}
	if (a->file == NULL)
		return cli_usage(ctx, "FILE is required");
	if (a->out == NULL)
		return cli_usage(ctx, "-o OUT is required");
	if (a->pub == NULL && !a->unverified)
		return cli_usage(ctx, "-p PUB is required (or --unverified)");
	return 0;
}

/*
 * Verifies the file as `verify` does.  Returns 0 with src->verified set
 * (and src->not_verified, in why, when not), 1 when it does not verify
 * and --unverified was not given, 2 after a diagnostic.
 */
static int
report_verify(const struct report_args *a, const uint8_t *msg, size_t n,
	      struct report_source *src, struct evidence_log_summary *log,
	      char *why, size_t whycap)
{
	char defsig[4200];
	const char *sigpath = a->sig;
	struct evidence_verification *v = NULL;
	struct sign_pubkey pub;
	struct rba_detail d;
	uint8_t *sig = NULL;
	size_t sn = 0;
	int err, status = 2;

	src->verified = 0;
	if (a->pub == NULL) {
		snprintf(why, whycap, "no public key was given");
		src->not_verified = why;
		return 0;
	}
	if (sigpath == NULL) {
		if ((size_t)snprintf(defsig, sizeof(defsig), "%s.minisig", a->file) >=
		    sizeof(defsig))
			return cli_fail("cannot verify", a->file, ENAMETOOLONG, NULL);
		sigpath = defsig;
	}
	rba_detail_clear(&d);
	if ((err = sign_pubkey_load(a->pub, &pub, &d)) != 0)
		return cli_fail("cannot read public key", a->pub, err, &d);
	rba_detail_clear(&d);
	err = rba_file_read(sigpath, SIGN_SIGFILE_MAX, &sig, &sn, &d);
	if (err != 0) {
		snprintf(why, whycap, "cannot read signature '%s': %s", sigpath,
			 err == RBA_E_LIMIT ? "too large" : rba_strerror(err));
		goto not_verified;
	}
	if ((v = malloc(sizeof(*v))) == NULL) {
		free(sig);
		return cli_fail("cannot verify", a->file, RBA_E_NOMEM, NULL);
	}
	err = evidence_verify(&pub, msg, n, sig, sn, sigpath, v, &d);
	if (err != 0) {
		snprintf(why, whycap, "%s: %s",
			 v->signature_ok ? "cannot check evidence" : "cannot verify",
			 d.reason[0] ? d.reason : rba_strerror(err));
		goto not_verified;
	}
	if (!v->valid) {
		snprintf(why, whycap, "%s: %s", v->failed, v->reason);
		goto not_verified;
	}
	if (v->kind != EVIDENCE_KIND_AUDIT && v->kind != EVIDENCE_KIND_DISPUTE &&
	    v->kind != EVIDENCE_KIND_VARY) {
		cli_diag("cannot report '%s': not rebuild-audit evidence (a "
			 "signed file of another kind)", a->file);
		goto out;
	}
	src->verified = 1;
	sign_keyid_format(v->sig.keyid, src->key_id);
	if (v->kind == EVIDENCE_KIND_AUDIT && v->audit.log.present) {
		*log = v->audit.log;
		src->log = log;
	}
	status = 0;
	goto out;
not_verified:
	if (v != NULL && v->signature_ok)
		sign_keyid_format(v->sig.keyid, src->key_id);
	src->not_verified = why;
	if (a->unverified) {
		status = 0;
	} else {
		cli_diag("verification failed '%s': %s", a->file, why);
		status = 1;
	}
out:
	free(v);
	free(sig);
	return status;
}

/*
 * report_verify for a DSSE envelope (export --dsse): the envelope
 * checked with -p PUB as verify checks it, its statement in *doc (*dn
 * bytes, malloc'd; the caller frees it) to draw.  Unverified (no key,
 * or --unverified after a failed check) the statement is still read
 * from the envelope.  0, 1 (not verified and no --unverified), or 2
 * after a diagnostic (an envelope that cannot be read).
 */
static int
report_verify_dsse(const struct report_args *a, const uint8_t *msg, size_t n,
		   struct report_source *src, struct evidence_log_summary *log,
		   char *why, size_t whycap, uint8_t **doc, size_t *dn)
{
	struct evidence_verification *v = NULL;
	struct dsse_envelope e;
	struct sign_pubkey pub;
	struct rba_detail d;
	int err, status = 2;

	src->verified = 0;
	*doc = NULL;
	*dn = 0;
	if (a->sig != NULL) {
		cli_diag("cannot report '%s': a DSSE envelope carries its signature: "
			 "no -x", a->file);
		return 2;
	}
	if (a->pub == NULL) {
		snprintf(why, whycap, "no public key was given");
		goto not_verified;
	}
	rba_detail_clear(&d);
	if ((err = sign_pubkey_load(a->pub, &pub, &d)) != 0)
		return cli_fail("cannot read public key", a->pub, err, &d);
	if ((v = malloc(sizeof(*v))) == NULL)
		return cli_fail("cannot verify", a->file, RBA_E_NOMEM, NULL);
	err = evidence_verify_dsse(&pub, 1, msg, n, doc, dn, v, &d);
	if (err != 0) {
		snprintf(why, whycap, "%s: %s",
			 v->signature_ok ? "cannot check evidence" : "cannot verify",
			 d.reason[0] ? d.reason : rba_strerror(err));
		goto not_verified;
	}
	if (!v->valid) {
		snprintf(why, whycap, "%s: %s", v->failed, v->reason);
		goto not_verified;
	}
	src->verified = 1;
	sign_keyid_format(v->sig.keyid, src->key_id);
	if (v->kind == EVIDENCE_KIND_AUDIT && v->audit.log.present) {
		*log = v->audit.log;
		src->log = log;
	}
	free(v);
	return 0;
not_verified:
	if (v != NULL && v->signature_ok)
		sign_keyid_format(v->sig.keyid, src->key_id);
	free(v);
	src->not_verified = why;
	if (!a->unverified) {
		cli_diag("verification failed '%s': %s", a->file, why);
		return 1;
	}
	/* the statement as the envelope holds it, unverified */
	if (*doc == NULL) {
		rba_detail_clear(&d);
		if ((err = dsse_envelope_parse(msg, n, &e, &d)) != 0)
			return cli_fail("cannot report", a->file, err, &d);
		*doc = e.payload;
		*dn = e.n;
		e.payload = NULL;
		dsse_envelope_release(&e);
	}
	status = 0;
	return status;
}

/* report --store --history: the page of the store's history. */
static int
report_history(struct cli_ctx *ctx, const struct report_args *a)
{
	struct rba_buf page;
	struct rba_detail d;
	int err;

	if ((err = cli_store_open(ctx, 1)) != 0)
		return err;
	rba_buf_init(&page);
	rba_detail_clear(&d);
	if ((err = report_history_html(ctx->store, (int64_t)time(NULL), &page, &d)) != 0) {
		rba_buf_release(&page);
		return cli_fail("cannot report the history of", ctx->store_path, err, &d);
	}
	rba_detail_clear(&d);
	err = rba_file_write_output(a->out, page.p, page.len, 0644,
				    a->force ? RBA_OUTPUT_FORCE : 0, stdout, &d);
	if (err != 0) {
		rba_buf_release(&page);
		if (strcmp(a->out, "-") == 0 && cli_stdout_gone(err))
			return 2;
		return cli_fail("cannot write", a->out, err, &d);
	}
	if (ctx->json && strcmp(a->out, "-") != 0) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "report", a->out);
		rba_json_w_u64(&w, "bytes", page.len);
		rba_json_w_str(&w, "kind", "history");
		rba_json_w_str(&w, "store", ctx->store_path);
		rba_json_w_close(&w, '}');
		rba_buf_release(&page);
		return cli_json_print(&b);
	} else if (!ctx->quiet && strcmp(a->out, "-") != 0) {
		printf("report: %s (%zu bytes) from the history of store '%s'\n",
		       a->out, page.len, ctx->store_path);
	}
	rba_buf_release(&page);
	return 0;
}

/* report FILE --json: what was written from which evidence. */
static int
report_json(const struct report_args *a, const struct report_source *src,
	    size_t bytes, const char *kind, const char *why)
{
	struct rba_buf b;
	struct rba_json_w w;

	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "report", a->out);
	rba_json_w_u64(&w, "bytes", bytes);
	rba_json_w_str(&w, "kind", kind);
	rba_json_w_str(&w, "evidence", a->file);
	rba_json_w_str(&w, "digest", src->digest);
	rba_json_w_bool(&w, "verified", src->verified);
	if (src->verified)
		rba_json_w_str(&w, "key_id", src->key_id);
	else
		rba_json_w_str(&w, "reason", why);
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

int
cmd_report(struct cli_ctx *ctx, int argc, char **argv)
{
	struct report_args a = { 0 };
	struct report_source src;
	struct evidence_log_summary log;
	struct rba_detail d;
	struct rba_digest dg;
	struct rba_buf page;
	enum report_kind kind = REPORT_KIND_NONE;
	const char *kname;
	char why[4200 + EVIDENCE_REASON_MAX + 400];
	uint8_t *msg = NULL, *doc = NULL;
	size_t n = 0, dn = 0;
	int err, status;

	if (cli_wants_help(ctx, argc, argv))
		return 0;
	if ((status = report_parse(ctx, argc, argv, &a)) != 0)
		return status;
	rba_detail_clear(&d);
	/* the output rule first: an existing file only with --force */
	if (strcmp(a.out, "-") != 0 &&
	    (err = rba_output_check(a.out, a.force ? RBA_OUTPUT_FORCE : 0, &d)) != 0)
		return cli_fail("cannot write", a.out, err, &d);
	if (a.store)
		return report_history(ctx, &a);
	rba_detail_clear(&d);
	if ((err = rba_file_read(a.file, EVIDENCE_MAX_BYTES, &msg, &n, &d)) != 0)
		return cli_fail("cannot read", a.file, err, NULL);
	memset(&src, 0, sizeof(src));
	src.file = a.file;
	rba_digest_bytes(msg, n, &dg);
	rba_digest_format(&dg, src.digest);
	if (dsse_is_envelope(msg, n)) {
		/* the statement inside is what the page draws; the digest
		 * on every page stays the file's */
		if ((status = report_verify_dsse(&a, msg, n, &src, &log, why,
						 sizeof(why), &doc, &dn)) != 0)
			goto out;
	} else if ((status = report_verify(&a, msg, n, &src, &log, why,
					   sizeof(why))) != 0) {
		goto out;
	}
	rba_buf_init(&page);
	rba_detail_clear(&d);
	err = report_evidence_html(doc != NULL ? doc : msg, doc != NULL ? dn : n,
				   &src, &page, &kind, &d);
	if (err != 0) {
		status = cli_fail("cannot report", a.file, err, &d);
		rba_buf_release(&page);
		goto out;
	}
	rba_detail_clear(&d);
	err = rba_file_write_output(a.out, page.p, page.len, 0644,
				    a.force ? RBA_OUTPUT_FORCE : 0, stdout, &d);
	if (err != 0) {
		status = strcmp(a.out, "-") == 0 && cli_stdout_gone(err) ? 2 :
			 cli_fail("cannot write", a.out, err, &d);
		rba_buf_release(&page);
		goto out;
	}
	kname = kind == REPORT_KIND_AUDIT ? "audit"
		: kind == REPORT_KIND_VARY ? "variation" : "dispute";
	status = 0;
	if (ctx->json && strcmp(a.out, "-") != 0)
		status = report_json(&a, &src, page.len, kname, why);
	else if (!ctx->quiet && strcmp(a.out, "-") != 0)
		printf("report: %s (%zu bytes) from %s evidence '%s' (%s), %s%s\n",
		       a.out, page.len, kname, a.file, src.digest,
		       src.verified ? "verified with key " : "NOT VERIFIED: ",
		       src.verified ? src.key_id : why);
	rba_buf_release(&page);
out:
	free(msg);
	free(doc);
	return status;
}
