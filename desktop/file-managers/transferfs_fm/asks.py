"""A file manager's request about one file, answered later: completed exactly once.

Used by adapter.py for `update_file_info_full` answers that wait for the mount (its folder's
enumeration, or a read of the file alone, both run by GIO's threads).
"""

from __future__ import annotations

import sys
from typing import Any, Optional

from . import core

#: How long the file manager is kept waiting at most for an entry's attributes, in seconds.
ANSWER_SECONDS = 30


class Ask:
    """One `update_file_info_full` answered later (IN_PROGRESS), completed exactly once.

    The file manager asks about a folder's next file only once this one is complete: a request
    never completed stops the listing part-way, with nothing said. So each is completed once,
    whatever comes: its answer, a failure (said on stderr), or no answer from the mount within
    ANSWER_SECONDS (said too); what comes after that is dropped, the file left as it is.
    """

    def __init__(self, fm: Any, GLib: Any, provider: Any, handle: Any, closure: Any, path: str) -> None:
        self._fm = fm
        self._GLib = GLib
        self._provider = provider
        self._handle = handle
        self._closure = closure
        self.path = path
        #: Not yet completed: the file may still be shown.
        self.open = True
        self._timer: Optional[int] = GLib.timeout_add(int(ANSWER_SECONDS * 1000), self._late)

    def complete(self, failed: bool = False) -> None:
        if not self.open:
            return
        self.open = False
        if self._timer is not None:
            self._GLib.source_remove(self._timer)
            self._timer = None
        result = self._fm.OperationResult.FAILED if failed else self._fm.OperationResult.COMPLETE
        self._fm.info_provider_update_complete_invoke(self._closure, self._provider, self._handle, result)

    def fail(self, error: Exception) -> None:
        if self.open:
            print("transferfs: reading %s: %s" % (core.plain_text(self.path), core.plain_text(str(error))), file=sys.stderr)
        self.complete(failed=True)

    def _late(self) -> bool:
        self._timer = None
        if self.open:
            print("transferfs: reading %s: no answer within %g s" % (core.plain_text(self.path), ANSWER_SECONDS), file=sys.stderr)
            self.complete(failed=True)
        return False
