#!/usr/bin/env bash
# Everything `npm start` and `npm test` need on a fresh Debian machine, done only
# when missing: system packages, node_modules, the patched fuse-native addon, the build.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for pkg in libfuse2 fuse; do have_pkg "$pkg" || need_pkgs+=("$pkg"); done
# The tools the tests drive on the mount (and zsh, whose completion script is tested;
# fio, which `npm run bench` drives).
for tool in rsync:rsync sqlite3:sqlite3 unzip:unzip zip:zip zsh:zsh fio:fio notify-send:libnotify-bin dbus-daemon:dbus; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need_pkgs+=("${tool##*:}")
done
# The notification test's stand-in for a desktop's notification server (Debian's Python).
for pkg in python3-dbus python3-gi; do have_pkg "$pkg" || need_pkgs+=("$pkg"); done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "bootstrap: installing ${need_pkgs[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: npm ci" >&2
  npm ci --no-audit --no-fund
fi

node scripts/patch-fuse-native.mjs 2>/tmp/transferfs-fuse-build.log || { cat /tmp/transferfs-fuse-build.log >&2; exit 1; }

# Build when any source is newer than the last build.
if [ ! -f dist/.built ] || [ -n "$(find src scripts tsconfig.json package.json -newer dist/.built -name '*.ts' -o -newer dist/.built -name '*.json' 2>/dev/null | head -n 1)" ]; then
  echo "bootstrap: building" >&2
  npx tsc -p tsconfig.json
  touch dist/.built
fi
