"""The extension class for Nautilus 43+ (nautilus-python 4), Nemo (nemo-python) and Caja (python-caja).

One class for the three: their Python bindings give the same providers (InfoProvider,
ColumnProvider, MenuProvider), FileInfo, Column and MenuItem under another module name, and
load a class with `update_file_info_full` as an asynchronous info provider. What differs is
handled here: `get_file_items` takes a window first in Nemo and Caja, not in Nautilus 4, and the
clipboard is GTK 4's (Gdk.Clipboard) in Nautilus, GTK 3's (Gtk.Clipboard) in Nemo and Caja.

What an entry shows and offers is core.py's; this module only asks for the attributes off the
UI thread and turns core's answers into the binding's calls. The attributes of a folder's
entries are read together, at its first entry (folder_reads.py): the other entries are then
answered at once, not one round trip through the main loop each.

No Python thread does the waiting: the file managers' Python loaders keep the interpreter's lock
while their main loop runs, so a Python thread would never run (seen in Nautilus 43). What may
wait on the mount (its attributes, link.url, .transfer.json, the transferfs commands) is asked
of GIO, whose own threads do it, with the answer back on the main loop.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence

from . import core, folder_reads
from .asks import Ask

#: The list view's column, and the FileInfo attribute it shows.
COLUMN_ATTRIBUTE = "transferfs_state"
#: How soon a changing state (fetching, waiting, sending) is asked again, in seconds.
REFRESH_SECONDS = 2
#: How long a mount found to be of an earlier version (no user.transferfs.shown) is read one
#: attribute at a time before it is asked for the one attribute again (it may have been mounted
#: anew, by the version installed since), in seconds.
OLDER_MOUNT_SECONDS = 60.0
#: The entries remembered for the menu (built on the UI thread, so from what was read before).
REMEMBERED = 20000
#: How long a read of /proc/self/mountinfo is reused: mounts come and go rarely.
MOUNTS_TTL_SECONDS = 2.0
#: A command gets this long; `transferfs pin` answers once the pin is taken, not when fetched.
COMMAND_TIMEOUT_SECONDS = 120


def local_path(file_info: Any) -> Optional[str]:
    """The file's path, or None for what is not a local file (trash:, sftp:, ...)."""
    if file_info.get_uri_scheme() != "file":
        return None
    location = file_info.get_location()
    return location.get_path() if location is not None else None


