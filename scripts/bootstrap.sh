#!/usr/bin/env bash
# Everything `npm start` (bootstrap.sh start, the default) and `npm test` (bootstrap.sh test)
# need, done only when missing: system packages (see setup-plan.mjs: never Debian's `fuse`,
# which would remove fuse3), node_modules, the fuse-native addon, the build.
# --dry-run prints the apt commands instead of running them, and stops there.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=start dry_run=
for arg in "$@"; do
  case "$arg" in
    start|test) mode=$arg ;;
    --dry-run) dry_run=--dry-run ;;
    *) echo "usage: bash scripts/bootstrap.sh [start|test] [--dry-run]" >&2; exit 2 ;;
  esac
done

node scripts/bootstrap.mjs "$mode" $dry_run
[ -z "$dry_run" ] || exit 0

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: npm ci" >&2
  npm ci --no-audit --no-fund
fi

node scripts/build-fuse-addon.mjs 2>/tmp/transferfs-fuse-build.log || { cat /tmp/transferfs-fuse-build.log >&2; exit 1; }

# Build when any source is newer than the last build.
if [ ! -f dist/.built ] || [ -n "$(find src scripts tsconfig.json package.json -newer dist/.built -name '*.ts' -o -newer dist/.built -name '*.json' 2>/dev/null | head -n 1)" ]; then
  echo "bootstrap: building" >&2
  npx tsc -p tsconfig.json
  touch dist/.built
fi
