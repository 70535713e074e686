"""What the file-manager extensions' core makes of real paths: `read_entries.py read PATH...`
prints one JSON object per path (its state, kind, emblem, column words, menu, link);
`read_entries.py act ACTION PATH...` runs the action's transferfs command as the menu does and
prints whether it was done and what the user is told. Used by test/send-mount/file-manager.test.ts.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../desktop/file-managers"))
from transferfs_fm import core  # noqa: E402


def read(paths):
    mounts = core.read_mounts()
    out = []
    for p in paths:
        e = core.read_entry(p, os.path.isdir(p), mounts)
        out.append({
            "path": p,
            "onMount": e.on_mount,
            "state": e.state,
            "kind": core.state_kind(e.state),
            "emblem": core.emblem(e),
            "column": core.column_text(e),
            "menu": core.menu_actions([e]),
            "pinnedItself": e.pinned_itself,
            "link": core.link_of(e),
            "details": core.details_text(core.read_details(e.transfer_folder) or {}) if e.transfer_folder else None,
        })
    print(json.dumps(out))


def act(action, paths):
    argv = core.command_for(action, paths)
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    ok, text = core.outcome(action, paths, done.returncode, done.stderr)
    print(json.dumps({"ok": ok, "text": text}))


if sys.argv[1] == "read":
    read(sys.argv[2:])
else:
    act(sys.argv[2], sys.argv[3:])
