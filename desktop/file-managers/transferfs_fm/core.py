"""What a file manager shows of a path on a transferfs mount, and what its menu offers.

Pure Python with no GUI import, so that Nautilus, Nemo and Caja share it (their adapters,
adapter.py, only turn its answers into their API's calls) and tests run it without a desktop.

Everything here is worked out from the mount's extended attributes (`user.transferfs.state`,
`user.transferfs.pin`, `user.xdg.origin.url`, all three read at once as `user.transferfs.shown`),
from /proc/self/mountinfo, and from looking names up: a received file's content is never opened, so showing a folder of 5,000 transfers fetches
nothing. The actions run the `transferfs` commands (pin, unpin, free); nothing is reimplemented.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .details import details_from_text, details_text, is_web_address, link_from_text, read_details, read_link_file  # noqa: F401 (the extensions' API)
from .mounts import FS_TYPE, Mount, parse_mountinfo, read_mounts, transferfs_mount_of  # noqa: F401
from .shown import plain_text

STATE_ATTR = "user.transferfs.state"
PIN_ATTR = "user.transferfs.pin"
ORIGIN_ATTR = "user.xdg.origin.url"
#: The three above in one short read: the state, then on a second line `pin` (pinned itself)
#: and `page` (it carries its page, whose address is read when used). One getxattr for each
#: entry of a folder instead of three, which kept a listing of thousands of transfers a third
#: slower than without the extension. Mounts of versions before it have none of it, and are
#: read one attribute at a time.
SHOWN_ATTR = "user.transferfs.shown"
#: What SHOWN_ATTR gives for ORIGIN_ATTR where the entry carries its page: the address is not
#: read yet (entry_from: has_page, no origin_url).
PAGE_NOT_READ = ""

#: The files the mount makes of a transfer's details: never pinned, freed or sent.
MADE_FILES = frozenset({".transfer.json", "link.url", ".password", ".forward"})

#: How deep a transfer's own folder is below the mount, by the area it is in.
TRANSFER_DEPTH = {"inbox": 2, "sent": 2, "by-id": 2, "search": 3}

# ---- what a path is ---------------------------------------------------------------------------


@dataclass
class Entry:
    """A path as the file manager shows it, with what its attributes said."""

    path: str
    is_dir: bool
    #: The transferfs mount it is on; None for a local path.
    mount_point: Optional[str] = None
    #: `user.transferfs.state`, None where the mount gives none (sent/ itself, .transfer.json, ...).
    state: Optional[str] = None
    #: `user.transferfs.pin` reads `1`: pinned itself (not only through a folder above it).
    pinned_itself: bool = False
    #: A received or sent file's transfer address (`user.xdg.origin.url`).
    origin_url: Optional[str] = None
    #: A sent transfer's folder that shows `link.url`.
    has_link_file: bool = False
    parts: Tuple[str, ...] = field(default_factory=tuple)
    #: It carries its transfer's address (`user.xdg.origin.url`): `origin_url` where it was
    #: read, else read when a menu entry uses it.
    has_page: bool = False

    def __post_init__(self) -> None:
        self.has_page = self.has_page or self.origin_url is not None

    @property
    def on_mount(self) -> bool:
        return self.mount_point is not None

    @property
    def area(self) -> Optional[str]:
        return self.parts[0] if self.parts else None

    @property
    def transfer_folder(self) -> Optional[str]:
        """The folder of the transfer this entry is (in), or None (outbox, the areas themselves)."""
        depth = TRANSFER_DEPTH.get(self.area or "")
        if depth is None or len(self.parts) < depth or self.mount_point is None:
            return None
        return os.path.join(self.mount_point, *self.parts[:depth])

    @property
    def is_transfer_folder(self) -> bool:
        return self.transfer_folder is not None and len(self.parts) == TRANSFER_DEPTH[self.area or ""]

    @property
    def pinnable(self) -> bool:
        """What a pin can keep: inbox/ and what is in it, a search and what it found, a transfer of sent/ or by-id/ and what is in it."""
        if not self.parts or self.parts[-1] in MADE_FILES:
            return False
        area = self.area
        if area == "inbox":
            return True
        if area == "search":
            return len(self.parts) >= 2
        if area in ("sent", "by-id"):
            return len(self.parts) >= 2
        return False


def _xattr(path: str, name: str) -> Optional[str]:
    try:
        return os.getxattr(path, name, follow_symlinks=False).decode("utf-8", "replace")
    except OSError:
        return None


#: The attributes an entry is made from.
ATTRIBUTES = (STATE_ATTR, PIN_ATTR, ORIGIN_ATTR)


def shown_attributes(text: Optional[str]) -> Optional[Dict[str, Optional[str]]]:
    """Each of ATTRIBUTES' text from SHOWN_ATTR's value (None where absent; ORIGIN_ATTR's is
    PAGE_NOT_READ where the entry has it); None where there is no such value (a mount of an
    earlier version)."""
    if text is None:
        return None
    state, _, flags = text.partition("\n")
    words = flags.split()
    return {
        STATE_ATTR: state or None,
        PIN_ATTR: "1" if "pin" in words else None,
        ORIGIN_ATTR: PAGE_NOT_READ if "page" in words else None,
    }


def gio_attribute(xattr: str) -> str:
    """GIO's name of a `user.` extended attribute (`xattr::` is GIO's user namespace)."""
    if not xattr.startswith("user."):
        raise ValueError("not a user attribute: %r" % xattr)
    return "xattr::" + xattr[len("user."):]


def gio_text(value: Optional[str]) -> Optional[str]:
    """An attribute's text as GIO gives it (each byte that is not printable ASCII, and the
    backslash, written as \\xNN) back as the text the mount wrote."""
    if value is None:
        return None
    if "\\" not in value:  # nothing escaped: printable ASCII, as the mount wrote it
        return value
    raw = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), value)
    return raw.encode("latin-1", "replace").decode("utf-8", "replace")


def entry_from(path: str, is_dir: bool, mounts: Sequence[Mount], attribute: Callable[[str], Optional[str]]) -> Entry:
    """`path` as its attributes say, `attribute(name)` giving each of ATTRIBUTES' text (None where absent).

    `has_link_file` is left to the caller, where `wants_link_file` says it matters.
    """
    path = os.path.abspath(path)
    mount_point = transferfs_mount_of(mounts, path)
    if mount_point is None:
        return Entry(path, is_dir)
    # `path` is absolute and normal, and at or under `mount_point`: what follows it is the
    # relative path (os.path.relpath costs more, once for each entry a folder lists).
    parts = tuple(p for p in path[len(mount_point):].split(os.sep) if p)
    entry = Entry(path, is_dir, mount_point=mount_point, parts=parts)
    entry.state = attribute(STATE_ATTR)
    entry.pinned_itself = attribute(PIN_ATTR) == "1"
    # Files carry their transfer's page, and so do transfers' own folders (received ones too,
    # which have no link.url); the folders inside a transfer carry none.
    if not is_dir or entry.is_transfer_folder:
        url = attribute(ORIGIN_ATTR)
        entry.origin_url = url if url and is_web_address(url) else None
        entry.has_page = entry.origin_url is not None or url == PAGE_NOT_READ
    return entry


def wants_link_file(entry: Entry) -> bool:
    """Whether the entry is a sent transfer's folder, which may show `link.url`."""
    return entry.is_dir and entry.area == "sent" and entry.is_transfer_folder


