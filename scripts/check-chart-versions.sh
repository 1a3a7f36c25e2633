#!/usr/bin/env bash
# Every machines/*.yaml changed since the base revision either keeps its behaviour or
# bumps its `version:` (docs/evolution.md, rule 1): `statekit diff FILE --rev BASE` for
# each, and exit 1 when any of them fails.
#
#   scripts/check-chart-versions.sh [BASE]
#
# BASE, when not given (nor as $CHART_VERSIONS_BASE): the merge base of HEAD with the
# first of origin/main, upstream/main, main that exists and is not HEAD's own history
# tip; on main itself (or with no such branch) HEAD~1; in a clone without HEAD~1
# (shallow, or a first commit) there is nothing to compare with, which is said and
# exits 0. The working tree is compared, so uncommitted edits count. $STATEKIT is the
# command to run (default: statekit on the PATH). It prints what it compared.
set -uo pipefail

read -ra statekit <<< "${STATEKIT:-statekit}"
top=$(git rev-parse --show-toplevel) || exit 2
cd "$top" || exit 2

has_commit() { git rev-parse --verify --quiet "$1^{commit}" >/dev/null; }

base="${1:-${CHART_VERSIONS_BASE:-}}"
how="given"
if [ -z "$base" ]; then
    head=$(git rev-parse HEAD)
    for upstream in origin/main upstream/main main; do
        has_commit "$upstream" || continue
        fork=$(git merge-base HEAD "$upstream" 2>/dev/null) || continue
        if [ "$fork" != "$head" ]; then
            base=$fork
            how="the merge base with $upstream"
            break
        fi
    done
fi
if [ -z "$base" ]; then
    if has_commit HEAD~1; then
        base=HEAD~1
        how="the previous commit (no upstream branch that HEAD is ahead of)"
    else
        echo "chart versions: no base revision to compare with (a shallow clone or a" \
            "first commit): nothing checked"
        exit 0
    fi
fi
if ! has_commit "$base"; then
    echo "chart versions: the base revision '$base' is not in this clone" >&2
    exit 2
fi

short=$(git rev-parse --short "$base")
# modified charts only: a chart added since the base has no earlier version to keep
mapfile -t changed < <(git diff --name-only --diff-filter=M "$base" -- 'machines/*.yaml')
echo "chart versions: machines/*.yaml against $short ($how): ${#changed[@]} changed"
failed=0
for file in "${changed[@]}"; do
    echo "== statekit diff $file --rev $short"
    "${statekit[@]}" diff "$file" --rev "$base"
    status=$?
    if [ "$status" -ne 0 ]; then
        failed=1
        [ "$status" -eq 1 ] || echo "$file: statekit diff exited $status" >&2
    fi
done
exit "$failed"
