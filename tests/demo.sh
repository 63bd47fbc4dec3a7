#!/bin/sh
# demo.sh BINARY - the whole story of a disputed decline on the bundled
# German credit data, in a temporary store: keep the training data,
# register a model version, keep an audit sample of past decisions,
# audit the version, answer a disputed decline, sign the evidence and
# check it as an auditor would; then a gradient-boosted trees version,
# a disputed decline with its principal reasons, and a second dispute
# answered without a retrain on the proof of its audit; then the pages a
# person reads (report: the audit with every case, the dispute, the
# store's history), kept in $DEMO_OUT (default build/demo/ of the tree).
# Each step prints its command, then what the command prints.  `make
# demo` runs it.
set -eu
bin=${1:?usage: tests/demo.sh BINARY}
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/rba-demo.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
out=${DEMO_OUT:-$top/build/demo}
cd "$dir"
export REBUILD_AUDIT_STORE="$dir/audit-store"
V=credit-2026-11
G=credit-2026-11-gbdt

# The inputs, under the names a lender would give them.
cp "$top/fixtures/german-credit.csv" training-data.csv
cp "$top/fixtures/german-credit.csv" past-decisions.csv
sed "s/^version: .*/version: $V/" "$top/fixtures/pins/german-categorical-mlp.yaml" > $V.yaml
sed "s/^version: .*/version: $G/" "$top/fixtures/pins/german-categorical-gbdt.yaml" > $G.yaml
# the policy, with the reason statements an adverse-action notice uses
cp "$top/fixtures/policy/credit-statements.yaml" credit-policy.yaml

rebuild_audit() { "$bin" "$@"; }
# quote ARG: ARG as a shell reads it back, in single quotes when it has
# a space, a quote or anything else a shell would take apart.
quote() {
	case $1 in
	'' | *[!A-Za-z0-9_./:=@%+,-]*)
		printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;;
	*) printf '%s' "$1" ;;
	esac
}
# command_line ARG...: "rebuild-audit ARG...", each ARG quoted as needed,
# so that a printed line can be pasted into a shell.
command_line() {
	printf 'rebuild-audit'
	for a; do printf ' %s' "$(quote "$a")"; done
}
step() {
	printf '\n$ %s\n' "$(command_line "$@")"
	rebuild_audit "$@"
}
# The same, its standard output (a long report) not shown.
step_quiet() {
	printf '\n$ %s > /dev/null\n' "$(command_line "$@")"
	rebuild_audit "$@" > /dev/null
}
say() { printf '\n# %s\n' "$*"; }
# declined N VERSION: the first N declined cases of the version's sample.
declined() {
	i=1
	n=0
	found=
	while [ $i -le 200 ] && [ $n -lt "$1" ]; do
		if rebuild_audit sample show "$2" $i | grep -q '^decision    decline$'; then
			found="$found $i"
			n=$((n + 1))
		fi
		i=$((i + 1))
	done
	[ $n = "$1" ] || { echo "demo: too few declined cases in the sample" >&2; exit 2; }
	echo $found
}

say "a store for model versions, training data and audit evidence"
step init
say "keep the training data by its SHA-256"
step snapshot add training-data.csv
say "train the version from its pins and keep it, decided under a policy"
step register $V.yaml --policy credit-policy.yaml
say "keep past decisions as the audit sample (scored with the stored model)"
step sample add $V past-decisions.csv
say "months later: rebuild from the pins, compare, rescore every past case"
step audit $V
case_id=$(declined 1 $V)
say "applicant $case_id disputes the decline"
step dispute $V "$case_id"
say "every audit is kept, hash-chained"
step history
step history --verify
say "the store's fsck: every record, seal, chunk and index entry checked"
step store check
say "the chain's head, to keep outside the store (a log, a ticket)"
step history head
say "signed evidence of the audit, for the regulator"
step keygen -o acme-audit
step export $V -k acme-audit.key -o evidence.json
say "the auditor's side: minisign and jq alone, offline"
printf '\n$ minisign -Vm evidence.json -p acme-audit.pub\n'
minisign -Vm evidence.json -p acme-audit.pub
printf '\n$ jq -r .predicate.verdict evidence.json\n'
jq -r .predicate.verdict evidence.json
step verify evidence.json -p acme-audit.pub

say "a second model kind on the same data: gradient-boosted trees, its own version (the filled pins not shown)"
step_quiet register $G.yaml --policy credit-policy.yaml
step sample add $G past-decisions.csv
cases=$(declined 2 $G)
set -- $cases
say "applicant $1 disputes a decline made by the trees: retrained, with the principal reasons (exact TreeSHAP)"
step dispute $G "$1"
say "the trees version audited: bit-identical, kept as a history record"
step audit $G
say "applicant $2 disputes too: no retrain, the bit-identical audit record proves the stored artifact"
step dispute $G "$2"

say "the metric moved: is it real? the synthetic task, six paired seeds a side"
step snapshot synth -o synth.csv
step snapshot add synth.csv
sed 's/lr: 0.02,/lr: 0.2,/; s/^version: .*/version: synth-lr10/' "$top/fixtures/pins/synth-chapter.yaml" > synth-lr10.yaml
step compare "$top/fixtures/pins/synth-chapter.yaml" synth-lr10.yaml --seeds 0-5 -j 2 \
	--hypothesis "lr x10 is harmless" --success 'val_loss.median <= 0' || true

say "pages a person reads: the audit with every case and the dispute, each verified first, and the store's history"
step export $V -k acme-audit.key -o evidence-cases.json --cases
step report evidence-cases.json -o audit-report.html -p acme-audit.pub
step_quiet dispute $V "$case_id" --export -k acme-audit.key -o dispute.json
step report dispute.json -o dispute-report.html -p acme-audit.pub
step report --store --history -o history.html
mkdir -p "$out"
cp audit-report.html dispute-report.html history.html evidence-cases.json \
	evidence-cases.json.minisig dispute.json dispute.json.minisig acme-audit.pub "$out/"
say "the reports are in $out: audit-report.html, dispute-report.html, history.html (open them in a browser; print them to A4 PDF, each page traced to its signed file)"
