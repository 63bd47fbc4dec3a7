#!/bin/sh
# fleet-store.sh RBA STORE COUNT [EPOCHS [ODD [MLP_EPOCHS]]] - a store of COUNT German
# credit versions for the fleet tests and bench: the four fixture pins in
# turn (categorical and numeric, logistic and MLP), each with its own
# train.seed and a few epochs, registered under the credit policy with
# the whole data set as audit sample.  With ODD=1 the last version is
# registered with an artifact trained at another seed, so that its audit
# does not reproduce.  MLP_EPOCHS (default EPOCHS) gives the MLPs other
# epochs than the logistic models: audits of very unequal cost.
set -eu
rba=$1 store=$2 count=$3 epochs=${4:-3} odd=${5:-0} mlp_epochs=${6:-${4:-3}}
top=$(cd "$(dirname "$0")/.." && pwd)
fix=$top/fixtures
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rba-fleet-store.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$rba" -S "$store" -q init
"$rba" -S "$store" -q snapshot add "$fix/german-credit.csv" > /dev/null
"$rba" -S "$store" -q snapshot add "$fix/german-credit-numeric.csv" > /dev/null
set -- german-categorical-logistic german-numeric-mlp german-categorical-mlp german-numeric-logistic
i=0
while [ "$i" -lt "$count" ]; do
	eval "base=\${$((i % 4 + 1))}"
	name=$base-s$i
	e=$epochs
	case $base in *mlp*) e=$mlp_epochs ;; esac
	case $base in
	*numeric*) csv=$fix/german-credit-numeric.csv ;;
	*) csv=$fix/german-credit.csv ;;
	esac
	sed -e "s/^version: .*/version: $name/" \
	    -e "s/seed: 0, epochs: [0-9]*/seed: $i, epochs: $e/" \
	    "$fix/pins/$base.yaml" > "$tmp/$name.yaml"
	grep -q "seed: $i, epochs: $e" "$tmp/$name.yaml"
	if [ "$odd" = 1 ] && [ $((i + 1)) -eq "$count" ]; then
		sed "s/seed: $i, epochs/seed: $((i + 100)), epochs/" "$tmp/$name.yaml" > "$tmp/other.yaml"
		"$rba" -q train "$tmp/other.yaml" -o "$tmp/other.art" --snapshot "$csv" > /dev/null
		"$rba" -S "$store" -q register "$tmp/$name.yaml" --artifact "$tmp/other.art" \
			--policy "$fix/policy/credit.yaml" > /dev/null
	else
		"$rba" -S "$store" -q register "$tmp/$name.yaml" --policy "$fix/policy/credit.yaml" > /dev/null
	fi
	"$rba" -S "$store" -q sample add "$name" "$csv" > /dev/null
	i=$((i + 1))
done