def build(fm: Any, GObject: Any, GLib: Any, Gio: Any, flavor: str) -> type:
    """The extension class for the binding module `fm` (Nautilus, Nemo or Caja).

    `flavor` names the file manager ("nautilus", "nemo", "caja"): it picks the clipboard's
    toolkit and makes the GObject type name unique.
    """
    # An entry's own attributes, not those of what a symbolic link points to.
    NOFOLLOW = Gio.FileQueryInfoFlags.NOFOLLOW_SYMLINKS

    class TransferfsExtension(GObject.GObject, fm.InfoProvider, fm.ColumnProvider, fm.MenuProvider):
        __gtype_name__ = "TransferfsExtension_" + flavor

        def __init__(self) -> None:
            super().__init__()
            self._entries: Dict[str, core.Entry] = {}
            self._mounts: List[core.Mount] = []
            self._mounts_read_at = -1.0
            self._columns: Optional[List[Any]] = None
            self._folder_reads = folder_reads.FolderReads(Gio, GLib)
            #: Mount point -> when it was found to be of an earlier version (folder_reads.GIO_EACH).
            self._older_mounts: Dict[str, float] = {}

        # ---- attributes: emblem and column --------------------------------------------------

        def get_columns(self) -> List[Any]:
            # Made once and kept: asked for again each time a view opens, and a Nemo.Column
            # finalized outside Nemo aborts the process (seen with nemo-python 5.6).
            if self._columns is None:
                self._columns = [
                    fm.Column(
                        name="Transferfs::state",
                        attribute=COLUMN_ATTRIBUTE,
                        label="Transfer",
                        description="Where it stands in transferfs: on this computer, kept, being sent",
                    )
                ]
            return self._columns

        def _current_mounts(self) -> List[core.Mount]:
            now = time.monotonic()
            if now - self._mounts_read_at > MOUNTS_TTL_SECONDS:
                self._mounts = core.read_mounts()
                self._mounts_read_at = now
            return self._mounts

        def update_file_info_full(self, provider: Any, handle: Any, closure: Any, file_info: Any) -> Any:
            path = local_path(file_info)
            mounts = self._current_mounts()
            mount_point = None if path is None else core.transferfs_mount_of(mounts, path)
            if path is None or mount_point is None:
                # A local file shows nothing: no thread, no system call.
                return fm.OperationResult.COMPLETE
            is_dir = file_info.is_directory()
            if self._is_older(mount_point):
                # Its folder's enumeration would read nothing of use: each entry is read alone.
                ask = Ask(fm, GLib, provider, handle, closure, path)
                self._read_alone(ask, file_info, is_dir, mounts)
                return fm.OperationResult.IN_PROGRESS
            # The file manager's object for the file (PyGObject hashes the GObject's address):
            # the same one asked again was told the file changed; folder_reads.py tells them apart.
            asker = hash(file_info)
            attributes = self._folder_reads.take(path, asker)
            entry = None
            if attributes is not None:
                try:
                    entry = core.entry_from(path, is_dir, mounts, attributes.get)
                    if not core.wants_link_file(entry):
                        # Its folder's enumeration read it: answered now, with no I/O and no round
                        # trip through the main loop (what made a long listing slow).
                        self._show(file_info, entry)
                        return fm.OperationResult.COMPLETE
                except Exception as error:  # a bug: said, and the file manager goes on with the next file
                    print("transferfs: showing %s: %s" % (core.plain_text(path), core.plain_text(str(error))), file=sys.stderr)
                    return fm.OperationResult.FAILED
            ask = Ask(fm, GLib, provider, handle, closure, path)
            if entry is not None:
                self._link_file(ask, file_info, entry)
            elif not self._folder_reads.wait(path, asker, lambda attributes: self._answer(ask, file_info, is_dir, mounts, attributes)):
                self._read_alone(ask, file_info, is_dir, mounts)
            return fm.OperationResult.IN_PROGRESS

        def _is_older(self, mount_point: str) -> bool:
            found = self._older_mounts.get(mount_point)
            if found is not None and time.monotonic() - found > OLDER_MOUNT_SECONDS:
                del self._older_mounts[mount_point]
                return False
            return found is not None

        def _read_alone(self, ask: Ask, file_info: Any, is_dir: bool, mounts: List[core.Mount]) -> None:
            """One entry's attributes asked of GIO, as its folder's enumeration could not answer."""
            location = Gio.File.new_for_path(ask.path)
            mount_point = core.transferfs_mount_of(mounts, ask.path) or ""
            each = self._is_older(mount_point)

            def read(_source: Any, result: Any) -> None:
                try:
                    info = location.query_info_finish(result)
                except Exception as error:  # GLib.Error: the file went, the mount failed
                    ask.fail(error)
                    return
                attributes = folder_reads.attributes_of(info, each)
                if attributes is None:
                    # No user.transferfs.shown: a mount of an earlier version, asked for each attribute.
                    self._older_mounts[mount_point] = time.monotonic()
                    self._read_alone(ask, file_info, is_dir, mounts)
                    return
                self._answer(ask, file_info, is_dir, mounts, attributes)

            location.query_info_async(folder_reads.GIO_EACH if each else folder_reads.GIO_SHOWN, NOFOLLOW, GLib.PRIORITY_DEFAULT, None, read)

        def _answer(self, ask: Ask, file_info: Any, is_dir: bool, mounts: List[core.Mount], attributes: Optional[folder_reads.Attributes]) -> None:
            """`ask` answered from `attributes` (None: its folder's enumeration ended without it)."""
            if attributes is None:
                self._read_alone(ask, file_info, is_dir, mounts)
                return
            try:
                entry = core.entry_from(ask.path, is_dir, mounts, attributes.get)
                with_link_file = core.wants_link_file(entry)
            except Exception as error:  # a bug: said, and the file manager still gets its answer
                ask.fail(error)
                return
            if with_link_file:
                self._link_file(ask, file_info, entry)
            else:
                self._finish(ask, file_info, entry)

        def _finish(self, ask: Ask, file_info: Any, entry: core.Entry) -> None:
            """`entry` shown on the file manager's object while `ask` is open, then `ask` completed."""
            try:
                if ask.open:
                    self._show(file_info, entry)
            except Exception as error:  # a bug: said, and the file manager still gets its answer
                ask.fail(error)
                return
            ask.complete()

        def _link_file(self, ask: Ask, file_info: Any, entry: core.Entry) -> None:
            """A sent transfer's folder: whether it shows link.url, then the answer."""

            def linked(child: Any, result: Any) -> None:
                try:
                    child.query_info_finish(result)
                    entry.has_link_file = True
                except Exception:  # GLib.Error: no link.url
                    pass
                self._finish(ask, file_info, entry)

            Gio.File.new_for_path(entry.path).get_child("link.url").query_info_async("standard::type", NOFOLLOW, GLib.PRIORITY_DEFAULT, None, linked)

        def _show(self, file_info: Any, entry: core.Entry) -> None:
            """The entry's emblem and column on the file manager's file, and remembered for the menu."""
            self._remember(entry)
            name = core.emblem(entry)
            if name:
                file_info.add_emblem(name)
            file_info.add_string_attribute(COLUMN_ATTRIBUTE, core.column_text(entry))
            if core.is_changing(entry):
                GLib.timeout_add_seconds(REFRESH_SECONDS, self._refresh, file_info, entry.path)

        def cancel_update(self, provider: Any, handle: Any) -> None:
            # Nothing to stop: the file manager drops a cancelled request's completion itself (it
            # completes only the request in progress). Nor can the request be found by `handle`:
            # Nautilus passes an uninitialised pointer, the same value for many requests.
            pass

        def _refresh(self, file_info: Any, path: str) -> bool:
            if not file_info.is_gone():
                self._folder_reads.forget(path)
                file_info.invalidate_extension_info()
            return False

        def _remember(self, entry: core.Entry) -> None:
            self._entries.pop(entry.path, None)
            self._entries[entry.path] = entry
            while len(self._entries) > REMEMBERED:
                self._entries.pop(next(iter(self._entries)))

        # ---- the menu -------------------------------------------------------------------------

        def get_file_items(self, *args: Any) -> List[Any]:
            # Nautilus 4 passes (files); Nemo and Caja (window, files).
            files = args[-1]
            entries = []
            mounts = self._current_mounts()
            for file_info in files:
                path = local_path(file_info)
                if path is None:
                    return []
                if core.transferfs_mount_of(mounts, path) is None:
                    entries.append(core.Entry(path, file_info.is_directory()))
                    continue
                # Built on the UI thread: from what the attributes said when last read, never a
                # new read of the mount here (a slow mount must not freeze the menu).
                entry = self._entries.get(path)
                if entry is None:
                    return []
                entries.append(entry)
            items = []
            for action in core.menu_actions(entries, can_send=shutil.which(SEND_DIALOG) is not None):
                item = fm.MenuItem(name="Transferfs::" + action, label=core.LABELS[action], tip=core.TIPS[action], icon="")
                item.connect("activate", self._activate, action, entries, list(files))
                items.append(item)
            return items

        def get_background_items(self, *args: Any) -> List[Any]:
            return []

        def _activate(self, _item: Any, action: str, entries: Sequence[core.Entry], files: Sequence[Any]) -> None:
            if action in core.COMMANDS:
                self._run_command(action, [e.path for e in entries], files)
            elif action in (core.COPY_LINK, core.OPEN_LINK):
                entry = entries[0]
                if entry.origin_url:
                    self._use_link(action, entry.origin_url)
                elif entry.has_page:
                    read_attribute(Gio, entry.path, core.ORIGIN_ATTR, lambda url: self._use_link(action, url if url and core.is_web_address(url) else None))
                elif entry.has_link_file:
                    read_text(Gio, os.path.join(entry.path, "link.url"), lambda text: self._use_link(action, text and core.link_from_text(text)))
            elif action == core.DETAILS:
                folder = entries[0].transfer_folder
                if folder:
                    read_text(Gio, os.path.join(folder, ".transfer.json"), lambda text: self._show_details(folder, text and core.details_from_text(text)))
            elif action == core.SEND:
                start([SEND_DIALOG] + [e.path for e in entries], Gio)

        def _run_command(self, action: str, paths: List[str], files: Sequence[Any]) -> None:
            def ended(code: Optional[int], stderr: str) -> None:
                self._after_command(*core.outcome(action, paths, code, stderr), files)

            run_command(Gio, GLib, core.command_for(action, paths), COMMAND_TIMEOUT_SECONDS, ended)

        def _after_command(self, ok: bool, text: str, files: Sequence[Any]) -> None:
            for file_info in files:
                # Its state (and that of what is below it) changed: read anew, never answered
                # from an enumeration made before.
                path = local_path(file_info)
                if path is not None:
                    self._folder_reads.forget(path)
                file_info.invalidate_extension_info()
            if not ok:
                notify(Gio, text)

        def _use_link(self, action: str, url: Optional[str]) -> None:
            if not url:
                notify(Gio, "This transfer has no link")
            elif action == core.COPY_LINK:
                copy_text(flavor, url)
            else:
                open_uri(Gio, url)

        def _show_details(self, folder: str, details: Optional[dict]) -> None:
            if details is None:
                notify(Gio, "The details of %s could not be read" % core.plain_text(os.path.basename(folder)))
                return
            text = core.details_text(details)
            # In the session's runtime folder (private, emptied at logout): the viewer reads it
            # after this returns, so it is not removed here.
            fd, name = tempfile.mkstemp(prefix="transfer-", suffix=".txt", dir=os.environ.get("XDG_RUNTIME_DIR"))
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            if shutil.which("zenity"):
                start(["zenity", "--text-info", "--title=" + os.path.basename(folder), "--filename=" + name, "--width=600", "--height=420"], Gio)
            else:
                open_uri(Gio, Gio.File.new_for_path(name).get_uri())

    return TransferfsExtension


