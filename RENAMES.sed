# RENAMES.sed - every symbol and header renamed on branch house-common
# (issue 8, items 4 and 6).  Apply to the other branches' code before
# merging:  sed -i -f RENAMES.sed $(git ls-files '*.c' '*.h')
# Deleted at merge.
#
# audit/json.[ch] moved to common/json.[ch]; its names take common's prefix.
s#audit/json\.h#common/json.h#g
s/\bjson_fmt_double\b/rba_json_fmt_double/g
s/\bjson_put_strn\b/rba_json_put_strn/g
s/\bjson_put_str\b/rba_json_put_str/g
s/\bjson_put_num\b/rba_json_put_num/g
s/\bjson_put_key\b/rba_json_put_key/g
s/\bjson_kv_str\b/rba_json_kv_str/g
s/\bjson_kv_num\b/rba_json_kv_num/g
s/\bjson_kv_u64\b/rba_json_kv_u64/g
s/\bjson_kv_bool\b/rba_json_kv_bool/g
s/\bjson_kv_digest\b/rba_json_kv_digest/g
s/\bjson_kv_nums\b/rba_json_kv_nums/g
s/\bjson_parse\b/rba_json_parse/g
s/\bjson_release\b/rba_json_release/g
s/\bjson_get_str\b/rba_json_get_str/g
s/\bjson_get_num\b/rba_json_get_num/g
s/\bjson_get\b/rba_json_get/g
s/\bjson_value\b/rba_json_value/g
s/\bjson_type\b/rba_json_type/g
s/\bJSON_NULL\b/RBA_JSON_NULL/g
s/\bJSON_FALSE\b/RBA_JSON_FALSE/g
s/\bJSON_TRUE\b/RBA_JSON_TRUE/g
s/\bJSON_NUMBER\b/RBA_JSON_NUMBER/g
s/\bJSON_STRING\b/RBA_JSON_STRING/g
s/\bJSON_ARRAY\b/RBA_JSON_ARRAY/g
s/\bJSON_OBJECT\b/RBA_JSON_OBJECT/g
s/\bJSON_MAX_DEPTH\b/RBA_JSON_MAX_DEPTH/g
s/\bJSON_MAX_TEXT\b/RBA_JSON_MAX_TEXT/g
# The monotonic clock of audit/chain.[ch] is common/rbatime.h's.
s/\bchain_now\b/rba_time_mono/g
#
# Not renames, so not sed expressions: what the cli branch replaces by hand
# (cli/ is not edited on this branch).
#   cli_json_str(f, s)            -> rba_json_fput_str(f, s)    common/json.h
#   cmd_train.c json_num(f, v)    -> rba_json_fput_num(f, v)    common/json.h
#   cli_fmt_time(t, out)          -> rba_time_utc(t, out)       common/rbatime.h
#   cmd_train.c wall_now()        -> rba_time_mono()            common/rbatime.h
#   cmd_train.c write_record(record, p, &res, env_hex, wall)
#                                 -> rebuild_runrec_write(record, p, &res,
#                                        env_hex, wall)         rebuild/runrec.h
# Then delete audit/json.h (the transitional alias header).
#
# Internal to their folders (no other branch calls them): store_record.c's
# static history_digest is now store_history_digest (store.h); evidence.c's
# statics ev_*, guarantee_text and bad are evidence_ev_*,
# evidence_guarantee_text and evidence_fail in audit/evidence_priv.h.
