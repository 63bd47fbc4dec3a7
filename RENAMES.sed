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
