/*
 * runner.c - the one Check runner: every module's suite, fork mode, so a
 * crash fails one test and not the run.  Every suite in suites.h is
 * listed here; one that is not defined fails the link.
 */
#include <check.h>
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
		suite_forensics,
		suite_explain,
		suite_fleet,
		suite_report,
		suite_cli,
		suite_xgboost,
		suite_tlog,
		suite_sample,
		suite_exec,
	};
	SRunner *sr;
	int failed;

	(void)argc;
	(void)argv;
	if (rba_crypto_init() != 0)
		return 1;
	sr = srunner_create(all[0]());
	for (size_t i = 1; i < sizeof(all) / sizeof(all[0]); i++)
		srunner_add_suite(sr, all[i]());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
