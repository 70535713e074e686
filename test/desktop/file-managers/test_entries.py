"""Each file manager's entry file (desktop/file-managers/<manager>/transferfs_<manager>.py) is
the same few lines naming its file manager; the binding is picked by transferfs_fm/loader.py,
once for the three. Without transferfs_fm an entry file says so and defines nothing. Run by
test/desktop/file-manager-core.test.ts (no binding needed).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../desktop/file-managers")
sys.path.insert(0, SOURCE)
from transferfs_fm import loader  # noqa: E402

MANAGERS = ("nautilus", "nemo", "caja")


def entry(flavor):
    with open(os.path.join(SOURCE, flavor, "transferfs_%s.py" % flavor), encoding="utf-8") as f:
        return f.read()


def code_lines(text):
    """The lines that are code: no docstring, comment or blank line."""
    body = re.sub(r'^""".*?"""\n', "", text, count=1, flags=re.DOTALL)
    return [line for line in body.splitlines() if line.strip() and not line.strip().startswith("#")]


class EntryFiles(unittest.TestCase):
    def test_each_is_the_same_few_lines_but_its_name(self):
        shapes = {}
        for flavor in MANAGERS:
            lines = code_lines(entry(flavor))
            self.assertLessEqual(len(lines), 12, flavor)
            self.assertIn('TransferfsExtension = extension_class("%s")' % flavor, "\n".join(lines))
            # The binding is the loader's to pick: no entry requires a version of its own.
            self.assertNotIn("require_version", "\n".join(lines), flavor)
            shapes[flavor] = "\n".join(lines).replace(flavor, "<manager>")
        self.assertEqual(len(set(shapes.values())), 1, shapes)

    def test_the_loader_knows_each_binding(self):
        self.assertEqual(sorted(loader.BINDINGS), sorted(MANAGERS))
        self.assertEqual(loader.BINDINGS["nautilus"], ("Nautilus", "4.0"))
        with self.assertRaisesRegex(ValueError, "no file manager 'dolphin'"):
            loader.extension_class("dolphin")

    @unittest.skipIf(os.path.isdir("/usr/share/transferfs/file-managers/transferfs_fm"), "the package's transferfs_fm is installed here")
    def test_without_transferfs_fm_an_entry_defines_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            shutil.copy(os.path.join(SOURCE, "caja", "transferfs_caja.py"), d)
            env = {k: v for k, v in os.environ.items() if k != "TRANSFERFS_FM_LIBRARY"}
            code = "import runpy, sys; m = runpy.run_path(sys.argv[1]); print('TransferfsExtension' in m)"
            r = subprocess.run([sys.executable, "-c", code, os.path.join(d, "transferfs_caja.py")], capture_output=True, text=True, env=env, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "False")
        self.assertEqual(r.stderr.strip(), "transferfs: the transferfs_fm package is not installed; the caja extension does nothing")


if __name__ == "__main__":
    unittest.main()
