/*
 * cmd_score.c - score: score cases with an artifact file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/digest.h"
#include "policy/policy.h"
#include "rebuild/artifact.h"
#include "rebuild/csv.h"
#include "rebuild/encode.h"
#include "rebuild/rebuild.h"

static void
print_score_row(struct cli_ctx *ctx, const struct artifact *a,
		const struct policy *pol, const char *id, const float *probs,
		int first)
{
	const struct encode_spec *s = &a->spec;
	const char *decision = NULL;
	double dp[REBUILD_MAX_CLASSES];

	if (pol != NULL && pol->argmax) {
		for (uint32_t c = 0; c < s->nclasses; c++)
			dp[c] = probs[c];
		size_t k = policy_decide_argmax(pol, dp, s->nclasses, NULL);
		decision = k < s->nclasses ? s->classes[k] : NULL;
	} else if (pol != NULL) {
		decision = policy_decide(pol, probs[s->positive], NULL);
	}
	if (ctx->json) {
		fputs(first ? "\n    {\"id\": " : ",\n    {\"id\": ", stdout);
		rba_json_fput_str(stdout, id);
		if (s->positive != ENCODE_NO_POSITIVE)
			printf(", \"score\": %.9g", (double)probs[s->positive]);
		fputs(", \"probabilities\": {", stdout);
		for (uint32_t c = 0; c < s->nclasses; c++) {
			fputs(c ? ", " : "", stdout);
			rba_json_fput_str(stdout, s->classes[c]);
			printf(": %.9g", (double)probs[c]);
		}
		fputc('}', stdout);
		if (pol != NULL) {
			fputs(", \"decision\": ", stdout);
			if (decision)
				rba_json_fput_str(stdout, decision);
			else
				fputs("null", stdout);
		}
		fputc('}', stdout);
		return;
	}
	/* CSV: ids and decisions are quoted when they need it. */
	if (strpbrk(id, ",\"\r\n") != NULL) {
		putchar('"');
		for (const char *q = id; *q; q++) {
			if (*q == '"')
				putchar('"');
			putchar(*q);
		}
		putchar('"');
	} else {
		fputs(id, stdout);
	}
	if (s->positive != ENCODE_NO_POSITIVE)
		printf(",%.9g", (double)probs[s->positive]);
	else
		for (uint32_t c = 0; c < s->nclasses; c++)
			printf(",%.9g", (double)probs[c]);
	if (pol != NULL)
		printf(",%s", decision ? decision : "");
	putchar('\n');
}

int
cmd_score(struct cli_ctx *ctx, int argc, char **argv)
{
	const char *art_path = NULL, *cases_path = NULL, *pol_path = NULL;
	const char *id_col = NULL, *v;
	struct artifact a;
	struct rba_digest dg;
	struct rba_detail d;
	struct csv_table *t = NULL;
	struct policy *pol = NULL;
	float *x = NULL, *probs = NULL;
	long idc = -1;
	char hex[RBA_DIGEST_TEXT_LEN + 1], rowid[32];
	int r, err, status = 2;

	memset(&a, 0, sizeof(a));
	for (int i = 1; i < argc; i++) {
		if ((r = cli_opt_value(argc, argv, &i, "--policy", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--policy needs a file");
			pol_path = v;
		} else if ((r = cli_opt_value(argc, argv, &i, "--id-column", &v)) != 0) {
			if (r < 0)
				return cli_usage(ctx, "--id-column needs a name");
			id_col = v;
		} else if (strcmp(argv[i], "--json") == 0) {
			ctx->json = 1;
		} else if (argv[i][0] == '-' && argv[i][1] != 0) {
			return cli_usage(ctx, "unknown option '%s'", argv[i]);
		} else if (art_path == NULL) {
			art_path = argv[i];
		} else if (cases_path == NULL) {
			cases_path = argv[i];
		} else {
			return cli_usage(ctx, "too many arguments");
		}
	}
	if (art_path == NULL || cases_path == NULL)
		return cli_usage(ctx, "needs an artifact and a cases file");
	rba_detail_clear(&d);
	if ((err = artifact_load(art_path, &a, &dg, &d)) != 0)
		return cli_fail("cannot load artifact", art_path, err, &d);
	rba_digest_format(&dg, hex);
	if (pol_path != NULL) {
		rba_detail_clear(&d);
		if ((err = policy_load(pol_path, &pol, &d)) != 0) {
			status = cli_fail("invalid policy", pol_path, err, &d);
			goto done;
		}
		if (!pol->argmax && a.spec.positive == ENCODE_NO_POSITIVE) {
			rba_fail(&d, RBA_E_SCHEMA, NULL, 0, 0,
				 "decision bands need a model with a positive "
				 "class; this one has none (use decision: "
				 "{rule: argmax})");
			status = cli_fail("cannot score", pol_path, RBA_E_SCHEMA,
					  &d);
			goto done;
		}
	}
	rba_detail_clear(&d);
	if ((err = csv_table_load(cases_path, &t, &d)) != 0) {
		status = cli_fail("cannot read cases", cases_path, err, &d);
		goto done;
	}
	if (id_col != NULL) {
		idc = csv_table_col(t, id_col);
		if (idc < 0) {
			rba_fail(&d, RBA_E_SCHEMA, NULL, 0, 0,
				 "no column '%s' for --id-column", id_col);
			status = cli_fail("cannot score", cases_path,
					  RBA_E_SCHEMA, &d);
			goto done;
		}
	} else {
		idc = csv_table_col(t, "id");
	}
	x = malloc(t->nrows * a.spec.nfeatures * sizeof(float) + 1);
	probs = malloc(t->nrows * a.spec.nclasses * sizeof(float) + 1);
	if (x == NULL || probs == NULL) {
		status = cli_fail("cannot score", cases_path, RBA_E_NOMEM, NULL);
		goto done;
	}
	rba_detail_clear(&d);
	if ((err = encode_table(&a.spec, t, x, &d)) != 0) {
		status = cli_fail("cannot score", cases_path, err, &d);
		goto done;
	}
	if ((err = artifact_score(&a, x, t->nrows, probs)) != 0) {
		status = cli_fail("cannot score", cases_path, err, NULL);
		goto done;
	}
	if (ctx->json) {
		printf("{\"artifact\": \"%s\", \"cases\": [", hex);
	} else {
		fputs(idc >= 0 ? t->names[idc] : "row", stdout);
		if (a.spec.positive != ENCODE_NO_POSITIVE)
			fputs(",score", stdout);
		else
			for (uint32_t c = 0; c < a.spec.nclasses; c++)
				printf(",p_%s", a.spec.classes[c]);
		if (pol != NULL)
			fputs(",decision", stdout);
		putchar('\n');
	}
	for (size_t i = 0; i < t->nrows; i++) {
		const char *id = rowid;
		if (idc >= 0)
			id = csv_table_cell(t, i, (size_t)idc);
		else
			snprintf(rowid, sizeof(rowid), "%zu", i + 1);
		print_score_row(ctx, &a, pol, id, probs + i * a.spec.nclasses,
				i == 0);
	}
	if (ctx->json)
		fputs("\n  ]}\n", stdout);
	status = 0;
done:
	free(x);
	free(probs);
	csv_table_free(t);
	policy_free(pol);
	artifact_release(&a);
	return status;
}
