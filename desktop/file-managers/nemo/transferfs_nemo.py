"""transferfs in Nemo: emblems, a "Transfer" column and menu entries for what is on a transferfs mount.

Loaded by the nemo Python extension (/usr/share/nemo-python/extensions/); the logic is the
transferfs_fm package's, shared with the other file managers. Without that package this file
defines nothing, and Nemo starts as without it.
"""

import os
import sys

import gi

gi.require_version("Nemo", "3.0")
from gi.repository import Gio, GLib, GObject, Nemo  # noqa: E402


def _library():
    """The folder holding transferfs_fm: beside this file, one up (the source tree), or the installed one."""
    here = os.path.dirname(os.path.realpath(__file__))
    for folder in (os.environ.get("TRANSFERFS_FM_LIBRARY"), here, os.path.dirname(here), "/usr/share/transferfs/file-managers"):
        if folder and os.path.isfile(os.path.join(folder, "transferfs_fm", "core.py")):
            return folder
    return None


_folder = _library()
if _folder is None:
    print("transferfs: the transferfs_fm package is not installed; the nemo extension does nothing", file=sys.stderr)
else:
    if _folder not in sys.path:
        sys.path.insert(0, _folder)
    from transferfs_fm.adapter import build  # noqa: E402

    TransferfsExtension = build(Nemo, GObject, GLib, Gio, "nemo")