def read_attribute(Gio: Any, path: str, name: str, then: Any) -> None:
    """`then(text)` on the main loop once GIO has read the extended attribute `name` of `path`
    (None: it has none, or it could not be read)."""
    attribute = core.gio_attribute(name)

    def read(source: Any, result: Any) -> None:
        try:
            text = core.gio_text(source.query_info_finish(result).get_attribute_string(attribute))
        except Exception:  # GLib.Error: gone, or the mount failed
            text = None
        then(text)

    Gio.File.new_for_path(path).query_info_async(attribute, Gio.FileQueryInfoFlags.NOFOLLOW_SYMLINKS, 0, None, read)  # 0: GLib.PRIORITY_DEFAULT


def read_text(Gio: Any, path: str, then: Any) -> None:
    """`then(text)` on the main loop once GIO has read the file at `path` (None: it could not)."""

    def loaded(source: Any, result: Any) -> None:
        try:
            _ok, data, _etag = source.load_contents_finish(result)
            text = bytes(data).decode("utf-8", "replace")
        except Exception:  # GLib.Error: gone, or the mount failed
            text = None
        then(text)

    Gio.File.new_for_path(path).load_contents_async(None, loaded)


def run_command(Gio: Any, GLib: Any, argv: List[str], timeout_seconds: int, ended: Any) -> None:
    """`argv` run by GIO, its stderr kept; `ended(code, stderr)` on the main loop, code None
    where it could not be run or was stopped after `timeout_seconds`."""
    try:
        process = Gio.Subprocess.new(argv, Gio.SubprocessFlags.STDOUT_SILENCE | Gio.SubprocessFlags.STDERR_PIPE)
    except Exception as error:  # GLib.Error: not installed, not executable
        ended(None, getattr(error, "message", None) or str(error))
        return
    timer = {"late": False}

    def stop() -> bool:
        timer["late"] = True
        process.force_exit()
        return False

    source = GLib.timeout_add_seconds(timeout_seconds, stop)

    def communicated(_process: Any, result: Any) -> None:
        try:
            _ok, _stdout, stderr = process.communicate_utf8_finish(result)
        except Exception as error:  # GLib.Error
            stderr = getattr(error, "message", None) or str(error)
        if timer["late"]:
            ended(None, "no answer within %d s" % timeout_seconds)
            return
        GLib.source_remove(source)
        ended(process.get_exit_status() if process.get_if_exited() else None, stderr or "")

    process.communicate_utf8_async(None, None, communicated)


