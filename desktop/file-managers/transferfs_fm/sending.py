"""What the send dialog does with what it was given, with no GUI import (the dialog,
send_dialog.py, only asks and shows): the recipients read from what was typed, the way the
send goes, the outbox entry it makes, the `transferfs send` command line, the recipients of
earlier sends, and failures said in plain words.

Two ways to send:

- **Through the running mount's outbox** (the way the rest of transferfs sends): the files are
  copied under a temporary name into `outbox/<addresses>/` (a recipient folder) and renamed to
  the subject once whole; the mount sends the entry, and its notification brings the link.
  The outbox takes message, days, password, notify and confirmation from the mount's settings,
  for every entry alike, and a folder named by a contact group is a recipient folder only where
  the mount knows that group. So this way is taken when the send asks for nothing of its own.
- **Through `transferfs send`**: when nothing is mounted, or the send has options of its own, a
  contact group, or a subject or recipients no folder name can hold. The dialog shows it going
  and tells the link itself, in the same notification as the mount's.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .mounts import FS_TYPE, Mount, transferfs_mount_of
from .shown import plain_text

#: src/send/names.ts's rules: an e-mail address, and the names the outbox takes as temporary.
EMAIL = re.compile(r"^[^\s@,]+@[^\s@,]+\.[^\s@,]+$")
TEMP_SUFFIXES = ("~", ".swp", ".swo", ".swx", ".part", ".tmp", ".crdownload")
#: Bytes of one name in a folder (NAME_MAX).
NAME_MAX = 255
#: The mount's data folder files read here: the sent log and the status.
SENT_LOG = "sent.jsonl"
STATUS_FILE = "status.json"
#: Earlier recipients offered at most.
EARLIER_MAX = 12
#: `transferfs`'s exit codes (src/cli/output/exit-codes.ts) that the dialog words itself.
EXIT_USAGE = 2
EXIT_AUTH = 3
EXIT_UNREACHABLE = 5

OUTBOX = "outbox"
COMMAND = "command"


def is_email(text: str) -> bool:
    return EMAIL.match(text) is not None


def is_temporary_name(name: str) -> bool:
    lower = name.lower()
    return name.startswith(".") or any(lower.endswith(s) for s in TEMP_SUFFIXES)


def parse_recipients(text: str) -> Tuple[List[str], List[str]]:
    """What was typed as (recipients, problems): parts split at commas, semicolons and new lines.

    A part with an @ is an address and must look like one; any other part is a contact group's
    name (the service says whether the account has it). Each once, in the order typed.
    """
    out: List[str] = []
    problems: List[str] = []
    seen = set()
    for raw in re.split(r"[,;\n]", text):
        part = raw.strip()
        if not part:
            continue
        if "@" in part and not is_email(part):
            problems.append("%s is not an e-mail address" % plain_text(part))
            continue
        if part.lower() in seen:
            continue
        seen.add(part.lower())
        out.append(part)
    return out, problems


@dataclass
class SendRequest:
    """What the dialog was asked: the paths and the transfer's fields. None: the account's default."""

    paths: List[str]
    recipients: List[str] = field(default_factory=list)
    subject: str = ""
    message: Optional[str] = None
    days: Optional[int] = None
    password: Optional[str] = None
    notify: Optional[bool] = None
    confirmation: Optional[bool] = None

    @property
    def own_options(self) -> bool:
        """Whether it asks for something the outbox takes from the mount's settings."""
        return any(v is not None for v in (self.message, self.days, self.password, self.notify, self.confirmation))


def default_subject(paths: Sequence[str]) -> str:
    """The subject `transferfs send` gives: the name of one file or folder, else how many."""
    if len(paths) == 1:
        return os.path.basename(os.path.abspath(paths[0]))
    return "%d files" % len(paths)


