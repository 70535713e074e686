#!/usr/bin/env bash
# `npm pack`, also in a clean clone: the compiler and patch-package come from node_modules,
# so it is installed first; both FUSE addons are built and shipped prebuilt (prebuilds/), so
# that installing the tarball needs no compiler where one of them fits.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x node_modules/.bin/tsc ] || npm ci --no-audit --no-fund --ignore-scripts
node scripts/build-fuse-addon.mjs --prebuilds
npx tsc -p tsconfig.json
