"""Inside dolphin-menu.sh's session: opens Dolphin on FOLDER, right-clicks one of its files, opens the
transferfs submenu and saves the part of the screen with the window and the menus to OUT.

    dolphin-menu.py FOLDER OUT.png
"""

import os
import subprocess
import sys
import time

import pyatspi

#: The file right-clicked: a photo of the demo's harbour walk.
FILE = "harbour-evening.png"
#: The display's size (dolphin-menu.sh's --screen).
SCREEN = (1200, 760)
UP, RIGHT = 0xFF52, 0xFF53


def walk(node, depth=0):
    if node is None or depth > 60:
        return
    yield node
    try:
        for i in range(node.childCount):
            yield from walk(node.getChildAtIndex(i), depth + 1)
    except Exception:
        return


def app_named(name, seconds=60):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        desktop = pyatspi.Registry.getDesktop(0)
        for i in range(desktop.childCount):
            app = desktop.getChildAtIndex(i)
            if app is not None and app.name == name and app.childCount > 0:
                return app
        time.sleep(0.5)
    raise TimeoutError("%s did not show on the accessibility bus" % name)


def find(root, test, what, seconds=20):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for node in walk(root):
            try:
                if test(node):
                    return node
            except Exception:
                continue
        time.sleep(0.3)
    raise LookupError("no %s" % what)


def extents(node):
    e = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    return e.x, e.y, e.width, e.height


def showing(node):
    return node.getState().contains(pyatspi.STATE_SHOWING) and extents(node)[2] > 0


def click(node, button, dx=None):
    x, y, w, h = extents(node)
    pyatspi.Registry.generateMouseEvent(x + (w // 2 if dx is None else dx), y + h // 2, button)


def main(folder, out):
    env = dict(os.environ, QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1", QT_ACCESSIBILITY="1")
    dolphin = subprocess.Popen(["dolphin", "--new-window", folder], env=env, stdout=subprocess.DEVNULL, stderr=sys.stderr)
    try:
        app = app_named("dolphin")
        window = find(app, lambda n: n.getRole() == pyatspi.ROLE_FRAME and n.name.endswith(os.path.basename(folder)), "Dolphin's window")
        # Dolphin's warning about running as root (the session is root's) is no part of the menu: closed.
        try:
            warning = find(window, lambda n: n.getRole() == pyatspi.ROLE_LABEL and "as root" in n.name and showing(n), "root warning", 5)
            click(find(warning.parent, lambda n: n.getRole() == pyatspi.ROLE_PUSH_BUTTON and n.name == "Close", "its Close button", 5), "b1c")
            time.sleep(1)
        except LookupError:
            pass
        row = find(window, lambda n: n.getRole() == pyatspi.ROLE_TABLE_CELL and n.name == FILE and showing(n), "row %s" % FILE)
        click(row, "b1c", 60)
        time.sleep(0.5)
        click(row, "b3c", 60)
        # Qt's context menu is not on the accessibility bus while open: keys, as a person would.
        # Dolphin's menu ends with Properties, the service menus' submenu just above it; Up from
        # the top wraps to the end.
        time.sleep(1.5)
        for keysym in (UP, UP, RIGHT):
            pyatspi.Registry.generateKeyboardEvent(keysym, None, pyatspi.KEY_SYM)
            time.sleep(0.4)
        time.sleep(1)
        shot = out + ".full.png"
        subprocess.run(["import", "-window", "root", shot], check=True)
        # The bare screen around the window is black: made light (flood fill from a corner the
        # window never reaches), then trimmed away.
        w, h = SCREEN
        subprocess.run(["convert", shot, "-fill", "#eeeeee", "-draw", "color %d,%d floodfill" % (w - 1, h - 1), "-trim", "+repage",
                        "-bordercolor", "#eeeeee", "-border", "6", "-strip", "-define", "png:compression-level=9", "PNG24:" + out], check=True)
        os.unlink(shot)
    except Exception:
        subprocess.run(["import", "-window", "root", out + ".failed.png"])
        raise
    finally:
        dolphin.terminate()
        dolphin.wait(10)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
