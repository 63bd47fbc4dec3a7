/*
 * suites.h - one Check suite per module, each defined in a
 * tests/unit/check_*.c file and listed in runner.c: a suite that is
 * declared but not written is a link error, not a silent skip.
 */
#ifndef RBA_SUITES_H
#define RBA_SUITES_H

#include <check.h>

#define RBA_SUITE(name) Suite *name(void)
RBA_SUITE(suite_common);
RBA_SUITE(suite_csv);
RBA_SUITE(suite_snapshot);
RBA_SUITE(suite_store);
RBA_SUITE(suite_policy);
RBA_SUITE(suite_rebuild);
RBA_SUITE(suite_artifact);
RBA_SUITE(suite_explain);
RBA_SUITE(suite_audit);
RBA_SUITE(suite_sign);
RBA_SUITE(suite_evidence);
RBA_SUITE(suite_forensics);
RBA_SUITE(suite_fleet);
RBA_SUITE(suite_report);
RBA_SUITE(suite_cli);
RBA_SUITE(suite_xgboost);
RBA_SUITE(suite_tlog);
RBA_SUITE(suite_sample);
RBA_SUITE(suite_exec);

/* Directory of the fixtures, relative to tests/unit (the runner's cwd). */
#define FIXTURES "../../fixtures"

#endif
