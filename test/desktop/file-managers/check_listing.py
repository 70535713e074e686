"""A file manager listing a folder of many transferfs entries through the extension, as Nautilus,
Nemo and Caja do: one file at a time, the next asked about once the last is answered (at once,
or through the completion, on the main loop). The extension runs under the file manager's real
binding module and GIO; what it asks GIO for is counted (a Gio whose files count their reads).
Prints one JSON line; run by test/desktop/file-manager-bindings.test.ts as
`python3 check_listing.py nautilus|nemo|caja`.

The folder is local, its entries carrying the mount's attributes, taken for a transferfs mount.
Steps: the first listing; one entry changed and asked about again by the same file object (as a
file manager told of a change does); an entry added; the extension's own command on an entry
(it is told the entry changed); the folder listed anew with new file objects; a folder of a mount
of an earlier version (no user.transferfs.shown: each entry read alone, attribute by attribute);
an entry whose reads the mount never answers (the file manager still gets its answer, "failed",
in time).
"""

import collections
import json
import os
import shutil
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# transferfs_fm: from $TRANSFERFS_FM_LIBRARY where set (as the entry files take it), else the source tree.
sys.path.insert(0, os.environ.get("TRANSFERFS_FM_LIBRARY") or os.path.join(HERE, "../../../desktop/file-managers"))
from file_info import FileInfo  # noqa: E402

flavor = sys.argv[1]
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 500
module, version = {"nautilus": ("Nautilus", "4.0"), "nemo": ("Nemo", "3.0"), "caja": ("Caja", "2.0")}[flavor]

import gi  # noqa: E402

gi.require_version(module, version)
from gi.repository import Gio, GLib, GObject  # noqa: E402

fm = getattr(__import__("gi.repository", fromlist=[module]), module)
from transferfs_fm import adapter, asks, core  # noqa: E402
from mount_attributes import give  # noqa: E402

STATES = ["online", "cached", "pinned", "partial 40%", "sent", "failed: the address is not valid"]


class CountedFile:
    """A Gio.File that counts the reads asked of it (reads of one entry, enumerations, their
    chunks); under a folder named `stuck`, the reads are never answered (a mount that hangs)."""

    def __init__(self, file, counts):
        self._file = file
        self._counts = counts
        self._stuck = "/stuck" in file.get_path()

    def query_info_async(self, *args):
        self._counts["alone"] += 1
        if not self._stuck:
            self._file.query_info_async(*args)

    def enumerate_children_async(self, *args):
        self._counts["enumerations"] += 1
        if not self._stuck:
            self._file.enumerate_children_async(*args)

    def enumerate_children_finish(self, result):
        return CountedEnumerator(self._file.enumerate_children_finish(result), self._counts)

    def get_child(self, name):
        return CountedFile(self._file.get_child(name), self._counts)

    def __getattr__(self, name):
        return getattr(self._file, name)


class CountedEnumerator:
    def __init__(self, enumerator, counts):
        self._enumerator = enumerator
        self._counts = counts

    def next_files_async(self, *args):
        self._counts["chunks"] += 1
        return self._enumerator.next_files_async(*args)

    def __getattr__(self, name):
        return getattr(self._enumerator, name)


class CountedGio:
    """Gio as the extension sees it, its files counted."""

    def __init__(self):
        self.counts = collections.Counter()
        counts = self.counts
        self.File = types.SimpleNamespace(new_for_path=lambda path: CountedFile(Gio.File.new_for_path(path), counts))

    def __getattr__(self, name):
        return getattr(Gio, name)


