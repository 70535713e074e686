"""Loads one file manager's transferfs extension as that file manager's Python extension does,
under its real binding module, and drives it with file objects shaped like the file manager's
FileInfo. Prints one JSON line of what it found; run by test/desktop/file-manager-bindings.test.ts
as `python3 check_binding.py nautilus|nemo|caja` (a python3 with gi and the binding).
"""

import json
import os
import runpy
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "../../../desktop/file-managers")
flavor = sys.argv[1]
binding = {"nautilus": "Nautilus", "nemo": "Nemo", "caja": "Caja"}[flavor]


class FileInfo:
    """What the extension asks of a file manager's FileInfo."""

    def __init__(self, path, is_dir=False):
        from gi.repository import Gio

        self.location = Gio.File.new_for_path(path)
        self.is_dir = is_dir
        self.emblems = []
        self.attributes = {}

    def get_uri_scheme(self):
        return "file"

    def get_location(self):
        return self.location

    def is_directory(self):
        return self.is_dir

    def add_emblem(self, name):
        self.emblems.append(name)

    def add_string_attribute(self, name, value):
        self.attributes[name] = value


def main():
    module = runpy.run_path(os.path.join(SOURCE, flavor, "transferfs_%s.py" % flavor), run_name="transferfs_" + flavor)
    from gi.repository import GObject

    fm = getattr(__import__("gi.repository", fromlist=[binding]), binding)
    providers = (fm.InfoProvider, fm.ColumnProvider, fm.MenuProvider)
    classes = [v for v in module.values() if isinstance(v, type) and issubclass(v, GObject.GObject) and any(issubclass(v, p) for p in providers)]
    extension = module["TransferfsExtension"]()
    columns = extension.get_columns()

    def menu(files):
        items = extension.get_file_items(files) if flavor == "nautilus" else extension.get_file_items(None, files)
        return [i.get_property("label") for i in items]

    with tempfile.TemporaryDirectory() as d:
        local = os.path.join(d, "report.pdf")
        open(local, "w").close()
        info = FileInfo(local)
        result = extension.update_file_info_full(None, None, None, info)
        without_dialog = menu([info])
        bin_dir = os.path.join(d, "bin")
        os.mkdir(bin_dir)
        dialog = os.path.join(bin_dir, "transferfs-send-dialog")
        with open(dialog, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(dialog, 0o755)
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
        with_dialog = menu([info])
    print(json.dumps({
        "classes": [c.__name__ for c in classes],
        "gtype": extension.__gtype_name__,
        "providers": [p.__name__ for p in providers if isinstance(extension, p)],
        "columns": [[c.get_property("name"), c.get_property("attribute"), c.get_property("label")] for c in columns],
        "localInfo": {"result": result.value_nick if hasattr(result, "value_nick") else str(result), "emblems": info.emblems, "attributes": info.attributes},
        "localMenu": without_dialog,
        "localMenuWithDialog": with_dialog,
    }), flush=True)
    # A Nemo.Column finalized outside Nemo aborts the process (nemo-python 5.6): end here.
    os._exit(0)


main()
