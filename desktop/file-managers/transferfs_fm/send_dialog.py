"""The send dialog: `transferfs-send-dialog PATH...` (what "Send with transferfs…" starts).

A GTK 4 window that asks for the recipients (those of earlier sends offered), subject, message,
days, a password and the e-mails the sender gets, then sends through the running mount's
outbox or `transferfs send` (sending.py decides and does; this module only asks and shows).
Cancel sends nothing. Exit code: 0 once handed over or sent, 1 when nothing was sent.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from typing import Any, List, Mapping, Optional

from . import core, sending
from .mounts import read_mounts
from .shown import plain_text

TITLE = "Send with transferfs"
#: Days offered when the sender sets an expiry (the service's usual default).
DAYS_DEFAULT = 7
DAYS_MAX = 3650


def missing_toolkit(error: Exception) -> int:
    text = ("The send dialog needs GTK 4 for Python: install python3-gi and gir1.2-gtk-4.0 (%s)" % error)
    print("transferfs-send-dialog: " + text, file=sys.stderr)
    try:
        subprocess.Popen(["notify-send", "--app-name=transferfs", "transferfs", text], stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        pass
    return 1


def no_display_text(env: Mapping[str, str]) -> str:
    """Why there is no window, in one line: started outside a desktop session, or its display would not open."""
    named = ["%s=%s" % (k, env[k]) for k in ("WAYLAND_DISPLAY", "DISPLAY") if env.get(k)]
    if not named:
        return "no display to show the dialog on (neither DISPLAY nor WAYLAND_DISPLAY is set): run it from a desktop session"
    return "cannot open the display (%s) to show the dialog on" % ", ".join(named)


def main(argv: List[str]) -> int:
    paths = [a for a in argv if a != "--"]
    if not paths:
        print("usage: transferfs-send-dialog PATH...", file=sys.stderr)
        return 2
    try:
        import gi

        gi.require_version("Gtk", "4.0")
        gi.require_version("Gdk", "4.0")
        from gi.repository import Gdk, GLib, Gtk
    except (ImportError, ValueError) as error:
        return missing_toolkit(error)
    # The name the desktop and assistive technologies know the program by.
    GLib.set_prgname("transferfs-send-dialog")
    GLib.set_application_name(TITLE)
    # Gtk.init_check() is no test: PyGObject already called it on import, and a second call says
    # True even when the first found no display. Whether a display was opened is what counts.
    Gtk.init_check()
    if Gdk.Display.get_default() is None:
        print("transferfs-send-dialog: " + no_display_text(os.environ), file=sys.stderr)
        return 1
    dialog = SendDialog(Gtk, GLib, [os.path.abspath(p) for p in paths])
    dialog.run()
    return dialog.exit_code


def _name(Gtk: Any, widget: Any, name: str) -> None:
    """The widget's accessible name (what a screen reader says, and what tests find it by)."""
    widget.update_property([Gtk.AccessibleProperty.LABEL], [name])


