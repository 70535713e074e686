"""Drives the send dialog as a person would, through AT-SPI (pyatspi), on a display and a session
bus of its own: `x_display.py -- dbus-run-session -- /usr/bin/python3 drive_dialog.py SCENARIO_JSON`.
The dialog is started once the display answers, and once more if it could not open it all the same.

The scenario (JSON): `dialog` (the program's argv), `fill` (accessible name -> text for entries,
true for check boxes, "click" for buttons, in order), `screenshot` (a PNG to save of the dialog
once filled), then `press` ("Send" or "Cancel"), and `waitStatus` (a regular expression the
dialog's status line must come to match; the dialog is then screenshot again to
`statusScreenshot` and cancelled). Prints one JSON line: the dialog's exit code, its stdout and
stderr, and the status line seen.
"""

import json
import os
import re
import subprocess
import sys
import time

import pyatspi

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from x_display import display_answers  # noqa: E402

APP = "transferfs-send-dialog"
#: s: for the display to take a connection before the dialog is started.
DISPLAY_WAIT_S = 15
#: What the dialog says (or GTK raises) when it could not open the display: it showed nothing.
NO_DISPLAY = ("transferfs-send-dialog: cannot open the display", "transferfs-send-dialog: no display", "Gtk couldn't be initialized")


class DialogEnded(Exception):
    """The dialog's process ended before it showed on the accessibility bus."""


def wait_for_display():
    deadline = time.time() + DISPLAY_WAIT_S
    while not display_answers():
        if time.time() > deadline:
            raise TimeoutError("the X display %s did not answer within %d s" % (os.environ.get("DISPLAY"), DISPLAY_WAIT_S))
        time.sleep(0.2)


def find_app(deadline, dialog):
    while time.time() < deadline:
        desktop = pyatspi.Registry.getDesktop(0)
        for i in range(desktop.childCount):
            app = desktop.getChildAtIndex(i)
            if app is not None and app.name == APP and app.childCount > 0:
                return app
        if dialog.poll() is not None:
            raise DialogEnded()
        time.sleep(0.2)
    raise TimeoutError("the dialog did not show on the accessibility bus")


def start_dialog(argv):
    """The dialog's process and its application on the accessibility bus, the display answering first.
    A dialog that could not open the display anyway is started once more (it showed nothing, so
    nothing was sent); a second such failure is the test's, said as it is."""
    for attempt in (1, 2):
        wait_for_display()
        dialog = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            return dialog, find_app(time.time() + 30, dialog)
        except DialogEnded:
            out, err = dialog.communicate()
            if attempt == 1 and any(s in err for s in NO_DISPLAY):
                print("drive_dialog: the dialog could not open the display %s; starting it once more: %s" % (os.environ.get("DISPLAY"), err.strip()[-300:]), file=sys.stderr)
                continue
            raise RuntimeError("the dialog ended (exit %s) before it showed a window%s:\n%s%s" % (
                dialog.returncode, ", twice unable to open the display" if attempt == 2 else "", out, err))
        except BaseException:
            dialog.kill()
            dialog.communicate()
            raise


def walk(node, depth=0):
    if node is None or depth > 40:
        return
    yield node
    for i in range(node.childCount):
        yield from walk(node.getChildAtIndex(i), depth + 1)


def find(app, name, roles=None, deadline=None):
    deadline = deadline or time.time() + 10
    while time.time() < deadline:
        for node in walk(app):
            try:
                # GTK 4.8 names a button by its label twice ("_Send Send"): the last words count.
                # A label bears the name of what it labels: the widget itself is wanted.
                role = node.getRole()
                if (node.name == name or node.name.endswith(" " + name)) and (role in roles if roles else role != pyatspi.ROLE_LABEL):
                    return node
            except Exception:
                continue
        time.sleep(0.2)
    raise LookupError("no widget named %r (%s)" % (name, ", ".join(sorted({"%s:%s" % (n.getRoleName(), n.name) for n in walk(app) if n.name}))))


