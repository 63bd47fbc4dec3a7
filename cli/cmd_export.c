/*
 * cmd_export.c - rebuild-audit export: a signed, self-contained evidence
 * file of one audit (evidence/evidence.h, rebuild-audit-evidence(5)).
 *
 *   export VERSION -k KEY -o FILE [--audit ID|latest]
 *          [--passphrase-file F] [--include-inputs] [--cases] [--dsse]
 *          [--force]
 *
 * --dsse: FILE is a DSSE envelope of the statement (common/dsse.h), its
 * own signature; no FILE.minisig.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dsse.h"
#include "evidence/checkpoint.h"
#include "evidence/evidence.h"
#include "common/sign.h"
#include "cli/commands.h"
#include "evidence/vary_evidence.h"

/* "latest" is 0; an id is 1..2^63. */
static int
parse_audit_id(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (strcmp(s, "latest") == 0) {
		*out = 0;
		return 0;
	}
	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0 || v > INT64_MAX)
		return -1;
	*out = v;
	return 0;
}

/* export --json: what was written. */
static int
export_json(const char *out, int dsse, const struct evidence_result *res)
{
	char sigpath[EVIDENCE_PATH_MAX + 16];
	struct rba_buf b;
	struct rba_json_w w;

	snprintf(sigpath, sizeof(sigpath), "%s%s", out, EVIDENCE_SIG_SUFFIX);
	cli_json_begin(&w, &b);
	rba_json_w_str(&w, "file", out);
	rba_json_w_str(&w, "signature", dsse ? NULL : sigpath);
	if (dsse) {
		rba_json_w_str(&w, "envelope", "dsse");
		rba_json_w_str(&w, "payload_type", DSSE_TYPE_INTOTO);
	}
	rba_json_w_digest(&w, "digest", &res->file_digest, 1);
	rba_json_w_u64(&w, "size", res->size);
	rba_json_w_str(&w, "version", res->sum.version);
	rba_json_w_u64(&w, "audit_id", res->sum.audit_id);
	rba_json_w_str(&w, "time", res->sum.time_text);
	rba_json_w_str(&w, "verdict", res->sum.verdict);
	rba_json_w_bool(&w, "inputs_included", res->sum.inputs_included);
	rba_json_w_str(&w, "trusted_comment", dsse ? NULL : res->trusted_comment);
	rba_json_w_open(&w, "history_head", '{');
	rba_json_w_u64(&w, "id", res->sum.head_id);
	rba_json_w_digest(&w, "digest", &res->sum.head, 1);
	rba_json_w_close(&w, '}');
	cli_declared_json(&w, &res->sum);
	if (res->sum.log.present) {
		rba_json_w_open(&w, "log", '{');
		rba_json_w_str(&w, "origin", res->sum.log.origin);
		rba_json_w_u64(&w, "tree_size", res->sum.log.tree_size);
		rba_json_w_u64(&w, "index", res->sum.log.index);
		rba_json_w_close(&w, '}');
	}
	rba_json_w_close(&w, '}');
	return cli_json_print(&b);
}

/* What export wrote, as text or JSON: 0, or 2 after a diagnostic. */
static int
export_print(struct cli_ctx *ctx, const char *out, int dsse,
	     const struct evidence_result *res)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1], head[RBA_DIGEST_TEXT_LEN + 1];

	rba_digest_format(&res->file_digest, hex);
	rba_digest_format(&res->sum.head, head);
	if (ctx->json) {
		return export_json(out, dsse, res);
	} else if (!ctx->quiet) {
		printf("evidence: %s (%zu bytes, %s)\n", out, res->size, hex);
		if (dsse)
			printf("signature: in the file, a DSSE envelope (payloadType "
			       DSSE_TYPE_INTOTO ")\n");
		else
			printf("signature: %s%s\n", out, EVIDENCE_SIG_SUFFIX);
		printf("audit %llu of version %s at %s: %s%s\n",
		       (unsigned long long)res->sum.audit_id, res->sum.version,
		       res->sum.time_text, res->sum.verdict,
		       res->sum.ad_hoc == 1 ? ", ad hoc" : "");
		printf("guarantee: %s\n", res->sum.guarantee);
		cli_declared_print(&res->sum);
		printf("history head: record %llu, %s\n",
		       (unsigned long long)res->sum.head_id, head);
		if (res->sum.log.present)
			printf("log: the checkpoint of %llu records of %s, and the "
			       "inclusion proof of record %llu in it\n",
			       (unsigned long long)res->sum.log.tree_size,
			       res->sum.log.origin,
			       (unsigned long long)res->sum.log.index + 1);
	}
	return 0;
}

