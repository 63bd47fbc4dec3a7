/*
 * pins_diff.c - the differential harness of tests/pins-diff.sh: reads
 * file names, one a line, from standard input, parses each as a pins
 * file and prints everything the parser says outward: the status, the
 * detail (file, line, column, key, reason) and, on success, the
 * canonical text, the config hash, the exec params JSON and the source
 * positions of the record.  Built twice, against two versions of
 * policy/pins.c, so that a rewrite can be compared byte by byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/digest.h"
#include "policy/policy.h"

static void
pos(const char *what, const struct pins_pos *p)
{
	if (p->line != 0 || p->col != 0)
		printf("src %s %lu:%lu\n", what, p->line, p->col);
}

static void
report(const struct pins *p)
{
	char hex[RBA_DIGEST_TEXT_LEN + 1];
	struct rba_digest h;
	struct rba_buf b;
	size_t i;

	rba_buf_init(&b);
	policy_pins_canonical(p, &b);
	printf("canonical %d\n%s", rba_buf_status(&b), rba_buf_cstr(&b));
	rba_buf_release(&b);
	policy_pins_config_hash(p, &h);
	rba_digest_format(&h, hex);
	printf("config %s\n", hex);
	rba_buf_init(&b);
	policy_pins_params_json(p, &b);
	printf("params %s", rba_buf_cstr(&b));
	rba_buf_release(&b);
	printf("file %s\n", p->src.file);
	pos("label", &p->src.label);
	pos("id", &p->src.id);
	pos("positive", &p->src.positive);
	pos("code_revision", &p->src.code_revision);
	pos("environment", &p->src.environment);
	pos("revision", &p->src.revision);
	pos("repository", &p->src.repository);
	pos("command", &p->src.command);
	pos("native_key", &p->src.native_key);
	pos("impute", &p->src.impute);
	for (i = 0; i < PINS_MAX_PARAMS; i++)
		pos("params[]", &p->src.params[i]);
	for (i = 0; i < PINS_MAX_LIST; i++) {
		pos("exclude[]", &p->src.exclude[i]);
		pos("categorical[]", &p->src.categorical[i]);
		pos("native[]", &p->src.native[i]);
	}
}

int
main(void)
{
	char line[4096];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		struct rba_detail d;
		struct pins *p = NULL, *q;
		uint8_t *text;
		size_t n;
		int err;

		line[strcspn(line, "\n")] = 0;
		printf("== %s\n", line);
		memset(&d, 0x5a, sizeof(d));
		err = policy_pins_load(line, &p, &d);
		printf("rc %d\nat %s:%lu:%lu\nkey %s\nreason %s\n", err, d.file,
		       d.line, d.col, d.key, d.reason);
		if (err == 0) {
			report(p);
			/* The copy must say the same. */
			q = policy_pins_dup(p);
			if (q != NULL)
				report(q);
			policy_pins_free(q);
		}
		policy_pins_free(p);
		/* The in-memory parse with no name and no detail. */
		if (policy_file_read(line, &text, &n, &d) == 0) {
			err = policy_pins_parse(text, n, NULL, &p, NULL);
			printf("rc2 %d\n", err);
			policy_pins_free(p);
			free(text);
		}
	}
	return fflush(stdout) != 0 || ferror(stdout);
}
