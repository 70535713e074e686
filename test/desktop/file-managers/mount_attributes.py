"""A local entry given the extended attributes a transferfs mount answers, for tests that take a
local folder for a mount: each attribute alone, and (but for a mount of an earlier version)
all of them in user.transferfs.shown, as the mount writes it (src/vfs/shown-xattr.ts)."""

import json
import os

from transferfs_fm import core


def give(path, attributes, older=False):
    """`attributes`: attribute name -> text; `older`: as a mount without user.transferfs.shown."""
    for name, text in attributes.items():
        os.setxattr(path, name, text.encode())
    if not older:
        os.setxattr(path, core.SHOWN_ATTR, json.dumps(attributes, ensure_ascii=False).encode())
