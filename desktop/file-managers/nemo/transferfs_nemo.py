"""transferfs in Nemo (nemo-python): emblems, a "Transfer" column and menu entries.

The extension is transferfs_fm's, one source for Nautilus, Nemo and Caja (transferfs_fm/loader.py):
this file finds it and names the file manager. Without it, this file defines nothing and Nemo
starts as without it.
"""

import os
import sys

_here = os.path.dirname(os.path.realpath(__file__))
# transferfs_fm: in $TRANSFERFS_FM_LIBRARY, beside this file, one folder up (the source tree), or installed.
for _folder in (os.environ.get("TRANSFERFS_FM_LIBRARY"), _here, os.path.dirname(_here), "/usr/share/transferfs/file-managers"):
    if _folder and os.path.isfile(os.path.join(_folder, "transferfs_fm", "loader.py")):
        sys.path.insert(0, _folder)
        from transferfs_fm.loader import extension_class

        TransferfsExtension = extension_class("nemo")
        break
else:
    print("transferfs: the transferfs_fm package is not installed; the nemo extension does nothing", file=sys.stderr)