def set_text(node, text):
    """Types into an entry as a person does: click in it, select what it holds, type over it (GTK 4.8
    offers no editable-text interface, so the keys go through AT-SPI's device events, XTest on Xvfb)."""
    target = next((n for n in walk(node) if n.getState().contains(pyatspi.STATE_FOCUSABLE)), node)
    # A click in it (GTK 4.8 does not take grabFocus over AT-SPI).
    ext = target.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    pyatspi.Registry.generateMouseEvent(ext.x + ext.width // 2, ext.y + ext.height // 2, "b1c")
    deadline = time.time() + 5
    while not target.getState().contains(pyatspi.STATE_FOCUSED) and time.time() < deadline:
        time.sleep(0.05)
    gen = pyatspi.Registry.generateKeyboardEvent
    # Ctrl+A selects all, then the text replaces it.
    gen(37, None, pyatspi.KEY_PRESS)  # Control_L's keycode under Xvfb's default map
    gen(38, None, pyatspi.KEY_PRESSRELEASE)  # a
    gen(37, None, pyatspi.KEY_RELEASE)
    time.sleep(0.1)
    gen(0, text, pyatspi.KEY_STRING)
    time.sleep(0.2)


def click(node):
    """Its click action, where it has one; else a click of the mouse in its middle (GTK 4.8's check boxes have no action)."""
    try:
        action = node.queryAction()
        names = [action.getName(i) for i in range(action.nActions)]
    except NotImplementedError:
        names = []
    for i, name in enumerate(names):
        if name in ("click", "press", "activate", "toggle"):
            action.doAction(i)
            return
    ext = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    pyatspi.Registry.generateMouseEvent(ext.x + min(ext.width // 2, 10), ext.y + ext.height // 2, "b1c")
    time.sleep(0.2)


def status_text(app):
    texts = []
    for node in walk(app):
        try:
            if node.getRole() == pyatspi.ROLE_LABEL and node.name and node.getState().contains(pyatspi.STATE_VISIBLE):
                texts.append(node.name)
        except Exception:
            continue
    return texts


def screenshot(app, path):
    frame = next(n for n in walk(app) if n.getRole() == pyatspi.ROLE_FRAME)
    ext = frame.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    geometry = "%dx%d+%d+%d" % (ext.width, ext.height, max(ext.x, 0), max(ext.y, 0))
    subprocess.run(["import", "-window", "root", "-crop", geometry, "+repage", path], check=True)


def main():
    scenario = json.loads(sys.argv[1])
    seen_status = None
    try:
        dialog, app = start_dialog(scenario["dialog"])
    except BaseException as error:
        print(json.dumps({"error": "%s: %s" % (type(error).__name__, error), "code": None, "stdout": "", "stderr": "", "status": None}))
        return 1
    try:
        for name, value in scenario.get("fill", []):
            node = find(app, name)
            if value is True or value == "click":
                click(node)
            else:
                set_text(node, value)
        time.sleep(0.5)  # a frame drawn with what was typed
        if scenario.get("screenshot"):
            screenshot(app, scenario["screenshot"])
        click(find(app, scenario["press"], [pyatspi.ROLE_PUSH_BUTTON]))
        if scenario.get("waitStatus"):
            pattern = re.compile(scenario["waitStatus"])
            deadline = time.time() + scenario.get("waitSeconds", 40)
            while time.time() < deadline and seen_status is None:
                seen_status = next((t for t in status_text(app) if pattern.search(t)), None)
                if seen_status is None:
                    if dialog.poll() is not None:
                        break
                    time.sleep(0.3)
            if seen_status is not None:
                time.sleep(0.3)
                if scenario.get("statusScreenshot"):
                    screenshot(app, scenario["statusScreenshot"])
                click(find(app, "Cancel", [pyatspi.ROLE_PUSH_BUTTON]))
        out, err = dialog.communicate(timeout=20)
    except BaseException as error:
        dialog.kill()
        out, err = dialog.communicate()
        import traceback
        print(json.dumps({"error": "%s: %s\n%s" % (type(error).__name__, error, traceback.format_exc()), "code": dialog.returncode, "stdout": out, "stderr": err, "status": seen_status}))
        return 1
    print(json.dumps({"code": dialog.returncode, "stdout": out, "stderr": err, "status": seen_status}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