def read_entry(path: str, is_dir: bool, mounts: Sequence[Mount]) -> Entry:
    """`path` and what its attributes say, read here. Reads attributes and looks names up; opens nothing.

    Blocks as long as the mount takes to answer: the extensions ask GIO instead (adapter.py).
    """
    read: List[Optional[Dict[str, Optional[str]]]] = []

    def attribute(name: str) -> Optional[str]:
        # SHOWN_ATTR once, at the first attribute asked for (none for a path off the mount);
        # a mount without it is asked for each attribute.
        if not read:
            read.append(shown_attributes(_xattr(path, SHOWN_ATTR)))
        shown = read[0]
        return shown.get(name) if shown is not None else _xattr(path, name)

    entry = entry_from(path, is_dir, mounts, attribute)
    if wants_link_file(entry):
        entry.has_link_file = os.path.lexists(os.path.join(entry.path, "link.url"))
    return entry


# ---- state: kind, emblem, words ---------------------------------------------------------------

#: The kinds of state an entry can be in, each with its emblem: icon names of the freedesktop
#: Icon Naming Specification or of Adwaita, which other themes follow, so no icon is shipped.
EMBLEMS: Dict[str, str] = {
    "online": "emblem-web",  # only on the service
    "partial": "emblem-downloads",  # partly here
    "cached": "emblem-default",  # on this computer
    "pinned": "emblem-favorite",  # kept on this computer
    "fetching": "emblem-synchronizing",  # being fetched to be kept
    "waiting": "appointment-soon",  # waiting to send
    "sending": "emblem-synchronizing",
    "sent": "emblem-shared",
    "failed": "emblem-important",  # a send, or fetching what a pin keeps, failed
}

