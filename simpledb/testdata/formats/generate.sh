#!/bin/sh
# generate.sh rebuilds the format-compatibility fixtures, each with the code
# of the commit that wrote its format: for each, it checks that commit out
# in a detached worktree, builds gen/workload.go and gen/NAME/main.go there
# as cmd/fixturegen, runs it into a fresh directory, and copies the
# database (without its empty LOCK, which Open recreates) and expected.json
# into NAME/. The worktrees are removed, whatever happens.
#
#	simpledb/testdata/formats/generate.sh              # every fixture
#	simpledb/testdata/formats/generate.sh log6-table2  # the named ones
#
# A fixture's bytes change at every run (tables and logs carry random
# identities from log format 5 on, tables their creation time); its
# layout and expected.json do not.
set -eu

# NAME COMMIT: the fixture and the commit that writes it: the last one
# before its formats changed, or, for the newest, the commit that added it
# (see the README).
fixtures='log1-table1 fb1f56a^
log2-table1 cc321ae^
log3-table1 bd44589^
log4-table2 bcd1428^
log5-table2 1cd32c7^
log6-table2 98dc9df
log7-table3 5a168bb'

formats=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$formats" rev-parse --show-toplevel)
work=$(mktemp -d)
worktrees=''
cleanup() {
	for w in $worktrees; do
		git -C "$repo" worktree remove --force "$w" || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

only=" $* "
while read -r name commit; do
	case $only in
	"  " | *" $name "*) ;;
	*) continue ;;
	esac
	tree=$work/$name
	git -C "$repo" worktree add --quiet --detach "$tree" "$commit"
	worktrees="$worktrees $tree"
	mkdir -p "$tree/cmd/fixturegen"
	cp "$formats/gen/workload.go" "$formats/gen/$name/main.go" "$tree/cmd/fixturegen/"
	# GOWORK=off: the generator needs the library's module only, as the
	# commit's go.mod and go.sum give it.
	(cd "$tree" && GOWORK=off go run ./cmd/fixturegen "$work/out-$name")
	db=$work/out-$name/db
	if [ -f "$db/LOCK" ] && [ ! -s "$db/LOCK" ]; then
		rm "$db/LOCK"
	fi
	rm -rf "${formats:?}/$name"
	mkdir "$formats/$name"
	cp -R "$db" "$work/out-$name/expected.json" "$formats/$name/"
	echo "$name: $(git -C "$repo" rev-parse --short "$commit"), $(du -sh "$formats/$name" | cut -f1)"
done <<EOF
$fixtures
EOF
