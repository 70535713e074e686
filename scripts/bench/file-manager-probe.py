"""The end point of scripts/bench/file-manager.ts: a Nautilus extension (nautilus-python 4) that
answers every file at once and writes the wall-clock time when it has been asked about every
entry of a folder. Nautilus asks its info providers about one file of a folder at a time, each
provider in turn, so by then the view holds every row and any other extension has answered all
of them but at most the last.

  TRANSFERFS_BENCH_FOLDER   the folder whose entries are counted
  TRANSFERFS_BENCH_COUNT    how many entries it holds
  TRANSFERFS_BENCH_OUT      where the time (seconds since the epoch) and the count are written
"""

import os
import time

from gi.repository import GObject, Nautilus

FOLDER = os.environ.get("TRANSFERFS_BENCH_FOLDER")
COUNT = int(os.environ.get("TRANSFERFS_BENCH_COUNT", "0"))
OUT = os.environ.get("TRANSFERFS_BENCH_OUT")


class TransferfsBenchProbe(GObject.GObject, Nautilus.InfoProvider):
    def __init__(self):
        super().__init__()
        self.seen = set()
        self.done = not (FOLDER and COUNT and OUT)

    def update_file_info(self, file):
        if self.done:
            return Nautilus.OperationResult.COMPLETE
        location = file.get_location()
        parent = location.get_parent() if location is not None else None
        if parent is not None and parent.get_path() == FOLDER:
            self.seen.add(location.get_path())
            if len(self.seen) % 250 == 0:
                # How far it got, for a run that never ends.
                with open(OUT + ".progress", "w") as f:
                    f.write("%.6f %d\n" % (time.time(), len(self.seen)))
            if len(self.seen) >= COUNT:
                self.done = True
                with open(OUT + ".tmp", "w") as f:
                    f.write("%.6f %d\n" % (time.time(), len(self.seen)))
                os.rename(OUT + ".tmp", OUT)
        return Nautilus.OperationResult.COMPLETE
