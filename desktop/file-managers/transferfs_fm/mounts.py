"""Which transferfs mount a path is on, from /proc/self/mountinfo: asking there never touches
the mount (a stat of a hung FUSE mount can block). Read as src/fuse/mountinfo.ts reads it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import List, Optional, Sequence

#: The filesystem type a transferfs mount shows in /proc/self/mountinfo; its source is
#: `transferfs:<data folder>` (plain `transferfs` from versions that named no folder).
FS_TYPE = "fuse.transferfs"


@dataclass(frozen=True)
class Mount:
    mount_point: str
    fs_type: str
    source: str


def _unescape(field_text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as \\ooo."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field_text)


def parse_mountinfo(text: str) -> List[Mount]:
    """The mounts of a /proc/self/mountinfo text, as src/fuse/mountinfo.ts reads them."""
    mounts = []
    for line in text.split("\n"):
        fields = line.split(" ")
        try:
            sep = fields.index("-", 6)
        except ValueError:
            continue
        if len(fields) < sep + 3 or len(fields[2].split(":")) != 2:
            continue
        mounts.append(Mount(_unescape(fields[4]), fields[sep + 1], _unescape(fields[sep + 2])))
    return mounts


def read_mounts(path: str = "/proc/self/mountinfo") -> List[Mount]:
    """The mounts this process sees; none when mountinfo cannot be read. Never touches a mount."""
    try:
        with open(path, "r", encoding="utf-8", errors="surrogateescape") as f:
            return parse_mountinfo(f.read())
    except OSError:
        return []


def mount_holding(mounts: Sequence[Mount], path: str) -> Optional[Mount]:
    """The topmost mount at the deepest mount point that holds the absolute `path`."""
    best = None
    for m in mounts:
        inside = m.mount_point == "/" or path == m.mount_point or path.startswith(m.mount_point + "/")
        if inside and (best is None or len(m.mount_point) >= len(best.mount_point)):
            best = m
    return best


def transferfs_mount_of(mounts: Sequence[Mount], path: str) -> Optional[str]:
    """The mount point of the transferfs mount `path` is on, or None."""
    m = mount_holding(mounts, os.path.abspath(path))
    return m.mount_point if m is not None and m.fs_type == FS_TYPE else None


