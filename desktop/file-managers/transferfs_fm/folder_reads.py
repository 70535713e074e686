"""The attributes of a folder's entries, read together when the file manager first asks about one.

Nautilus, Nemo and Caja ask an info provider about one file of a folder at a time, and ask
about the next only once the answer is in. Read one entry at a time, every entry pays a round
trip: the read handed to a GIO thread, its answer back on the main loop that also draws the
view, then the file manager's next turn. That round trip, not the mount (it answers in about
0.17 ms), made a 5,000-transfer inbox take 1.8 times as long to list with the extension.

So the first ask in a folder starts one enumeration of the folder (`enumerate_children_async`
asking for the attributes), which GIO's own threads run: lstat and getxattr of each entry, no
file is opened, no Python thread waits. It is read a chunk at a time, a little ahead of the
asks, and every later entry is answered at once on the main loop from what was read, with no
I/O there.

What was read answers each entry once, and only while fresh (`FRESH_SECONDS`). The file
manager asks about the same file again only when it was told the file changed (the
extension's refresh of a moving state, the menu's commands, the file manager's own monitor):
that ask reads the entry alone, anew, and so does one the enumeration did not cover (a file
made since). An ask about a file this record answered but through another file object is the
folder listed anew (the file manager let its files go and made new ones): a new enumeration.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import core

#: What one entry's attributes are: each of core.ATTRIBUTES' text, None where absent.
Attributes = Dict[str, Optional[str]]
Then = Callable[[Optional[Attributes]], None]

#: Entries asked of GIO per chunk of the enumeration: one answer on the main loop for this many.
CHUNK = 100
#: How many entries read and not yet asked about the enumeration keeps before it waits for asks:
#: ahead of the file manager, without holding all of a large folder, nor reading it for one ask.
READ_AHEAD = 400
#: How long an entry's attributes, once read, may answer the file manager, in seconds. An
#: enumeration left waiting for asks this long is closed (an open folder keeps the mount busy).
FRESH_SECONDS = 5.0
#: How long a folder's record is kept since it was last used, in seconds: within it, a file
#: asked about again is read alone, not the whole folder anew.
REMEMBER_SECONDS = 300.0
#: `answered`'s mark of an entry told to have changed: read alone whatever object asks.
CHANGED = None


#: What GIO is asked for, for a mount of this version: the one attribute carrying the others.
GIO_SHOWN = core.gio_attribute(core.SHOWN_ATTR)
#: What GIO is asked for, for a mount of an earlier version: each attribute (a getxattr each).
GIO_EACH = ",".join(core.gio_attribute(name) for name in core.ATTRIBUTES)


def attributes_of(info: Any, each: bool = False) -> Optional[Attributes]:
    """The attributes core makes an entry from, out of a Gio.FileInfo asked for GIO_SHOWN (None
    where the mount gave no such attribute: a mount of an earlier version), or with `each` for
    GIO_EACH."""
    if each:
        return {name: core.gio_text(info.get_attribute_string(core.gio_attribute(name))) for name in core.ATTRIBUTES}
    return core.shown_attributes(core.gio_text(info.get_attribute_string(GIO_SHOWN)))


class _Folder:
    """One folder's enumeration: what it read, what waits for it, what it answered."""

    def __init__(self, path: str, now: float) -> None:
        self.path = path
        self.enumerator: Any = None
        #: name -> (attributes, when read), not yet given to an ask.
        self.read: Dict[str, Tuple[Optional[Attributes], float]] = {}
        #: name -> what to call once the enumeration reaches it.
        self.waiting: Dict[str, List[Then]] = {}
        #: name -> the file object it was answered for (CHANGED: told it changed).
        self.answered: Dict[str, Optional[int]] = {}
        self.reading = False
        self.done = False
        self.idle_timer = False
        self.last_active = now


