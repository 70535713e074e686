#!/usr/bin/env bash
# What a desktop user sees, for people (not CI): starts the local service with the demo
# transfers (and its counters), mounts it, opens pcmanfm under Xvfb on the demo's photo
# transfer and takes a screenshot, once with previews on and once with them off, each
# time with fresh caches, and says how many bytes of files the service served while the
# file manager browsed. Installs xvfb, pcmanfm and imagemagick when missing.
#
#   scripts/desktop-check.sh [OUT.png]     (default ./desktop-check.png; the run with
#                                           previews off goes to OUT-no-previews.png)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$(realpath -m "${1:-desktop-check.png}")
OUT_OFF="${OUT%.png}-no-previews.png"
# s: how long pcmanfm gets to list the folder and draw its icons before the screenshot.
BROWSE_SECONDS=${BROWSE_SECONDS:-12}

need=()
for tool in Xvfb:xvfb pcmanfm:pcmanfm import:imagemagick dbus-run-session:dbus; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "desktop-check: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
bash scripts/bootstrap.sh

# shellcheck source=support/demo-account.sh
source scripts/support/demo-account.sh

echo "desktop-check: starting the local service with the demo transfers" >&2
demo_account desktop-check --controls
CONTROLS="${TRANSFERFS_API_URL%/api}/_emulator"

control() { curl -sS --cacert "$TRANSFERFS_CA" -H "x-api-key: $TRANSFERFS_API_KEY" -X "$1" "$CONTROLS/$2"; }

# pcmanfm's own settings: thumbnails on (for files up to 16 MiB), the thumbnail view.
export XDG_CONFIG_HOME="$STATE/xdg-config"
mkdir -p "$XDG_CONFIG_HOME/libfm" "$XDG_CONFIG_HOME/pcmanfm/default"
printf '[config]\nshow_thumbnail=1\nthumbnail_local=1\nthumbnail_max=16384\n\n[ui]\nthumbnail_size=128\n' >"$XDG_CONFIG_HOME/libfm/libfm.conf"
printf '[ui]\nview_mode=thumbnail\nwin_width=1000\nwin_height=660\nshow_statusbar=1\n' >"$XDG_CONFIG_HOME/pcmanfm/default/pcmanfm.conf"

# browse on|off SCREENSHOT: mount with previews on or off, show the photo folder, measure.
browse() {
  local previews=$1 shot=$2 display=:$((90 + RANDOM % 9))
  # Fresh caches each time: the thumbnail cache, and the mount's chunk cache (bytes read in
  # one run would otherwise not be fetched again in the next).
  export XDG_CACHE_HOME="$STATE/xdg-cache-$previews" TRANSFERFS_CACHE_DIR="$STATE/cache-$previews"
  mkdir -p "$MNT"
  "${CLI[@]}" mount "$MNT" --previews "$([ "$previews" = on ] && echo yes || echo no)" >/dev/null
  local folder
  folder=$(ls -d "$MNT"/inbox/*"Photos from the harbour walk"*)
  control POST counters/reset >/dev/null
  Xvfb "$display" -screen 0 1024x700x24 -nolisten tcp >/dev/null 2>&1 &
  local xvfb=$!
  sleep 1
  DISPLAY=$display dbus-run-session -- pcmanfm "$folder" >/dev/null 2>&1 &
  local fm=$!
  sleep "$BROWSE_SECONDS"
  DISPLAY=$display import -window root "$shot"
  local counters
  counters=$(control GET counters)
  kill "$fm" "$xvfb" 2>/dev/null || true
  wait "$fm" "$xvfb" 2>/dev/null || true
  "${CLI[@]}" unmount "$MNT" >/dev/null
  node -e '
    const c = JSON.parse(process.argv[1])
    const routes = Object.entries(c.routes).map(([k, v]) => `${k} ${v}`).join(", ") || "none"
    console.log(`previews ${process.argv[2]}: ${c.bytesServed} bytes of files and ${c.previewBytesServed} bytes of thumbnails served while browsing (requests: ${routes}); screenshot ${process.argv[3]}`)
  ' "$counters" "$previews" "$shot"
}

browse on "$OUT"
browse off "$OUT_OFF"
