#!/usr/bin/env bash
# Everything `npm start` (bootstrap.sh start, the default) and `npm test` (bootstrap.sh test)
# need, done only when missing: system packages (see setup-plan.mjs: never Debian's `fuse`,
# which would remove fuse3), node_modules, the fuse-native addon (for tests also the one for
# libfuse 3.17, with that libfuse), the build.
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

# The tests mount on libfuse 3.17 too (the vitest project libfuse3.17): in test mode the addon
# for its soname, libfuse3.so.4, is built as well, against libfuse 3.17 built from Debian's
# source (scripts/build-libfuse3.sh; seconds the first time, nothing once built).
addon_args=()
[ "$mode" != test ] || addon_args=(--libfuse3.so.4)
node scripts/build-fuse-addon.mjs "${addon_args[@]}" 2>/tmp/transferfs-fuse-build.log || { cat /tmp/transferfs-fuse-build.log >&2; exit 1; }
# The arm64 package test cross-builds its libfuse3.so.4 addon against libfuse 3.17 built for
# arm64: made here once per machine, where the cross compiler is (ARM64_TOOLS), not in the test.
if [ "$mode" = test ] && command -v aarch64-linux-gnu-gcc >/dev/null; then
  bash scripts/build-libfuse3.sh --arch arm64 >/dev/null 2>/tmp/transferfs-fuse-build.log || { cat /tmp/transferfs-fuse-build.log >&2; exit 1; }
fi

# Build when any source is newer than the last build.
if [ ! -f dist/.built ] || [ -n "$(find src scripts tsconfig.json package.json -newer dist/.built -name '*.ts' -o -newer dist/.built -name '*.json' 2>/dev/null | head -n 1)" ]; then
  echo "bootstrap: building" >&2
  npx tsc -p tsconfig.json
  touch dist/.built
fi
