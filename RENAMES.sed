# Renames made on branch house-audit (issue 8, items 2, 3, 5), as sed
# expressions for the other branches' code at merge.  Delete at merge.
# Apply with: sed -i -E -f RENAMES.sed FILES  (GNU sed, \b word edges)

# audit/chain.[ch] is the verified inputs of a rebuild: audit/inputs.[ch]
s#audit/chain\.h#audit/inputs.h#g
s#audit/chain\.c#audit/inputs.c#g
s/\bRBA_CHAIN_H\b/RBA_AUDIT_INPUTS_H/g
s/\bstruct chain\b/struct audit_inputs/g
s/\bchain_release\b/audit_inputs_release/g
s/\bchain_load\b/audit_inputs_load/g
s/\bchain_rebuild\b/audit_inputs_rebuild/g
s/\bchain_now\b/audit_inputs_now/g
s/\baudit_policy_in_force\b/audit_inputs_policy_in_force/g
# its band-edge helper, beside policy_decide
s/\bchain_nearest_edge\b/policy_nearest_edge/g

# score.h exports audit_scorer_*: audit/scorer.[ch]
s#audit/score\.h#audit/scorer.h#g
s#audit/score\.c#audit/scorer.c#g
s/\bRBA_SCORE_H\b/RBA_SCORER_H/g

# audit/sample.c split: the format stays in audit/sample.[ch]; the
# "sample add" use case is audit/sample_add.[ch]; the chunk storage both
# share is audit/sample_mem.h.  Not a sed: a file using sample_add() or
# struct sample_add_* adds #include "audit/sample_add.h".
# Statics of the old sample.c now shared through sample_mem.h, renamed
# inside audit/sample.c and audit/sample_add.c only (too generic to apply
# elsewhere): ensure -> sample_mem_ensure, free_strv -> sample_strv_free,
# chunk_reserve -> sample_chunk_reserve, name_index -> sample_names_find,
# struct colmem -> struct sample_colmem.

# Disputes have their own header.  Not a sed: a file using audit_dispute,
# dispute_report_* or DISPUTE_* adds #include "audit/dispute.h".

# audit.c split: the scoring pass is audit/audit_pass.[ch] (struct
# audit_flip and AUDIT_WEAK_MARGINS moved there; audit.h includes it),
# the record JSON audit/audit_record.c.  Statics of audit.c renamed:
s/\bstruct tally\b/struct audit_tally/g
s/\bstruct cmp\b/struct audit_cmp/g
s/\btally_release\(/audit_tally_release(/g
s/\bflip_release\(/audit_flip_release(/g

# policy/: the y* names say which struct they act on
s/\bpolicy_ynull\b/policy_ydoc_node_is_null/g
s/\bpolicy_yis\b/policy_ydoc_node_is/g
s/\bpolicy_yfail\b/policy_yval_fail/g
s/\bpolicy_ypath_key\b/policy_yval_path_key/g
s/\bpolicy_ypath_index\b/policy_yval_path_index/g
s/\bpolicy_ypath_restore\b/policy_yval_path_restore/g
s/\bpolicy_ykey\b/policy_yval_key/g
s/\bpolicy_yrequired\b/policy_yval_required/g
s/\bpolicy_ymap\b/policy_yval_map/g
s/\bpolicy_yseq\b/policy_yval_seq/g
s/\bpolicy_yget_(str|bool|uint|num|enum|digest)\b/policy_yval_get_\1/g
s/\bpolicy_yrange_fail\b/policy_yval_range_fail/g
s/\bpolicy_yschema\b/policy_yval_schema/g
s/\bpolicy_ynum_parse\b/policy_scalar_num_parse/g
s/\bpolicy_yuint_parse\b/policy_scalar_uint_parse/g
s/\bpolicy_yfmt_num\b/policy_scalar_num_format/g
# policy/ydoc.c takes its caps from policy/ydoc.h (YDOC_MAX_FILE, _DEPTH,
# _NODES), no longer including policy/policy.h: in policy/ydoc.c only,
# POLICY_MAX_(FILE|DEPTH|NODES) -> YDOC_MAX_\1.

# ABI-1 sparse scoring moved from audit/score.c to rebuild/abi1_sparse.c
# behind rebuild_sparse_new/_score/_free (rebuild/trainer.h), dispatched
# through the ABI registry (struct abi_impl.sparse_new)
s#audit/score_tmpl\.h#rebuild/abi1_sparse_tmpl.h#g
