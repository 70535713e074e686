"""Drives a file manager through AT-SPI (dogtail), as a person with a screen reader would; run
inside the test's desktop session by test/desktop/file-manager-desktop.test.ts. Each command
prints one JSON object.

  atspi_driver.py view APP                        the list view: column titles, and per row its
                                                  name, cells' words and the images by its name
  atspi_driver.py wait APP ROW TEXT SECONDS       waits until ROW's last cell reads TEXT, then as view
  atspi_driver.py open-menu APP ROW               right-clicks ROW's name; the menu's entries
  atspi_driver.py choose APP ENTRY [ROW TEXT SECONDS]
                                                  activates the open menu's ENTRY (then waits as wait)
  atspi_driver.py menu APP ROW ENTRY TEXT SECONDS open-menu, choose and wait in one

APP is the application's accessible name (org.gnome.Nautilus, caja). ROW is a row's name as
shown. Nautilus 43 (GTK 4) shows a GtkColumnView: titles under GtkColumnViewTitle, rows as
`table row` of `table cell`s; Caja (GTK 3) a GtkTreeView, read through its Table interface.
"""

import json
import sys
import time

from dogtail.config import config

# Quiet, and no log files: the test reads only this program's JSON.
config.logDebugToFile = False
config.logDebugToStdOut = False
config.searchCutoffCount = 20
config.searchBackoffDuration = 0.25
config.actionDelay = 0.2

from dogtail import predicate, rawinput, tree  # noqa: E402

import pyatspi  # noqa: E402


def application(name, seconds=30):
    end = time.monotonic() + seconds
    while True:
        for app in tree.root.applications():
            if app.name == name:
                return app
        if time.monotonic() > end:
            raise SystemExit("no application %r on the accessibility bus (there: %s)" % (name, [a.name for a in tree.root.applications()]))
        time.sleep(0.25)


def labels(node):
    """The words shown under node, in order."""
    out = []
    for n in node.findChildren(lambda x: x.roleName in ("label", "text"), recursive=True, showingOnly=False):
        if n.name:
            out.append(n.name)
    return out


def gtk4_view(app):
    """Nautilus's GtkColumnView: titles, then each row's cells."""
    view = app.findChild(predicate.GenericPredicate(roleName="tree table", name="GtkColumnView"), retry=False, requireResult=False, showingOnly=False)
    if view is None:
        return None
    titles = []
    for title in view.findChildren(lambda x: x.name == "GtkColumnViewTitle", recursive=True, showingOnly=False):
        titles.extend(labels(title)[:1])
    rows = []
    for row in view.findChildren(lambda x: x.roleName == "table row" and x.name != "GtkListItemWidget", recursive=True, showingOnly=False):
        cells = [c for c in row.children if c.roleName == "table cell"]
        if not cells:
            continue
        words = [" ".join(labels(c)) for c in cells]
        images = [i.name for i in cells[0].findChildren(lambda x: x.roleName == "image", recursive=True, showingOnly=False)]
        rows.append({"name": words[0], "cells": words, "images": images})
    return {"titles": titles, "rows": rows}


def gtk3_view(app):
    """Caja's GtkTreeView (the table with the most columns: the places' tree has one), through the Table interface."""
    tables = app.findChildren(lambda x: x.roleName in ("tree table", "table"), recursive=True, showingOnly=False)
    if not tables:
        return None
    table = max((t.queryTable() for t in tables), key=lambda t: t.nColumns)
    titles = []
    for c in range(table.nColumns):
        header = table.getColumnHeader(c)
        titles.append(header.name if header is not None else table.getColumnDescription(c))
    rows = []
    for r in range(table.nRows):
        cells = [table.getAccessibleAt(r, c) for c in range(table.nColumns)]
        # The name's cell holds two: the icon (with its emblems) and the text.
        words = [(c.name or " ".join(x.name for x in c.children if x.name)) if c is not None else "" for c in cells]
        rows.append({"name": words[0], "cells": words, "images": []})
    return {"titles": titles, "rows": rows}


def view_of(app):
    return gtk4_view(app) or gtk3_view(app) or {"titles": [], "rows": []}


def row_label(app, row):
    """The label (GTK 4) or cell (GTK 3) that shows a row's name."""
    found = app.findChild(lambda x: x.roleName in ("label", "table cell") and x.name == row, retry=True, requireResult=False, showingOnly=False)
    if found is None:
        raise SystemExit("no row %r" % row)
    return found


def open_menu(app, row):
    target = row_label(app, row)
    x, y = target.position
    w, h = target.size
    # A menu's entries are in the tree only while it is open. The first right-click after a
    # menu closed is sometimes taken for closing it: tried again, up to three times.
    for _ in range(3):
        # Over the name itself: a right-click there selects the row and opens its menu.
        rawinput.click(x + min(w, 200) // 2, y + h // 2, button=3)
        end = time.monotonic() + 4
        while time.monotonic() < end:
            items = app.findChildren(lambda x: x.roleName == "menu item", recursive=True, showingOnly=False)
            if items:
                return [i.name for i in items]
            time.sleep(0.25)
        rawinput.pressKey("Escape")
    return []


def choose(app, entry):
    # Activated through the entry's own accessible action, not by position: GTK 4 gives a
    # popover's entries places within the popover, not on the screen.
    found = app.findChild(predicate.GenericPredicate(roleName="menu item", name=entry), retry=True, requireResult=False, showingOnly=False)
    if found is None:
        raise SystemExit("no menu entry %r" % entry)
    found.doActionNamed("click")
    return {"chosen": entry}


def wait(app, row, text, seconds):
    end = time.monotonic() + seconds
    while True:
        out = view_of(app)
        hit = [r for r in out["rows"] if r["name"] == row]
        out["waited"] = bool(hit) and hit[0]["cells"][-1] == text
        if out["waited"] or time.monotonic() > end:
            return out
        time.sleep(0.5)


def main():
    command, app_name, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    app = application(app_name)
    if command == "view":
        out = view_of(app)
    elif command == "wait":
        out = wait(app, args[0], args[1], float(args[2]))
    elif command == "open-menu":
        out = {"entries": open_menu(app, args[0])}
    elif command == "choose":
        out = choose(app, args[0])
        if len(args) == 4:
            out.update(wait(app, args[1], args[2], float(args[3])))
    elif command == "menu":
        out = {"entries": open_menu(app, args[0])}
        if args[1] not in out["entries"]:
            raise SystemExit("no menu entry %r in %s" % (args[1], out["entries"]))
        out.update(choose(app, args[1]))
        out.update(wait(app, args[0], args[2], float(args[3])))
    else:
        raise SystemExit("unknown command %r" % command)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
