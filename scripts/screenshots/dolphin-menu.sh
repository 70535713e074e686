#!/usr/bin/env bash
# The picture of Dolphin's transferfs menu in docs/desktop.md, taken again: starts the local
# service with the demo transfers, mounts it, opens Dolphin (which must be installed: it is no
# test tool) on a display of its own with the service menus where KIO finds them, right-clicks a
# file of a transfer, opens the transferfs submenu (dolphin-menu.py, through AT-SPI) and keeps
# the part of the screen with the menus, as a small PNG. Leaves no mount, display or process.
#
#   scripts/screenshots/dolphin-menu.sh [OUT.png]     (default docs/images/dolphin-menu.png)
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=$(realpath -m "${1:-docs/images/dolphin-menu.png}")
for tool in dolphin:dolphin import:imagemagick Xvfb:xvfb dbus-run-session:dbus; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || { echo "dolphin-menu: needs ${tool%%:*} (apt-get install --no-install-recommends ${tool##*:})" >&2; exit 1; }
done
[ -f dist/.built ] || { echo "dolphin-menu: build first (npx tsc -p tsconfig.json && touch dist/.built)" >&2; exit 1; }

# shellcheck source=../support/demo-account.sh
source scripts/support/demo-account.sh
demo_account dolphin-menu
mkdir -p "$MNT"
"${CLI[@]}" mount "$MNT" >/dev/null
folder=$(ls -d "$MNT"/inbox/*"Photos from the harbour walk"*)

# A home of its own, the service menus where KIO looks (XDG_DATA_HOME/kio/servicemenus).
export HOME="$STATE/home" XDG_CONFIG_HOME="$STATE/home/.config" XDG_DATA_HOME="$STATE/home/.local/share" XDG_CACHE_HOME="$STATE/home/.cache"
mkdir -p "$XDG_DATA_HOME/kio/servicemenus" "$XDG_CONFIG_HOME"
cp desktop/dolphin/*.desktop "$XDG_DATA_HOME/kio/servicemenus/"
# KIO runs a service menu from a folder of the user's only when the file is executable.
chmod +x "$XDG_DATA_HOME"/kio/servicemenus/*.desktop
# Details view, so the menu opens by a row with its name readable.
printf '[MainWindow]\nHeight 760=540\nWidth 1200=900\nMenuBar=Disabled\n\n[General]\nGlobalViewProps=true\nShowFullPath=false\n' >"$XDG_CONFIG_HOME/dolphinrc"
mkdir -p "$XDG_DATA_HOME/dolphin/view_properties/global"
printf '[Dolphin]\nViewMode=1\nVersion=4\n' >"$XDG_DATA_HOME/dolphin/view_properties/global/.directory"

/usr/bin/python3 test/desktop/fixtures/x_display.py --screen 1200x760x24 -- dbus-run-session -- \
  /usr/bin/python3 scripts/screenshots/dolphin-menu.py "$folder" "$OUT" >"$STATE/session.log" 2>&1 || {
  echo "dolphin-menu: failed; the session said:" >&2
  tail -n 40 "$STATE/session.log" >&2
  exit 1
}
echo "dolphin-menu: wrote $OUT ($(stat -c %s "$OUT") bytes)"