/* export --vary: the newest variation report of version, or --run. */
static int
export_vary(struct cli_ctx *ctx, const char *version, const char *run,
	    const char *keypath, const char *passfile, const char *out,
	    int force, int audit_options)
{
	struct vary_evidence_summary s;
	struct sign_seckey *key = NULL;
	struct rba_detail d;
	int err;

	if (audit_options)
		return cli_usage(ctx, "--vary exports a variation report: --audit, "
				 "--cases, --include-inputs, --origin and --checkpoint "
				 "are for audit evidence");
	if ((err = cli_seckey_load(keypath, passfile, &key)) != 0)
		return err;
	if ((err = cli_store_open(ctx, 1)) != 0) {
		sign_seckey_free(key);
		return err;
	}
	rba_detail_clear(&d);
	err = vary_evidence_export(ctx->store, version, run, key, out, force, &s, &d);
	sign_seckey_free(key);
	if (err)
		return cli_fail("cannot export", d.file[0] ? d.file : version, err, &d);
	if (ctx->json) {
		struct rba_buf b;
		struct rba_json_w w;
		cli_json_begin(&w, &b);
		rba_json_w_str(&w, "evidence", out);
		rba_json_w_str(&w, "kind", "vary");
		rba_json_w_str(&w, "version", s.version);
		rba_json_w_str(&w, "run", s.run);
		rba_json_w_u64(&w, "factors", s.factors);
		rba_json_w_u64(&w, "changed", s.changed);
		rba_json_w_close(&w, '}');
		return cli_json_print(&b);
	} else if (!ctx->quiet) {
		fputs("exported variation evidence of ", stdout);
		cli_fput_data(stdout, s.version, strlen(s.version));
		printf(" (run %s): %llu of %llu factors change the artifact\n", s.run,
		       (unsigned long long)s.changed, (unsigned long long)s.factors);
		fputs("evidence      ", stdout);
		cli_fput_data(stdout, out, strlen(out));
		fputs("\nsignature     ", stdout);
		cli_fput_data(stdout, out, strlen(out));
		fputs(".minisig\n", stdout);
	}
	return 0;
}

/* The options and operands of export. */
struct export_opts {
	const char *version, *keypath, *out;
	const char *audit, *passfile, *ckpath;
	const char *vary_run;
	int vary;
};

/* argv into *o and the request's flags: 0, or the exit status of a
 * usage error. */
static int
export_args(struct cli_ctx *ctx, int argc, char **argv, struct export_opts *o,
	    struct evidence_request *rq)
{
	int i, r, opts = 1;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (opts && strcmp(a, "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && ((r = cli_opt_value(argc, argv, &i, "-k", &o->keypath)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "-o", &o->out)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--audit", &o->audit)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--passphrase-file",
					     &o->passfile)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--origin", &rq->origin)) != 0 ||
			     (r = cli_opt_value(argc, argv, &i, "--checkpoint",
					     &o->ckpath)) != 0)) {
			if (r < 0)
				return cli_usage(ctx, "option '%s' needs a value", a);
			continue;
		}
		if (opts && strcmp(a, "--vary") == 0) {
			o->vary = 1;
			continue;
		}
		if (opts && (r = cli_opt_value(argc, argv, &i, "--run", &o->vary_run)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "option '%s' needs a value", a);
			o->vary = 1;
			continue;
		}
		if (opts && strcmp(a, "--cases") == 0) {
			rq->include_cases = 1;
			continue;
		}
		if (opts && strcmp(a, "--include-inputs") == 0) {
			rq->include_inputs = 1;
			continue;
		}
		if (opts && strcmp(a, "--force") == 0) {
			rq->force = 1;
			continue;
		}
		if (opts && strcmp(a, "--dsse") == 0) {
			rq->dsse = 1;
			continue;
		}
		if (opts && a[0] == '-' && a[1] != '\0')
			return cli_usage(ctx, "unknown option '%s'", a);
		if (o->version != NULL)
			return cli_usage(ctx, "unexpected argument '%s'", a);
		o->version = a;
	}
	if (o->version == NULL)
		return cli_usage(ctx, "VERSION is required");
	if (o->keypath == NULL)
		return cli_usage(ctx, "-k KEY is required");
	if (o->out == NULL || o->out[0] == '\0')
		return cli_usage(ctx, "-o FILE is required");
	if (o->vary && rq->dsse)
		return cli_usage(ctx, "--dsse wraps audit evidence; --vary writes a "
				 "minisign pair");
	return 0;
}