def main():
    completions = []
    shim = types.SimpleNamespace(
        InfoProvider=fm.InfoProvider, ColumnProvider=fm.ColumnProvider, MenuProvider=fm.MenuProvider,
        Column=fm.Column, MenuItem=fm.MenuItem, OperationResult=fm.OperationResult,
        info_provider_update_complete_invoke=lambda closure, provider, handle, result: completed(handle, result),
    )
    awaited = []

    def completed(handle, result):
        completions.append((handle, result.value_nick))
        if awaited and handle is awaited[-1]:
            loop.quit()
    root = tempfile.mkdtemp(prefix="transferfs-fm-listing-")
    inbox = os.path.join(root, "inbox")
    os.mkdir(inbox)
    names = ["transfer %04d" % i for i in range(COUNT)]
    for i, name in enumerate(names):
        p = os.path.join(inbox, name)
        os.mkdir(p)
        give(p, {core.STATE_ATTR: STATES[i % len(STATES)]})
    older_root = tempfile.mkdtemp(prefix="transferfs-fm-older-")
    core.read_mounts = lambda path="/proc/self/mountinfo": [core.Mount(m, core.FS_TYPE, "transferfs:/data") for m in (root, older_root)]
    gio = CountedGio()
    extension = adapter.build(shim, GObject, GLib, gio, "listing_" + flavor)()
    loop = GLib.MainLoop()
    results = {}

    def ask(info):
        """One update_file_info_full as the file manager makes it, waited for when in progress:
        whether it was answered at once."""
        handle = object()
        result = extension.update_file_info_full(extension, handle, None, info)
        if result in (fm.OperationResult.COMPLETE, fm.OperationResult.FAILED):
            results[info] = result.value_nick
            return True
        assert result == fm.OperationResult.IN_PROGRESS, result

        awaited.append(handle)
        gave_up = []
        give_up = GLib.timeout_add_seconds(20, lambda: gave_up.append(True) or loop.quit())
        loop.run()
        if not gave_up:
            GLib.source_remove(give_up)
        results[info] = next((r for h, r in completions if h is handle), None)
        return False

    def listing(infos):
        """The folder listed: what the extension asked of GIO for it, how many answers waited."""
        before = collections.Counter(gio.counts)
        waited = sum(0 if ask(info) else 1 for info in infos)
        return {"waited": waited, **{k: gio.counts[k] - before[k] for k in ("enumerations", "chunks", "alone")}}

    def shown(infos):
        """Each entry's column words, where they are not what its attribute says."""
        wrong = {}
        for info in infos:
            name = os.path.basename(info.location.get_path())
            state = os.getxattr(info.location.get_path(), core.STATE_ATTR).decode()
            want = core.column_text(core.Entry(info.location.get_path(), True, state=state))
            if info.attributes.get(adapter.COLUMN_ATTRIBUTE) != want:
                wrong[name] = info.attributes.get(adapter.COLUMN_ATTRIBUTE)
        return wrong

    # In the folder's own order, as a file manager lists it.
    infos = [FileInfo(os.path.join(inbox, name), True) for name in os.listdir(inbox)]
    first = listing(infos)
    first_wrong = shown(infos)
    asked = len(completions)

    # One entry changed; the file manager, told so, asks about the same file object again.
    changed = infos[len(infos) // 2]
    give(changed.location.get_path(), {core.STATE_ATTR: "pinned, fetching 40%"})
    again = listing([changed])
    # A new entry, made after the enumeration.
    added_path = os.path.join(inbox, "transfer new")
    os.mkdir(added_path)
    give(added_path, {core.STATE_ATTR: "cached"})
    added = FileInfo(added_path, True)
    new_entry = listing([added])
    # A command of the menu ran on an entry: the extension is told it changed.
    commanded = infos[1]
    give(commanded.location.get_path(), {core.STATE_ATTR: "pinned"})
    extension._after_command(True, "", [commanded])
    after_command = listing([commanded])
    # The folder listed anew: the file manager's new file objects for the same entries.
    relisted_infos = [FileInfo(os.path.join(inbox, name), True) for name in os.listdir(inbox)]
    relisted = listing(relisted_infos)
    relisted_wrong = shown(relisted_infos)
    # A mount of an earlier version, without user.transferfs.shown: the first entry is asked for it
    # and then for each attribute; the others, for each attribute at once, each alone.
    older_inbox = os.path.join(older_root, "inbox")
    os.mkdir(older_inbox)
    for i in range(5):
        p = os.path.join(older_inbox, "transfer %d" % i)
        os.mkdir(p)
        give(p, {core.STATE_ATTR: STATES[i], core.PIN_ATTR: "1"}, older=True)
    older_infos = [FileInfo(os.path.join(older_inbox, name), True) for name in sorted(os.listdir(older_inbox))]
    older = listing(older_infos)
    older_wrong = shown(older_infos)
    older_menu = extension.get_file_items([older_infos[0]]) if flavor == "nautilus" else extension.get_file_items(None, [older_infos[0]])
    # A bug in what every entry shows: each said, each answered failed (at once, or through its
    # completion), and the listing goes on to its end.
    shows = core.column_text
    core.column_text = lambda entry: (_ for _ in ()).throw(ValueError("a bug"))
    buggy_infos = [FileInfo(os.path.join(inbox, name), True) for name in os.listdir(inbox)]
    buggy = listing(buggy_infos)
    buggy_results = collections.Counter(results.get(info) for info in buggy_infos)
    core.column_text = shows
    # A mount that never answers: the file manager still gets its answer (failed), in time.
    asks.ANSWER_SECONDS = 0.2
    os.mkdir(os.path.join(root, "stuck"))
    stuck = FileInfo(os.path.join(root, "stuck", "x.bin"))
    started = GLib.get_monotonic_time()
    stuck_listing = listing([stuck])
    stuck_seconds = (GLib.get_monotonic_time() - started) / 1e6
    shutil.rmtree(root)
    shutil.rmtree(older_root)
    print(json.dumps({
        "entries": COUNT,
        "first": first,
        "firstWrong": first_wrong,
        "everyAskCompletedOnce": len(completions) == len({id(h) for h, _ in completions}),
        "completedInFirst": asked,
        "changed": {**again, "column": changed.attributes.get(adapter.COLUMN_ATTRIBUTE)},
        "added": {**new_entry, "column": added.attributes.get(adapter.COLUMN_ATTRIBUTE)},
        "afterCommand": {**after_command, "invalidated": commanded.invalidated, "column": commanded.attributes.get(adapter.COLUMN_ATTRIBUTE)},
        "relisted": relisted,
        "relistedWrong": relisted_wrong,
        "buggy": {**buggy, "results": dict(buggy_results)},
        "older": {**older, "wrong": older_wrong, "menu": [i.get_property("label") for i in older_menu]},
        "stuck": {**stuck_listing, "result": results.get(stuck), "seconds": round(stuck_seconds, 1)},
    }), flush=True)
    # A Nemo.Column finalized outside Nemo aborts the process (nemo-python 5.6): end here.
    os._exit(0)


main()