class SendDialog:
    def __init__(self, Gtk: Any, GLib: Any, paths: List[str]) -> None:
        self.Gtk, self.GLib, self.paths = Gtk, GLib, paths
        self.exit_code = 1
        self.loop = GLib.MainLoop()
        self.busy = False
        self.cancelled = False
        self.process: Optional[subprocess.Popen] = None
        #: The outbox's service warning was shown once: Send again leaves the files there.
        self.warned_offline = False
        self.mounts = read_mounts()
        self._build()
        self._check_paths()

    # ---- the window -------------------------------------------------------------------------

    def _build(self) -> None:
        Gtk = self.Gtk
        w = self.window = Gtk.Window(title=TITLE)
        w.set_default_size(520, -1)
        w.connect("close-request", self._on_close_request)
        box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12)
        for side in ("top", "bottom", "start", "end"):
            getattr(box, "set_margin_" + side)(18)
        w.set_child(box)

        names = [os.path.basename(p.rstrip("/")) or p for p in self.paths]
        what = names[0] if len(names) == 1 else "%d items" % len(names)
        heading = Gtk.Label(xalign=0, wrap=True)
        heading.set_markup("<b>Send %s</b>" % self.GLib.markup_escape_text(plain_text(what), -1))
        box.append(heading)

        grid = Gtk.Grid(column_spacing=12, row_spacing=8)
        box.append(grid)
        row = 0

        def label(text: str, widget: Any, target: Any = None) -> None:
            """A row: `text` and `widget`; the label names `target` (default `widget`), its accessible name too."""
            nonlocal row
            lab = Gtk.Label(label=text, xalign=1, use_underline=True)
            lab.set_mnemonic_widget(target or widget)
            grid.attach(lab, 0, row, 1, 1)
            grid.attach(widget, 1, row, 1, 1)
            row += 1

        self.to = Gtk.Entry(hexpand=True, placeholder_text="e-mail addresses or contact groups, separated by commas")
        label("_To:", self.to)
        self.to.connect("activate", lambda _e: self._on_send())

        mounts = self.mounts
        earlier = sending.earlier_recipients(sending.known_data_dirs(mounts))
        if earlier:
            flow = Gtk.FlowBox(selection_mode=Gtk.SelectionMode.NONE, max_children_per_line=4, hexpand=True)
            for r in earlier:
                b = Gtk.Button(label=plain_text(r))
                b.set_tooltip_text("Add %s" % plain_text(r))
                _name(Gtk, b, "Add %s" % plain_text(r))
                b.connect("clicked", self._add_recipient, r)
                flow.append(b)
            label("Earlier:", flow)

        self.subject = Gtk.Entry(hexpand=True, text=sending.default_subject(self.paths))
        label("_Subject:", self.subject)

        self.message = Gtk.TextView(wrap_mode=Gtk.WrapMode.WORD_CHAR, accepts_tab=False, left_margin=8, right_margin=8, top_margin=6, bottom_margin=6)
        scroll = Gtk.ScrolledWindow(min_content_height=72, hexpand=True, has_frame=True)
        scroll.set_child(self.message)
        label("_Message:", scroll, self.message)

        days_box = Gtk.Box(spacing=6)
        self.expires = Gtk.CheckButton(label="Expires after")
        self.days = Gtk.SpinButton.new_with_range(1, DAYS_MAX, 1)
        self.days.set_value(DAYS_DEFAULT)
        self.days.set_sensitive(False)
        _name(Gtk, self.days, "Days")
        self.expires.connect("toggled", lambda b: self.days.set_sensitive(b.get_active()))
        days_box.append(self.expires)
        days_box.append(self.days)
        days_box.append(Gtk.Label(label="days (otherwise the account's default)"))
        label("Expiry:", days_box)

        self.password = Gtk.PasswordEntry(hexpand=True, show_peek_icon=True, placeholder_text="none")
        label("_Password:", self.password)

        self.notify = Gtk.CheckButton(label="E-mail me when it is downloaded")
        grid.attach(self.notify, 1, row, 1, 1)
        row += 1
        self.confirmation = Gtk.CheckButton(label="E-mail me a confirmation once it is sent")
        grid.attach(self.confirmation, 1, row, 1, 1)
        row += 1

        # Its accessible name is its text: what a screen reader reads out when it changes.
        self.status = Gtk.Label(xalign=0, wrap=True, visible=False)
        box.append(self.status)
        self.progress = Gtk.ProgressBar(visible=False, show_text=True)
        box.append(self.progress)

        buttons = Gtk.Box(spacing=8, halign=Gtk.Align.END)
        self.cancel_button = Gtk.Button(label="_Cancel", use_underline=True)
        self.cancel_button.connect("clicked", lambda _b: self._cancel())
        self.send_button = Gtk.Button(label="_Send", use_underline=True)
        self.send_button.add_css_class("suggested-action")
        self.send_button.connect("clicked", lambda _b: self._on_send())
        buttons.append(self.cancel_button)
        buttons.append(self.send_button)
        box.append(buttons)
        w.set_default_widget(self.send_button)

    def run(self) -> None:
        self.window.present()
        self.to.grab_focus()
        self.loop.run()

    def _finish(self, code: int) -> None:
        self.exit_code = code
        self.window.destroy()
        self.loop.quit()

    def _say(self, text: str, problem: bool = True) -> None:
        self.status.set_text(text)
        self.status.set_visible(True)
        if problem:
            self.status.add_css_class("error")
        else:
            self.status.remove_css_class("error")

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        for w in (self.to, self.subject, self.message, self.expires, self.days, self.password, self.notify, self.confirmation, self.send_button):
            w.set_sensitive(not busy and (w is not self.days or self.expires.get_active()))
        self.progress.set_visible(busy)

    def _add_recipient(self, _button: Any, recipient: str) -> None:
        current, _ = sending.parse_recipients(self.to.get_text())
        if recipient.lower() not in (r.lower() for r in current):
            self.to.set_text(", ".join(current + [recipient]))

    def _check_paths(self) -> None:
        missing = [p for p in self.paths if not os.path.lexists(p)]
        on_mount = sending.on_a_mount(self.paths, self.mounts)
        if missing:
            self._say("%s no longer exists." % plain_text(missing[0]))
        elif on_mount:
            self._say("%s is on the transferfs mount: copy it into outbox/, or forward its transfer." % plain_text(os.path.basename(on_mount[0])))
        else:
            return
        self.send_button.set_sensitive(False)

    # ---- cancel -----------------------------------------------------------------------------

    def _on_close_request(self, _w: Any) -> bool:
        self._cancel()
        return True

    def _cancel(self) -> None:
        """Nothing is sent: a copy under way is removed, a `transferfs send` is stopped before it completes."""
        self.cancelled = True
        if self.process is not None and self.process.poll() is None:
            # As Ctrl-C: transferfs send leaves the transfer unfinished, so no one gets it.
            try:
                os.killpg(self.process.pid, signal.SIGINT)
            except OSError:
                pass
            return
        if not self.busy:
            self._finish(1)

    # ---- send -------------------------------------------------------------------------------

    def _request(self) -> Optional[sending.SendRequest]:
        recipients, problems = sending.parse_recipients(self.to.get_text())
        if problems:
            self._say(problems[0] + ".")
            return None
        subject = self.subject.get_text().strip()
        if not subject:
            self._say("The subject is empty.")
            return None
        buf = self.message.get_buffer()
        message = buf.get_text(buf.get_start_iter(), buf.get_end_iter(), False).strip()
        password = self.password.get_text()
        return sending.SendRequest(
            paths=self.paths,
            recipients=recipients,
            subject=subject,
            message=message or None,
            days=int(self.days.get_value()) if self.expires.get_active() else None,
            password=password or None,
            notify=True if self.notify.get_active() else None,
            confirmation=True if self.confirmation.get_active() else None,
        )

    def _on_send(self) -> None:
        if self.busy or not self.send_button.get_sensitive():
            return
        request = self._request()
        if request is None:
            return
        mount = sending.own_mount(read_mounts())
        if sending.route(request, mount) == sending.OUTBOX:
            assert mount is not None
            trouble = sending.service_trouble(sending.data_dir_of(mount))
            if trouble and not self.warned_offline:
                self.warned_offline = True
                self._say(trouble)
                return
            self._through_outbox(request, mount.mount_point)
        else:
            self._through_command(request, mount)

    def _through_outbox(self, request: sending.SendRequest, mount_point: str) -> None:
        plan = sending.outbox_plan(request, mount_point)
        count, total = sending.files_below([src for src, _ in plan.copies])
        self._set_busy(True)
        self._say("Putting %d file%s in the outbox…" % (count, "" if count == 1 else "s"), problem=False)
        done = [0]

        def progress(n: int) -> None:
            done[0] += n
            self.GLib.idle_add(self._show_fraction, done[0] / total if total else 1.0)

        def work() -> None:
            try:
                entry = sending.place_in_outbox(plan, progress, lambda: self.cancelled)
                self.GLib.idle_add(self._handed_over, entry)
            except sending.Cancelled:
                self.GLib.idle_add(self._finish, 1)
            except FileExistsError:
                self.GLib.idle_add(self._failed, "Something called \u201c%s\u201d is already waiting in the outbox for these recipients: change the subject." % plain_text(plan.name))
            except OSError as error:
                self.GLib.idle_add(self._failed, "The files could not be put in the outbox: %s." % plain_text(error.strerror or str(error)))

        threading.Thread(target=work, name="transferfs-outbox", daemon=True).start()

    def _show_fraction(self, fraction: float) -> bool:
        self.progress.set_fraction(min(1.0, fraction))
        return False

    def _handed_over(self, entry: str) -> bool:
        # The mount sends it now; its notification brings the link.
        print("outbox: %s" % entry, flush=True)
        self._finish(0)
        return False

    def _failed(self, text: str) -> bool:
        self._set_busy(False)
        self.process = None
        if self.cancelled:
            self._finish(1)
        else:
            self._say(text)
        return False

    def _through_command(self, request: sending.SendRequest, mount: Any) -> None:
        argv, extra = sending.send_command(request, core.transferfs_command())
        env = dict(os.environ, **extra)
        if mount is not None:
            # Recorded in the mount's sent log, so that its sent/ lists the transfer.
            env["TRANSFERFS_DATA_DIR"] = sending.data_dir_of(mount)
        self._set_busy(True)
        self._say("Sending…", problem=False)
        # How far `transferfs send --json` got is not told: the bar only shows it is going.
        self.progress.set_show_text(False)
        try:
            self.process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        except OSError as error:
            self._failed(sending.failure_text(None, str(error)))
            return
        process = self.process
        self.GLib.timeout_add(150, self._pulse)

        def wait() -> None:
            out, err = process.communicate()
            self.GLib.idle_add(self._command_ended, process.returncode, out, err, request.subject)

        threading.Thread(target=wait, name="transferfs-send", daemon=True).start()

    def _pulse(self) -> bool:
        if self.process is None or self.process.poll() is not None:
            return False
        self.progress.pulse()
        return True

    def _command_ended(self, code: int, out: str, err: str, subject: str) -> bool:
        if self.cancelled:
            self._finish(1)
            return False
        link = sending.sent_link(out) if code == 0 else None
        if code != 0 or link is None:
            self._failed(sending.failure_text(code, err))
            return False
        print("sent: %s" % link, flush=True)
        try:
            subprocess.Popen(sending.sent_notification(subject, link), stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError:
            pass
        self._finish(0)
        return False


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
