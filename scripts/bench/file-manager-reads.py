"""What the transferfs extension asks the mount for each entry of a folder, without a file
manager: for scripts/bench/file-manager.ts, to tell the mount's share of the extension's cost
from Nautilus's. Prints one JSON object of milliseconds.

  file-manager-reads.py FOLDER

- `syscalls`: each entry's lstat and its attributes in one read (os.getxattr of
  user.transferfs.shown), one entry after another;
- `gio`: each entry's read alone (Gio.File.query_info_async of the same attributes, answered on
  a GLib main loop), one entry after another as Nautilus asks its extensions: what the extension
  did for every entry before it read folders whole;
- `enumeration`: the extension's own reads (folder_reads.py: one enumeration of the folder with
  the attributes, read a chunk at a time by GIO's threads), each entry taken in the folder's order
  as Nautilus asks, the next once the last is answered.
"""

import json
import os
import sys
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "desktop", "file-managers"))
from transferfs_fm import core, folder_reads  # noqa: E402

folder = sys.argv[1]
paths = [os.path.join(folder, name) for name in sorted(os.listdir(folder))]

t0 = time.monotonic()
for p in paths:
    os.lstat(p)
    try:
        os.getxattr(p, core.SHOWN_ATTR, follow_symlinks=False)
    except OSError:
        pass
syscalls = (time.monotonic() - t0) * 1000

loop = GLib.MainLoop()
left = list(reversed(paths))
failed = []


def next_one():
    if not left:
        loop.quit()
        return
    location = Gio.File.new_for_path(left.pop())

    def read(source, result):
        try:
            source.query_info_finish(result)
        except GLib.Error as error:
            failed.append(error.message)
        next_one()

    location.query_info_async(folder_reads.GIO_SHOWN, Gio.FileQueryInfoFlags.NOFOLLOW_SYMLINKS, GLib.PRIORITY_DEFAULT, None, read)


t0 = time.monotonic()
GLib.idle_add(lambda: next_one() and False)
loop.run()
gio = (time.monotonic() - t0) * 1000

reads = folder_reads.FolderReads(Gio, GLib)
listed = [os.path.join(folder, name) for name in os.listdir(folder)]
left = list(reversed(listed))
missed = []


def take_on():
    while left:
        p = left.pop()
        if reads.take(p, 0) is not None:
            continue

        def then(attributes, p=p):
            if attributes is None:
                missed.append(p)
            take_on()

        if not reads.wait(p, 0, then):
            missed.append(p)
            continue
        return
    loop.quit()


t0 = time.monotonic()
GLib.idle_add(lambda: take_on() and False)
loop.run()
enumeration = (time.monotonic() - t0) * 1000
print(json.dumps({"entries": len(paths), "syscalls": syscalls, "gio": gio, "enumeration": enumeration, "failed": len(failed), "missed": len(missed)}))