class FolderReads:
    """Each folder's entries' attributes, read in one enumeration per folder listed.

    `Gio` and `GLib` are the file manager's (PyGObject's) modules. An entry of a mount of an
    earlier version (no GIO_SHOWN) is answered None: read it alone. All of it runs on the main loop.
    """

    def __init__(self, Gio: Any, GLib: Any) -> None:
        self._Gio = Gio
        self._GLib = GLib
        self._attributes = "standard::name," + GIO_SHOWN
        self._folders: Dict[str, _Folder] = {}
        self._swept_at = 0.0

    def _now(self) -> float:
        # The clock GLib's is (CLOCK_MONOTONIC), without a call through PyGObject for each entry.
        return time.monotonic()

    def take(self, path: str, asker: int) -> Optional[Attributes]:
        """The attributes of `path` now, where its folder's enumeration has read them (fresh, not
        yet given); else None: then `wait`, or read it alone. `asker` tells the file manager's
        file objects apart (its hash). The first ask in a folder starts its enumeration."""
        now = self._now()
        self._sweep(now)
        folder_path, name = os.path.split(path)
        folder = self._folders.get(folder_path)
        if folder is not None and folder.answered.get(name, asker) not in (CHANGED, asker):
            # Another object for a file already answered: the folder is being listed anew.
            self._drop(self._folders.pop(folder_path))
            folder = None
        if folder is None:
            folder = self._folders[folder_path] = _Folder(folder_path, now)
            self._start(folder)
        folder.last_active = now
        if name in folder.answered:
            return None
        got = folder.read.pop(name, None)
        if got is None:
            return None
        folder.answered[name] = asker
        self._read_on(folder)
        attributes, read_at = got
        return attributes if now - read_at <= FRESH_SECONDS else None

    def wait(self, path: str, asker: int, then: Then) -> bool:
        """Whether the folder's enumeration, still under way, answers `path`: `then(attributes)`
        is called on the main loop once it reaches it, with None where it ends or fails without
        it (read it alone then). False: read it alone now (it was answered before, or the
        enumeration is over)."""
        folder_path, name = os.path.split(path)
        folder = self._folders.get(folder_path)
        if folder is None or folder.done or name in folder.answered:
            return False
        folder.answered[name] = asker
        folder.waiting.setdefault(name, []).append(then)
        self._read_on(folder)
        return True

    def forget(self, path: str) -> None:
        """`path` may have changed (a command ran on it, its state moves): it and what is below
        it are read anew when next asked about, never answered from an earlier enumeration."""
        path = path.rstrip(os.sep) or os.sep
        folder_path, name = os.path.split(path)
        folder = self._folders.get(folder_path)
        if folder is not None:
            folder.read.pop(name, None)
            if name not in folder.waiting:
                folder.answered[name] = CHANGED
        below = path.rstrip(os.sep) + os.sep
        for key in [k for k in self._folders if k == path or k.startswith(below)]:
            self._drop(self._folders.pop(key))

    # ---- the enumeration --------------------------------------------------------------------

    def _start(self, folder: _Folder) -> None:
        location = self._Gio.File.new_for_path(folder.path)
        folder.reading = True

        def opened(_source: Any, result: Any) -> None:
            folder.reading = False
            try:
                enumerator = location.enumerate_children_finish(result)
            except Exception as error:  # GLib.Error: the folder went, or is not readable; each ask is read alone
                self._end(folder, error)
                return
            if folder.done:  # let go meanwhile
                enumerator.close_async(self._GLib.PRIORITY_DEFAULT, None, None)
                return
            folder.enumerator = enumerator
            self._read_on(folder)

        location.enumerate_children_async(self._attributes, self._Gio.FileQueryInfoFlags.NOFOLLOW_SYMLINKS, self._GLib.PRIORITY_DEFAULT, None, opened)

    def _read_on(self, folder: _Folder) -> None:
        """The next chunk, while an ask waits for the enumeration or it is not far enough ahead."""
        if folder.reading or folder.done or folder.enumerator is None:
            return
        if not folder.waiting and len(folder.read) >= READ_AHEAD:
            self._close_when_idle(folder)
            return
        folder.reading = True
        enumerator = folder.enumerator

        def chunk(_source: Any, result: Any) -> None:
            folder.reading = False
            try:
                infos = enumerator.next_files_finish(result)
            except Exception as error:  # GLib.Error: the mount failed part-way
                self._end(folder, error)
                return
            if folder.done:  # let go meanwhile (its waiting asks were answered then)
                self._close(folder, enumerator)
                return
            now = self._now()
            for info in infos:
                name = info.get_name()
                attributes = attributes_of(info)
                waiting = folder.waiting.pop(name, None)
                for then in waiting or ():
                    then(attributes)
                if waiting is None and name not in folder.answered:
                    folder.read[name] = (attributes, now)
            if not infos:
                self._end(folder, None)
                return
            folder.last_active = now
            self._read_on(folder)

        enumerator.next_files_async(CHUNK, self._GLib.PRIORITY_DEFAULT, None, chunk)

    def _end(self, folder: _Folder, error: Optional[Exception]) -> None:
        """The enumeration is over (`error`: it failed): what still waits is read alone."""
        folder.done = True
        if not folder.reading:  # else the pending chunk's answer closes it
            self._close(folder, folder.enumerator)
        waiting, folder.waiting = folder.waiting, {}
        for thens in waiting.values():
            for then in thens:
                then(None)

    def _close(self, folder: _Folder, enumerator: Any) -> None:
        folder.enumerator = None
        if enumerator is not None and not enumerator.is_closed():
            enumerator.close_async(self._GLib.PRIORITY_DEFAULT, None, None)

    def _close_when_idle(self, folder: _Folder) -> None:
        """An enumeration waiting for asks is closed once none came for FRESH_SECONDS."""
        if folder.idle_timer:
            return
        folder.idle_timer = True

        def check() -> bool:
            if not folder.done and (folder.reading or self._now() - folder.last_active < FRESH_SECONDS):
                return True
            folder.idle_timer = False
            if not folder.done:
                self._end(folder, None)
            return False

        self._GLib.timeout_add_seconds(int(FRESH_SECONDS), check)

    def _drop(self, folder: _Folder) -> None:
        if not folder.done:
            self._end(folder, None)

    def _sweep(self, now: float) -> None:
        """Folders not used for REMEMBER_SECONDS are let go (looked at once a second at most)."""
        if now - self._swept_at < 1.0:
            return
        self._swept_at = now
        for key in [k for k, f in self._folders.items() if now - f.last_active > REMEMBER_SECONDS and not f.waiting]:
            self._drop(self._folders.pop(key))