def usable_name(name: str) -> bool:
    """Whether `name` can be an outbox entry's name as it is: one name, not temporary, short enough."""
    return (
        bool(name)
        and name not in (".", "..")
        and "/" not in name
        and "\0" not in name
        and not is_temporary_name(name)
        and len(name.encode("utf-8", "surrogateescape")) <= NAME_MAX
    )


def recipient_folder(recipients: Sequence[str]) -> Optional[str]:
    """The outbox folder name that sends to `recipients` (addresses only), "" for none (a link), or None when no name can."""
    if not recipients:
        return ""
    if not all(is_email(r) for r in recipients):
        return None
    name = ",".join(recipients)
    return name if usable_name(name) else None


def own_mount(mounts: Sequence[Mount], env: Mapping[str, str] = os.environ) -> Optional[Mount]:
    """The transferfs mount to send through: the one of transferfs's data folder (its settings'
    `TRANSFERFS_DATA_DIR` or the default) when it is mounted, else the first whose outbox this
    user may write to."""
    usable = []
    for m in mounts:
        if m.fs_type != FS_TYPE:
            continue
        outbox = os.path.join(m.mount_point, OUTBOX)
        try:
            if os.path.isdir(outbox) and os.access(outbox, os.W_OK) and os.stat(m.mount_point).st_uid == os.getuid():
                usable.append(m)
        except OSError:
            continue
    own = data_dir_of(None, env)
    return next((m for m in usable if data_dir_of(m, env) == own), usable[0] if usable else None)


def data_dir_of(mount: Optional[Mount], env: Mapping[str, str] = os.environ) -> str:
    """The data folder a mount names in its source (`transferfs:<folder>`), else transferfs's own."""
    if mount is not None and mount.source.startswith("transferfs:") and len(mount.source) > len("transferfs:"):
        return mount.source[len("transferfs:"):]
    if env.get("TRANSFERFS_DATA_DIR"):
        return os.path.abspath(env["TRANSFERFS_DATA_DIR"])
    base = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "transferfs")


def route(request: SendRequest, mount: Optional[Mount]) -> str:
    """OUTBOX (through the mount) or COMMAND (`transferfs send`): see the module's notes."""
    if mount is None or request.own_options:
        return COMMAND
    if recipient_folder(request.recipients) is None or not usable_name(request.subject):
        return COMMAND
    names = [os.path.basename(os.path.abspath(p)) for p in request.paths]
    if len(set(names)) != len(names):
        # Two items of one name: `transferfs send` says so before anything is sent.
        return COMMAND
    return OUTBOX


# ---- through the outbox -----------------------------------------------------------------------


@dataclass
class OutboxPlan:
    """Where the entry goes: `folder` (outbox/ or a recipient folder in it), its name, and what is copied into it."""

    folder: str
    name: str
    #: (source, path below the entry; "" for the entry itself).
    copies: List[Tuple[str, str]]


def outbox_plan(request: SendRequest, mount_point: str) -> OutboxPlan:
    """The entry that sends `request` as `transferfs send` would: one file under its own name as itself,
    one folder as the entry (its files named below it), anything else in a folder named by the subject."""
    folder_name = recipient_folder(request.recipients)
    if folder_name is None or not usable_name(request.subject):
        raise ValueError("not an outbox send")
    folder = os.path.join(mount_point, OUTBOX, folder_name) if folder_name else os.path.join(mount_point, OUTBOX)
    paths = [os.path.abspath(p) for p in request.paths]
    if len(paths) == 1 and (os.path.isdir(paths[0]) or os.path.basename(paths[0]) == request.subject):
        return OutboxPlan(folder, request.subject, [(paths[0], "")])
    return OutboxPlan(folder, request.subject, [(p, os.path.basename(p)) for p in paths])


def files_below(paths: Iterable[str]) -> Tuple[int, int]:
    """(files, bytes) that copying `paths` writes: regular files only (links and the rest are not sent)."""
    count = total = 0
    for p in paths:
        if os.path.isfile(p) and not os.path.islink(p):
            count, total = count + 1, total + os.path.getsize(p)
            continue
        for root, _dirs, files in os.walk(p):
            for f in files:
                full = os.path.join(root, f)
                if os.path.isfile(full) and not os.path.islink(full):
                    count, total = count + 1, total + os.path.getsize(full)
    return count, total