_PERCENT = r"(\d{1,3})%"


# Kept for the few texts a folder's entries carry (most are "online" or "cached"): they are
# worked out once for each entry a file manager lists.
@functools.lru_cache(maxsize=1024)
def state_kind(state: Optional[str]) -> Optional[str]:
    """The kind of a `user.transferfs.state` text (src/vfs/state-words.ts), or None (no state, `empty`, words unknown)."""
    if not state:
        return None
    s = state.strip()
    if s == "online":
        return "online"
    if s == "cached":
        return "cached"
    if s == "pinned":
        return "pinned"
    if re.fullmatch(r"partial " + _PERCENT, s):
        return "partial"
    if re.fullmatch(r"pinned, fetching " + _PERCENT, s):
        return "fetching"
    if s.startswith("pinned, failed: "):
        return "failed"
    if re.fullmatch(r"\d+ of \d+ files pinned", s):
        return "partial"
    if s == "waiting":
        return "waiting"
    if re.fullmatch(r"sending " + _PERCENT, s):
        return "sending"
    if s == "sent":
        return "sent"
    if s.startswith("failed: "):
        return "failed"
    # A folder's sends summed up: "2 of 4 sent, 1 sending 40%, 1 waiting, 1 failed".
    pieces = [p.strip() for p in s.split(",")]
    if all(re.fullmatch(r"\d+ of \d+ sent|\d+ sending " + _PERCENT + r"|\d+ waiting|\d+ failed", p) for p in pieces):
        for kind in ("failed", "sending", "waiting"):
            if any(re.search(r"\b" + kind + r"\b", p) for p in pieces):
                return kind
        return "sent"
    return None


def emblem(entry: Entry) -> Optional[str]:
    kind = state_kind(entry.state)
    return EMBLEMS.get(kind) if kind else None


def is_changing(entry: Entry) -> bool:
    """Whether the state moves by itself (a fetch, a send), so the file manager should ask again soon."""
    return state_kind(entry.state) in ("fetching", "waiting", "sending")


def column_text(entry: Entry) -> str:
    """The "Transfer" column's words: the state said for people, percentages kept."""
    return _column_words(entry.state)


@functools.lru_cache(maxsize=1024)
def _column_words(state: Optional[str]) -> str:
    s = (state or "").strip()
    if not s:
        return ""
    m = re.fullmatch(r"partial " + _PERCENT, s)
    if m:
        return "Partly here (%s%%)" % m.group(1)
    m = re.fullmatch(r"pinned, fetching " + _PERCENT, s)
    if m:
        return "Keeping: fetching %s%%" % m.group(1)
    if s.startswith("pinned, failed: "):
        return "Keeping failed: " + plain_text(s[len("pinned, failed: "):])
    m = re.fullmatch(r"(\d+) of (\d+) files pinned", s)
    if m:
        return "%s of %s files kept" % (m.group(1), m.group(2))
    m = re.fullmatch(r"sending " + _PERCENT, s)
    if m:
        return "Sending %s%%" % m.group(1)
    if s.startswith("failed: "):
        return "Failed: " + plain_text(s[len("failed: "):])
    words = {
        "online": "Only on the service",
        "cached": "On this computer",
        "pinned": "Kept on this computer",
        "waiting": "Waiting to send",
        "sent": "Sent",
        "empty": "Empty",
    }
    if s in words:
        return words[s]
    text = plain_text(s)
    return text[:1].upper() + text[1:]


# ---- the menu ---------------------------------------------------------------------------------

KEEP = "keep"
STOP_KEEPING = "stop-keeping"
FREE = "free"
COPY_LINK = "copy-link"
OPEN_LINK = "open-link"
DETAILS = "details"
SEND = "send"

LABELS: Dict[str, str] = {
    KEEP: "Keep on this computer",
    STOP_KEEPING: "Stop keeping",
    FREE: "Free up space",
    COPY_LINK: "Copy link",
    OPEN_LINK: "Open in browser",
    DETAILS: "Show details",
    SEND: "Send with transferfs…",
}

TIPS: Dict[str, str] = {
    KEEP: "Fetch it now and keep it on this computer, also offline",
    STOP_KEEPING: "Let it go when space is needed",
    FREE: "Drop its copy on this computer; it stays on the service",
    COPY_LINK: "Copy the transfer's link",
    OPEN_LINK: "Open the transfer's page in the browser",
    DETAILS: "Show the transfer's details",
    SEND: "Send it as a transfer",
}

