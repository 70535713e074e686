"""The menu's actions as a command, for file managers whose menus run commands (Dolphin's service
menu): `python3 -m transferfs_fm.actions ACTION PATH...`, ACTION one of keep, stop-keeping,
free, copy-link, open-link, details.

The same actions as the Python extensions' menu, from the same core: keep, stop keeping and
free run `transferfs pin`, `unpin`, `free` and say a failure in a notification; the link is
the file's transfer address or a sent transfer's `link.url`; details are `.transfer.json` as
readable lines. A menu that cannot hide an action where it does not apply (a service menu
shows its actions on every file of a type) gets a notification saying why it did nothing.
Exit code 0 when done, 1 when not, 2 for a wrong command line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from typing import List, Sequence

from . import core
from .adapter import COMMAND_TIMEOUT_SECONDS

ACTIONS = (core.KEEP, core.STOP_KEEPING, core.FREE, core.COPY_LINK, core.OPEN_LINK, core.DETAILS)


def notify(text: str) -> None:
    """A desktop notification, and the same on stderr (a service menu's stderr goes to the session's log)."""
    print("transferfs: " + text, file=sys.stderr)
    body = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    try:
        subprocess.run(["notify-send", "--app-name=transferfs", "transferfs", body], stdin=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        pass


def copy_to_clipboard(text: str) -> bool:
    """`text` on the desktop's clipboard: wl-copy on Wayland, xclip or xsel on X11, else KDE's Klipper over D-Bus."""
    tries: List[List[str]] = []
    if os.environ.get("WAYLAND_DISPLAY"):
        tries.append(["wl-copy", "--", text])
    if os.environ.get("DISPLAY"):
        tries.append(["xclip", "-selection", "clipboard", "-in"])
        tries.append(["xsel", "--clipboard", "--input"])
    tries.append(["gdbus", "call", "--session", "--dest", "org.kde.klipper", "--object-path", "/klipper",
                  "--method", "org.kde.klipper.klipper.setClipboardContents", text])
    for argv in tries:
        if shutil.which(argv[0]) is None:
            continue
        stdin = None if argv[0] in ("wl-copy", "gdbus") else text
        try:
            # xclip and xsel stay behind to hand the text over; their output is not waited for.
            done = subprocess.run(argv, input=stdin, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return True
    return False


def open_in_browser(url: str) -> bool:
    for opener in ("xdg-open", "kde-open"):
        if shutil.which(opener):
            return subprocess.run([opener, url], stdin=subprocess.DEVNULL).returncode == 0
    return False


def show_text(title: str, text: str) -> bool:
    """`text` in a window: kdialog (Dolphin's desktop), zenity, or the text editor the desktop opens a .txt with."""
    fd, name = tempfile.mkstemp(prefix="transfer-", suffix=".txt", dir=os.environ.get("XDG_RUNTIME_DIR"))
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    if shutil.which("kdialog"):
        argv = ["kdialog", "--title", title, "--textbox", name, "600", "420"]
    elif shutil.which("zenity"):
        argv = ["zenity", "--text-info", "--title=" + title, "--filename=" + name, "--width=600", "--height=420"]
    else:
        argv = ["xdg-open", name]
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL).returncode == 0
    except OSError:
        return False


def _entries(paths: Sequence[str]) -> List[core.Entry]:
    mounts = core.read_mounts()
    return [core.read_entry(p, os.path.isdir(p), mounts) for p in paths]


def run(action: str, paths: Sequence[str]) -> int:
    entries = _entries(paths)
    not_here = [e for e in entries if action not in core.menu_actions([e])]
    if not_here:
        name = core.plain_text(os.path.basename(not_here[0].path.rstrip("/")) or not_here[0].path)
        label = core.LABELS[action]
        why = "it is not on a transferfs mount" if not not_here[0].on_mount else "it does not apply there"
        notify("%s: not done for %s, %s" % (label, name, why))
        return 1
    if action in core.COMMANDS:
        argv = core.command_for(action, paths)
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_SECONDS)
            code, stderr = done.returncode, done.stderr
        except (OSError, subprocess.TimeoutExpired) as error:
            code, stderr = None, str(error)
        ok, text = core.outcome(action, paths, code, stderr)
        print(text)
        if not ok:
            notify(text)
        return 0 if ok else 1
    entry = entries[0]
    if action in (core.COPY_LINK, core.OPEN_LINK):
        url = core.link_of(entry)
        if not url:
            notify("This transfer has no link")
            return 1
        print(url)
        if action == core.COPY_LINK:
            if not copy_to_clipboard(url):
                notify("The link could not be put on the clipboard (install wl-clipboard or xclip): %s" % url)
                return 1
            return 0
        return 0 if open_in_browser(url) else 1
    folder = entry.transfer_folder
    details = core.read_details(folder) if folder else None
    if folder is None or details is None:
        notify("The details of %s could not be read" % core.plain_text(os.path.basename(entry.path)))
        return 1
    return 0 if show_text(os.path.basename(folder), core.details_text(details)) else 1


def main(argv: List[str]) -> int:
    if len(argv) < 2 or argv[0] not in ACTIONS:
        print("usage: python3 -m transferfs_fm.actions {%s} PATH..." % ",".join(ACTIONS), file=sys.stderr)
        return 2
    action, paths = argv[0], [os.path.abspath(p) for p in argv[1:]]
    if action not in core.COMMANDS and len(paths) != 1:
        print("transferfs: %s takes one path" % core.LABELS[action], file=sys.stderr)
        return 2
    return run(action, paths)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