class Cancelled(Exception):
    pass


CHUNK = 1 << 20


def _copy_file(src: str, dst: str, progress: Callable[[int], None], cancelled: Callable[[], bool]) -> None:
    with open(src, "rb") as fin, open(dst, "xb") as fout:
        while True:
            if cancelled():
                raise Cancelled()
            block = fin.read(CHUNK)
            if not block:
                break
            fout.write(block)
            progress(len(block))
    st = os.stat(src)
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


def _copy_tree(src: str, dst: str, progress: Callable[[int], None], cancelled: Callable[[], bool]) -> None:
    os.mkdir(dst)
    for entry in sorted(os.scandir(src), key=lambda e: e.name):
        target = os.path.join(dst, entry.name)
        # Links and devices are never sent (the outbox and `transferfs send` leave them out).
        if entry.is_symlink():
            continue
        if entry.is_dir():
            _copy_tree(entry.path, target, progress, cancelled)
        elif entry.is_file():
            _copy_file(entry.path, target, progress, cancelled)


def place_in_outbox(plan: OutboxPlan, progress: Callable[[int], None] = lambda n: None, cancelled: Callable[[], bool] = lambda: False) -> str:
    """Copies the plan's files into the outbox and hands them over; returns the entry's path.

    Copied under a temporary name (which the outbox leaves waiting) and renamed to the subject
    once whole, so nothing is sent half-copied; cancelled or failed, the copy is removed and
    nothing is sent. An entry of the same name already there is not replaced: FileExistsError.
    """
    final = os.path.join(plan.folder, plan.name)
    if os.path.lexists(final):
        raise FileExistsError(final)
    os.makedirs(plan.folder, exist_ok=True)
    temp = os.path.join(plan.folder, ".transferfs-send-%s.part" % secrets.token_hex(4))
    single = len(plan.copies) == 1 and plan.copies[0][1] == ""
    try:
        if single:
            src = plan.copies[0][0]
            (_copy_tree if os.path.isdir(src) else _copy_file)(src, temp, progress, cancelled)
        else:
            os.mkdir(temp)
            for src, rel in plan.copies:
                (_copy_tree if os.path.isdir(src) else _copy_file)(src, os.path.join(temp, rel), progress, cancelled)
        if os.path.lexists(final):
            raise FileExistsError(final)
        os.rename(temp, final)
    except BaseException:
        _remove(temp)
        raise
    return final


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
    except OSError:
        pass


def service_trouble(data_dir: str) -> Optional[str]:
    """What the mount's status (status.json) says is wrong with the service, in plain words, or None."""
    try:
        with open(os.path.join(data_dir, STATUS_FILE), "r", encoding="utf-8") as f:
            status = json.load(f)
    except (OSError, ValueError):
        return None
    service = status.get("service") if isinstance(status, dict) else None
    if not isinstance(service, dict) or service.get("state") != "offline":
        return None
    reason = service.get("reason")
    why = " (%s)" % plain_text(str(reason)) if reason else ""
    return ("The transfer service cannot be reached at the moment%s. The files can wait in the outbox "
            "and go by themselves once it answers: press Send again to leave them there." % why)


# ---- through `transferfs send` ----------------------------------------------------------------


