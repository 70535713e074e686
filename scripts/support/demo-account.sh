# Sourced by the scripts that show the product to people on the local service's demo
# (desktop-check.sh, screenshots/dolphin-menu.sh), from the checkout's root, after a build.
#
#   demo_account NAME [SERVE_ARGS...]
#
# makes a state folder of its own (STATE, with MNT to mount at), starts `transferfs serve --demo`
# in it (with SERVE_ARGS), signs in to it with the settings in the environment (TRANSFERFS_API_URL,
# _API_KEY, _CA, _CONFIG_DIR, _DATA_DIR exported; `field KEY` reads the service's announcement),
# and on the script's exit unmounts MNT, stops what it started (add pids to `pids`) and removes
# STATE. It fails, with the service's own words, when the service does not start.

CLI=(node "$PWD/dist/src/cli/main.js")
pids=()

demo_cleanup() {
  "${CLI[@]}" unmount "$MNT" >/dev/null 2>&1 || fusermount3 -uz "$MNT" 2>/dev/null || fusermount -uz "$MNT" 2>/dev/null || true
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$STATE"
}

field() { node -e 'const a = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]); console.log(process.argv[2].split(".").reduce((o, k) => o[k], a))' "$STATE/announcement" "$1"; }

demo_account() {
  local name=$1
  shift
  STATE=$(mktemp -d "/tmp/transferfs-$name.XXXXXX")
  MNT="$STATE/Transfers"
  trap demo_cleanup EXIT
  "${CLI[@]}" serve --demo "$@" --data-dir "$STATE/service" >"$STATE/announcement" 2>"$STATE/service.log" &
  pids+=($!)
  # Making the demo's files takes a while on a loaded machine.
  for _ in $(seq 1 360); do [ -s "$STATE/announcement" ] && break; sleep 0.5; done
  [ -s "$STATE/announcement" ] || { echo "$name: the local service did not start: $(cat "$STATE/service.log")" >&2; exit 1; }
  TRANSFERFS_API_URL=$(field baseUrl) TRANSFERFS_API_KEY=$(field apiKey) TRANSFERFS_CA=$(field ca)
  export TRANSFERFS_API_URL TRANSFERFS_API_KEY TRANSFERFS_CA
  export TRANSFERFS_CONFIG_DIR="$STATE/config" TRANSFERFS_DATA_DIR="$STATE/data"
  field user.password | "${CLI[@]}" login --email "$(field user.email)" --password-stdin >/dev/null
}
