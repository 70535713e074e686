"""A transfer's details and link as the mount makes them (`.transfer.json`, `link.url`), read
when the user asks for them ("Show details", "Copy link"), never while a folder is shown.
"""

from __future__ import annotations

import datetime
import json
import os
import re
from typing import Mapping, Optional

from .shown import plain_text


def is_web_address(url: str) -> bool:
    return re.match(r"^https?://[^\s]+$", url, re.IGNORECASE) is not None


def details_from_text(text: str) -> Optional[dict]:
    """A `.transfer.json`'s details, or None where it is not a JSON object."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def read_details(transfer_folder: str) -> Optional[dict]:
    """The transfer's `.transfer.json` (the mount makes it from what it holds), or None."""
    try:
        with open(os.path.join(transfer_folder, ".transfer.json"), "r", encoding="utf-8") as f:
            return details_from_text(f.read())
    except (OSError, ValueError):
        return None


def link_from_text(text: str) -> Optional[str]:
    """The web address in a `link.url` (an Internet shortcut), or None."""
    for line in text.splitlines():
        if line.startswith("URL="):
            url = line[4:].strip()
            return url if is_web_address(url) else None
    return None


def read_link_file(transfer_folder: str) -> Optional[str]:
    """The address in a sent transfer's `link.url`, or None."""
    try:
        with open(os.path.join(transfer_folder, "link.url"), "r", encoding="utf-8") as f:
            return link_from_text(f.read())
    except (OSError, ValueError):
        return None


_DETAIL_FIELDS = (
    ("subject", "Subject"),
    ("from", "From"),
    ("message", "Message"),
    ("url", "Link"),
    ("sentdate", "Sent"),
    ("expiredate", "Expires"),
    ("isexpired", "Expired"),
    ("size", "Size"),
    ("numberoffiles", "Files"),
    ("numberofdownloads", "Downloads"),
    ("passwordprotected", "Password protected"),
)

_DATES = ("sentdate", "expiredate", "extendedexpiredate")


def _shown(key: str, value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key in _DATES and isinstance(value, (int, float)) and value > 0:
        seconds = value / 1000 if value > 1e11 else value
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if key == "size" and isinstance(value, int):
        return "%d bytes" % value
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return plain_text(value)
    return plain_text(json.dumps(value, ensure_ascii=False))


def details_text(details: Mapping[str, object]) -> str:
    """A transfer's `.transfer.json` as lines to read: its subject, sender, link and dates, then recipients and files.

    What senders wrote (subject, message, names) goes through plain_text: a control character
    in it shows as an escape, never acts.
    """
    lines = []
    for key, label in _DETAIL_FIELDS:
        if key in details and details[key] not in (None, ""):
            lines.append("%s: %s" % (label, _shown(key, details[key])))
    recipients = details.get("recipients")
    if isinstance(recipients, list) and recipients:
        lines.append("Recipients:")
        for r in recipients:
            if isinstance(r, dict) and r.get("email"):
                lines.append("  " + _shown("email", r["email"]))
    files = details.get("files")
    if isinstance(files, list) and files:
        lines.append("Files:")
        for f in files:
            if isinstance(f, dict):
                size = f.get("filesize")
                lines.append("  %s%s" % (_shown("filename", f.get("filename") or "?"), " (%d bytes)" % size if isinstance(size, int) else ""))
    return "\n".join(lines) + "\n"