#: The send dialog's program; "Send with transferfs…" is offered once it is installed.
SEND_DIALOG = "transferfs-send-dialog"


def start(argv: List[str], Gio: Any) -> None:
    """`argv` started on its own, not waited for; a program that cannot be started is said, not raised in the file manager."""
    try:
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as error:
        notify(Gio, "%s could not be started: %s" % (os.path.basename(argv[0]), core.plain_text(str(error))))


def open_uri(Gio: Any, uri: str) -> None:
    """`uri` in the desktop's default application for it (the browser for a link)."""
    try:
        Gio.AppInfo.launch_default_for_uri(uri, None)
    except Exception as error:  # GLib.Error: no application for it
        notify(Gio, "Could not open %s: %s" % (core.plain_text(uri), core.plain_text(str(error))))


def notify(Gio: Any, text: str) -> None:
    """A desktop notification (through `notify-send` when present); the text is already plain."""
    # The body may be read as markup by the notification server: & < > as entities.
    body = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    try:
        subprocess.Popen(["notify-send", "--app-name=transferfs", "transferfs", body], stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        print("transferfs: " + text, file=sys.stderr)


def copy_text(flavor: str, text: str) -> None:
    """`text` on the clipboard, through the file manager's own toolkit (GTK 4 for Nautilus, GTK 3 otherwise)."""
    import gi

    if flavor == "nautilus":
        gi.require_version("Gdk", "4.0")
        from gi.repository import Gdk

        display = Gdk.Display.get_default()
        if display is not None:
            display.get_clipboard().set(text)
    else:
        gi.require_version("Gtk", "3.0")
        from gi.repository import Gdk, Gtk

        Gtk.Clipboard.get(Gdk.SELECTION_CLIPBOARD).set_text(text, -1)
