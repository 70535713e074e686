"""A local entry given the extended attributes a transferfs mount answers, for tests that take a
local folder for a mount: each attribute alone, and (but for a mount of an earlier version)
user.transferfs.shown as the mount writes it (src/vfs/shown-xattr.ts): the state, then on a
second line `pin` and `page` where it has those attributes."""

import os

from transferfs_fm import core


def give(path, attributes, older=False):
    """`attributes`: attribute name -> text; `older`: as a mount without user.transferfs.shown."""
    for name, text in attributes.items():
        os.setxattr(path, name, text.encode())
    if not older:
        flags = [word for word, name in (("pin", core.PIN_ATTR), ("page", core.ORIGIN_ATTR)) if name in attributes]
        shown = attributes.get(core.STATE_ATTR, "") + ("\n" + " ".join(flags) if flags else "")
        os.setxattr(path, core.SHOWN_ATTR, shown.encode())