/* What only audit evidence takes: the record (--audit), the origin of
 * the checkpoint export makes, or the checkpoint given (read into *ck).
 * 0, or the exit status. */
static int
export_audit_args(struct cli_ctx *ctx, const struct export_opts *o,
		  struct evidence_request *rq, struct checkpoint *ck)
{
	struct rba_detail d;
	int err;

	if (parse_audit_id(o->audit, &rq->audit_id) != 0)
		return cli_usage(ctx, "--audit takes a record id or 'latest', not '%s'",
				 o->audit);

	if (rq->origin != NULL && o->ckpath != NULL)
		return cli_usage(ctx, "--origin names the checkpoint export makes; "
				 "--checkpoint CK has its own");
	if (rq->origin != NULL && !note_name_valid(rq->origin, strlen(rq->origin)))
		return cli_usage(ctx, "--origin '%s' is not a key name (non-empty, no "
				 "spaces or '+')", rq->origin);
	if (o->ckpath != NULL) {
		rba_detail_clear(&d);
		if ((err = checkpoint_read(o->ckpath, ck, &d)) != 0)
			return cli_fail("cannot read checkpoint", o->ckpath, err, &d);
		rq->checkpoint = ck;
	}
	return 0;
}

int
cmd_export(struct cli_ctx *ctx, int argc, char **argv)
{
	struct export_opts o;
	struct checkpoint ck;
	struct evidence_request rq;
	struct evidence_result *res = NULL;
	struct sign_seckey *key = NULL;
	struct rba_detail d;
	int err, status = 2;

	memset(&o, 0, sizeof(o));
	o.audit = "latest";
	memset(&rq, 0, sizeof(rq));
	memset(&ck, 0, sizeof(ck));
	if (cli_wants_help(ctx, argc, argv))
		return 0;
	if ((err = export_args(ctx, argc, argv, &o, &rq)) != 0)
		return err;
	if (o.vary)
		return export_vary(ctx, o.version, o.vary_run, o.keypath, o.passfile,
				   o.out, rq.force,
				   rq.include_cases || rq.include_inputs ||
					   strcmp(o.audit, "latest") != 0 ||
					   rq.origin != NULL || o.ckpath != NULL);
	if ((err = export_audit_args(ctx, &o, &rq, &ck)) != 0)
		return err;
	/* The key first: a wrong passphrase costs no store work. */
	if ((err = cli_seckey_load(o.keypath, o.passfile, &key)) != 0) {
		checkpoint_release(&ck);
		return err;
	}
	if ((err = cli_store_open(ctx, 1)) != 0)
		goto out;

	res = malloc(sizeof(*res));
	if (res == NULL) {
		status = cli_fail("cannot export", o.version, RBA_E_NOMEM, NULL);
		goto out;
	}
	rq.version = o.version;
	rq.key = key;
	rq.path = o.out;
	rba_detail_clear(&d);
	err = evidence_export(ctx->store, &rq, res, &d);
	if (err != 0) {
		const char *subject = d.file[0] ? d.file : o.version;
		status = cli_fail("cannot export", subject, err, &d);
		goto out;
	}

	status = export_print(ctx, o.out, rq.dsse, res);
out:
	free(res);
	sign_seckey_free(key);
	checkpoint_release(&ck);
	return status;
}
