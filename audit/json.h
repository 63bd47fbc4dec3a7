/*
 * json.h - TRANSITIONAL, deleted at merge: audit/json.[ch] moved to
 * common/json.[ch] (issue 8, item 4) and its names took common's rba_
 * prefix.  cli/ is being split on another branch and is not edited on
 * this one; this header keeps its old names compiling until RENAMES.sed
 * is applied to cli/ at merge.  Nothing outside cli/ includes it.
 */
#ifndef RBA_AUDIT_JSON_COMPAT_H
#define RBA_AUDIT_JSON_COMPAT_H

#include "common/json.h"

#define json_fmt_double rba_json_fmt_double
#define json_parse rba_json_parse
#define json_release rba_json_release
#define json_get rba_json_get
#define json_get_str rba_json_get_str
#define json_get_num rba_json_get_num
#define json_value rba_json_value

#endif
