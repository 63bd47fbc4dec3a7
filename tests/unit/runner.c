/*
 * runner.c - the one Check runner: every module's suite, fork mode, so a
 * crash fails one test and not the run.  Suites are weak so a module can
 * be built without its suite while it is being written.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/digest.h"
#include "tests/unit/suites.h"

int
main(int argc, char **argv)
{
	Suite *(*const all[])(void) = {
		suite_common, suite_csv, suite_snapshot, suite_store, suite_policy,
		suite_rebuild, suite_artifact, suite_audit, suite_sign,
		suite_evidence,
		suite_cli,
	};
	SRunner *sr = NULL;
	int failed;

	(void)argc;
	(void)argv;
	if (rba_crypto_init() != 0)
		return 1;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (all[i] == NULL)
			continue;
		if (sr == NULL)
			sr = srunner_create(all[i]());
		else
			srunner_add_suite(sr, all[i]());
	}
	if (sr == NULL) {
		fprintf(stderr, "no test suites\n");
		return 1;
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