#: The commands behind the actions that change what is kept: `transferfs <command> PATH...`.
COMMANDS: Dict[str, str] = {KEEP: "pin", STOP_KEEPING: "unpin", FREE: "free"}


def _applies(action: str, e: Entry) -> bool:
    kind = state_kind(e.state)
    if action == KEEP:
        return e.on_mount and e.pinnable and not e.pinned_itself and kind in ("online", "partial", "cached")
    if action == STOP_KEEPING:
        return e.on_mount and e.pinned_itself
    if action == FREE:
        # A pin's files keep their bytes: freeing is for what the cache holds besides.
        return e.on_mount and e.pinnable and kind in ("partial", "cached") and not (e.state or "").startswith("pinned")
    if action in (COPY_LINK, OPEN_LINK):
        return e.on_mount and (e.has_page or e.has_link_file)
    if action == DETAILS:
        return e.on_mount and e.transfer_folder is not None
    if action == SEND:
        return not e.on_mount
    return False


def menu_actions(entries: Sequence[Entry], can_send: bool = True) -> List[str]:
    """The actions that apply to every one of the selected entries, in menu order.

    The link and the details are of one transfer, so they are offered for one entry at a time;
    "Send with transferfs…" needs the send dialog (`can_send`).
    """
    if not entries:
        return []
    single = (COPY_LINK, OPEN_LINK, DETAILS)
    out = []
    for action in (KEEP, STOP_KEEPING, FREE, COPY_LINK, OPEN_LINK, DETAILS, SEND):
        if action in single and len(entries) != 1:
            continue
        if action == SEND and not can_send:
            continue
        if all(_applies(action, e) for e in entries):
            out.append(action)
    return out


# ---- running the actions ----------------------------------------------------------------------


def transferfs_command(env: Mapping[str, str] = os.environ) -> List[str]:
    """How to run transferfs: `TRANSFERFS_COMMAND` (words, as a shell splits them) or `transferfs`."""
    words = shlex.split(env.get("TRANSFERFS_COMMAND", ""))
    return words or ["transferfs"]


def command_for(action: str, paths: Sequence[str], env: Mapping[str, str] = os.environ) -> List[str]:
    """The command line that does `action` (keep, stop keeping, free) for `paths`."""
    if action not in COMMANDS:
        raise ValueError("no command for %r" % action)
    return transferfs_command(env) + [COMMANDS[action]] + [os.path.abspath(p) for p in paths]


_DONE = {KEEP: "Keeping", STOP_KEEPING: "No longer keeping", FREE: "Freed the space of"}
_FAILED = {KEEP: "Could not keep", STOP_KEEPING: "Could not stop keeping", FREE: "Could not free the space of"}


def _names(paths: Sequence[str]) -> str:
    names = [plain_text(os.path.basename(p.rstrip("/")) or p) for p in paths]
    return names[0] if len(names) == 1 else "%s and %d more" % (names[0], len(names) - 1)


def outcome(action: str, paths: Sequence[str], code: Optional[int], stderr: str) -> Tuple[bool, str]:
    """What to tell the user once an action's command ended: (done, words).

    A failure says the command's own reason (its last line: "No space left on device: ... needs
    12 MiB more" for a pin over the cache's budget); `code` None: it could not be started.
    """
    what = _names(paths)
    if code == 0:
        return True, "%s %s" % (_DONE[action], what)
    if code is None:
        return False, "%s %s: the transferfs command could not be run (%s)" % (_FAILED[action], what, plain_text(stderr.strip() or "not installed"))
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    reason = lines[-1] if lines else "transferfs ended with code %d" % code
    reason = re.sub(r"^(transferfs|error)\s*:\s*", "", reason, flags=re.IGNORECASE)
    return False, "%s %s: %s" % (_FAILED[action], what, plain_text(reason))


# ---- the transfer's link ----------------------------------------------------------------------


def link_of(entry: Entry) -> Optional[str]:
    """The address "Copy link" and "Open in browser" use: the transfer's page its file or folder carries, else a sent transfer's link."""
    if entry.origin_url:
        return entry.origin_url
    if entry.has_page:
        url = _xattr(entry.path, ORIGIN_ATTR)
        return url if url and is_web_address(url) else None
    if entry.has_link_file:
        return read_link_file(entry.path)
    return None