def send_command(request: SendRequest, transferfs: Sequence[str]) -> Tuple[List[str], Dict[str, str]]:
    """`transferfs send`'s command line for `request`, and what its environment adds.

    The password goes in the environment (TRANSFERFS_PASSWORD, the setting's variable), never on
    the command line, which every user of the computer can read while it runs.
    """
    argv = list(transferfs) + ["send", "--json"]
    for r in request.recipients:
        argv += ["--to", r]
    if request.subject:
        argv += ["--subject", request.subject]
    if request.message is not None:
        argv += ["--message", request.message]
    if request.days is not None:
        argv += ["--days", str(request.days)]
    if request.notify is not None:
        argv.append("--notify" if request.notify else "--no-notify")
    if request.confirmation is not None:
        argv.append("--confirmation" if request.confirmation else "--no-confirmation")
    argv.append("--")
    argv += [os.path.abspath(p) for p in request.paths]
    env = {"TRANSFERFS_PASSWORD": request.password} if request.password is not None else {}
    return argv, env


def sent_link(stdout: str) -> Optional[str]:
    """The link in `transferfs send --json`'s answer."""
    try:
        answer = json.loads(stdout)
    except ValueError:
        return None
    url = answer.get("url") if isinstance(answer, dict) else None
    return url if isinstance(url, str) and url else None


def failure_text(code: Optional[int], stderr: str) -> str:
    """Why `transferfs send` did not send, in plain words for the dialog."""
    if code == EXIT_AUTH:
        return ("You are not signed in to transferfs, or the sign-in has ended. Sign in with "
                "\u201ctransferfs login\u201d in a terminal, then send again.")
    if code == EXIT_UNREACHABLE:
        return ("The transfer service cannot be reached. Check the network connection (and the "
                "service's address in \u201ctransferfs config\u201d), then send again.")
    if code is None:
        return "transferfs could not be started (%s). Is the transferfs package installed?" % plain_text(stderr.strip() or "not found")
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.strip().startswith("hint:")]
    reason = lines[-1] if lines else "transferfs ended with code %d" % code
    reason = re.sub(r"^transferfs\s*:\s*", "", reason)
    return "The transfer was not sent: %s" % plain_text(reason)


def sent_notification(subject: str, url: str) -> List[str]:
    """notify-send's arguments for a finished send: the mount's own notification (src/desktop/notify.ts sentNotification)."""
    body = plain_text(url).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return ["notify-send", "--app-name=transferfs", "--icon=folder-download", "--", plain_text("Sent: " + (subject or "(no subject)")), body]


# ---- earlier sends ----------------------------------------------------------------------------


def earlier_recipients(data_dirs: Iterable[str], limit: int = EARLIER_MAX) -> List[str]:
    """The recipients (addresses and contact groups) of earlier sends, the latest first, each once.

    Read from each data folder's sent log, which the mount and `transferfs send` both write.
    """
    found: List[Tuple[float, str]] = []
    for d in dict.fromkeys(data_dirs):
        try:
            with open(os.path.join(d, SENT_LOG), "r", encoding="utf-8") as f:
                lines = f.readlines()
        except OSError:
            continue
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict) or not isinstance(record.get("recipients"), list):
                continue
            at = record.get("sentAt") if isinstance(record.get("sentAt"), (int, float)) else 0
            for r in record["recipients"]:
                if isinstance(r, str) and r.strip():
                    found.append((at, r.strip()))
    found.sort(key=lambda x: -x[0])
    out: List[str] = []
    seen = set()
    for _at, r in found:
        if r.lower() not in seen:
            seen.add(r.lower())
            out.append(r)
    return out[:limit]


def known_data_dirs(mounts: Sequence[Mount], env: Mapping[str, str] = os.environ) -> List[str]:
    """Every data folder a send may have been recorded in: the mounts' and transferfs's own."""
    dirs = [data_dir_of(m, env) for m in mounts if m.fs_type == FS_TYPE and m.source.startswith("transferfs:")]
    dirs.append(data_dir_of(None, env))
    return list(dict.fromkeys(dirs))


def on_a_mount(paths: Sequence[str], mounts: Sequence[Mount]) -> List[str]:
    """The paths that are on a transferfs mount (sent from there by other means, not from this dialog)."""
    return [p for p in paths if transferfs_mount_of(mounts, os.path.abspath(p)) is not None]

