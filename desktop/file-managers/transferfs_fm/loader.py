"""What each file manager's entry file (nautilus/, nemo/, caja/) loads: the extension class
under that file manager's binding module, so that an entry file is a few lines naming its
file manager and nothing else.
"""

from __future__ import annotations

import importlib
from typing import Dict, Tuple

#: Each file manager's binding: the typelib its Python extension loads (nautilus-python 4 for
#: Nautilus 43 and later, nemo-python, python3-caja) and its version.
BINDINGS: Dict[str, Tuple[str, str]] = {
    "nautilus": ("Nautilus", "4.0"),
    "nemo": ("Nemo", "3.0"),
    "caja": ("Caja", "2.0"),
}


def extension_class(flavor: str) -> type:
    """The extension class for the file manager `flavor` ("nautilus", "nemo" or "caja").

    The file manager's Python extension has already required its binding's version before it
    loads an entry file; requiring the same one again is a no-op there, and picks it when the
    entry is loaded by hand (a test).
    """
    if flavor not in BINDINGS:
        raise ValueError("no file manager %r: one of %s" % (flavor, ", ".join(sorted(BINDINGS))))
    module, version = BINDINGS[flavor]
    import gi

    gi.require_version(module, version)
    from gi.repository import Gio, GLib, GObject

    from .adapter import build

    return build(importlib.import_module("gi.repository." + module), GObject, GLib, Gio, flavor)
