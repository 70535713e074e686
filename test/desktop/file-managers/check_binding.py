"""Loads one file manager's transferfs extension as that file manager's Python extension does,
under its real binding module, and drives it with file objects shaped like the file manager's
FileInfo. Prints one JSON line of what it found; run by test/desktop/file-manager-bindings.test.ts
as `python3 check_binding.py nautilus|nemo|caja` (a python3 with gi and the binding).
"""

import json
import os
import runpy
import shutil
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "../../../desktop/file-managers")
sys.path.insert(0, HERE)
from file_info import FileInfo  # noqa: E402

flavor = sys.argv[1]
binding = {"nautilus": "Nautilus", "nemo": "Nemo", "caja": "Caja"}[flavor]


def main():
    module = runpy.run_path(os.path.join(SOURCE, flavor, "transferfs_%s.py" % flavor), run_name="transferfs_" + flavor)
    from gi.repository import GObject

    fm = getattr(__import__("gi.repository", fromlist=[binding]), binding)
    providers = (fm.InfoProvider, fm.ColumnProvider, fm.MenuProvider)
    classes = [v for v in module.values() if isinstance(v, type) and issubclass(v, GObject.GObject) and any(issubclass(v, p) for p in providers)]
    extension = module["TransferfsExtension"]()
    columns = extension.get_columns()

    def menu(files):
        items = extension.get_file_items(files) if flavor == "nautilus" else extension.get_file_items(None, files)
        return [i.get_property("label") for i in items]

    with tempfile.TemporaryDirectory() as d:
        local = os.path.join(d, "report.pdf")
        open(local, "w").close()
        info = FileInfo(local)
        result = extension.update_file_info_full(None, None, None, info)
        without_dialog = menu([info])
        bin_dir = os.path.join(d, "bin")
        os.mkdir(bin_dir)
        dialog = os.path.join(bin_dir, "transferfs-send-dialog")
        with open(dialog, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(dialog, 0o755)
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
        with_dialog = menu([info])
    asynchronous = read_asynchronously(fm, GObject)
    commands = run_commands()
    print(json.dumps({
        "classes": [c.__name__ for c in classes],
        "gtype": extension.__gtype_name__,
        "providers": [p.__name__ for p in providers if isinstance(extension, p)],
        "columns": [[c.get_property("name"), c.get_property("attribute"), c.get_property("label")] for c in columns],
        "localInfo": {"result": result.value_nick.replace("-", "_") if hasattr(result, "value_nick") else str(result), "emblems": info.emblems, "attributes": info.attributes},
        "localMenu": without_dialog,
        "localMenuWithDialog": with_dialog,
        "asynchronous": asynchronous,
        "commands": commands,
    }), flush=True)
    # A Nemo.Column finalized outside Nemo aborts the process (nemo-python 5.6): end here.
    os._exit(0)


def read_asynchronously(fm, GObject):
    """The asynchronous path: attributes read off the UI thread, then the emblem, the column and
    the completion on the main loop, and a changing state asked again. Entries are local files
    carrying the mount's attributes, on a folder taken for a transferfs mount; only the
    completion, whose handle and closure only the file manager itself can make, is recorded."""
    from gi.repository import Gio, GLib
    from transferfs_fm import adapter, core
    from mount_attributes import give

    completions = []
    shim = types.SimpleNamespace(
        InfoProvider=fm.InfoProvider, ColumnProvider=fm.ColumnProvider, MenuProvider=fm.MenuProvider,
        Column=fm.Column, MenuItem=fm.MenuItem, OperationResult=fm.OperationResult,
        info_provider_update_complete_invoke=lambda closure, provider, handle, result: completions.append(result.value_nick.replace("-", "_")),
    )
    root = tempfile.mkdtemp(prefix="transferfs-fm-")
    states = {
        "inbox/T": ("online", None),
        "inbox/T/a.bin": ("pinned, fetching 40%", "https://example.com/t/abc"),
        "outbox/x.bin": ("failed: the address is not valid", None),
    }
    infos = {}
    for rel, (state, url) in states.items():
        p = os.path.join(root, rel)
        if rel.endswith(".bin"):
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "w").close()
        else:
            os.makedirs(p, exist_ok=True)
        give(p, {core.STATE_ATTR: state, **({core.ORIGIN_ATTR: url} if url else {})})
        infos[rel] = FileInfo(p, not rel.endswith(".bin"))
    core.read_mounts = lambda path="/proc/self/mountinfo": [core.Mount(root, core.FS_TYPE, "transferfs:/data")]
    extension = adapter.build(shim, GObject, GLib, Gio, "check")()
    results = [extension.update_file_info_full(extension, None, None, info).value_nick.replace("-", "_") for info in infos.values()]
    loop = GLib.MainLoop()
    GLib.timeout_add(100, lambda: (loop.quit() if len(completions) == len(infos) and infos["inbox/T/a.bin"].invalidated else None) or True)
    GLib.timeout_add_seconds(10, loop.quit)
    loop.run()
    # "Copy link" on the file: its address is read (through GIO) only now, then used.
    used = []
    extension._use_link = lambda action, url: used.append((action, url)) or loop.quit()
    file_path = os.path.join(root, "inbox/T/a.bin")
    extension._activate(None, core.COPY_LINK, [extension._entries[file_path]], [infos["inbox/T/a.bin"]])
    GLib.timeout_add_seconds(10, loop.quit)
    loop.run()
    shutil.rmtree(root)
    return {
        "link": used,
        "results": results,
        "completions": completions,
        "emblems": {rel: i.emblems for rel, i in infos.items()},
        "column": {rel: i.attributes.get(adapter.COLUMN_ATTRIBUTE) for rel, i in infos.items()},
        "askedAgain": {rel: i.invalidated > 0 for rel, i in infos.items()},
        "menu": {rel: [m.get_property("label") for m in extension.get_file_items([i])] for rel, i in infos.items()},
    }


def run_commands():
    """The menu's commands as the extension runs them (GIO subprocesses, answered on the main
    loop): one that fails with its reason on stderr, one that cannot be started, one past its time."""
    from gi.repository import Gio, GLib
    from transferfs_fm import adapter

    ended = []
    loop = GLib.MainLoop()

    def done(code, stderr):
        ended.append([code, stderr.strip()])
        if len(ended) == 3:
            loop.quit()

    adapter.run_command(Gio, GLib, ["sh", "-c", "echo 'No space left on device: needs 12 MiB more' >&2; exit 3"], 10, done)
    adapter.run_command(Gio, GLib, ["/nonexistent/transferfs", "pin"], 10, done)
    adapter.run_command(Gio, GLib, ["sleep", "30"], 1, done)
    GLib.timeout_add_seconds(20, loop.quit)
    loop.run()
    return sorted(ended, key=lambda e: (e[0] is None, e[1]))


main()
