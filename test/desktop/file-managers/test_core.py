"""The file-manager extensions' logic (desktop/file-managers/transferfs_fm/core.py): each state's
emblem and words, which menu entries each kind of entry gets, the commands and what is said
when they fail. Run by test/desktop/file-manager-core.test.ts.
"""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../desktop/file-managers"))
from transferfs_fm import core  # noqa: E402

MNT = "/home/ann/Transfers"
MOUNTINFO = (
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "90 22 0:50 / /home/ann/Transfers rw,nosuid,nodev,relatime shared:60 - fuse.transferfs transferfs:/home/ann/.local/share/transferfs rw,user_id=1000\n"
    "91 22 0:51 / /home/ann/Other\\040Mount rw,relatime - fuse.sshfs ann@host:/ rw\n"
    "92 22 0:52 / /home/ann/old\\040mount rw,relatime - fuse.transferfs transferfs rw\n"
)
MOUNTS = core.parse_mountinfo(MOUNTINFO)


def on_mount(rel, is_dir=False, state=None, pinned_itself=False, origin_url=None, has_link_file=False):
    parts = tuple(rel.split("/"))
    return core.Entry(os.path.join(MNT, rel), is_dir, MNT, state, pinned_itself, origin_url, has_link_file, parts)


def local(path="/home/ann/report.pdf", is_dir=False):
    return core.Entry(path, is_dir)


EVERY_STATE = [
    # (attribute, kind, emblem, column)
    ("online", "online", "emblem-web", "Only on the service"),
    ("partial 40%", "partial", "emblem-downloads", "Partly here (40%)"),
    ("cached", "cached", "emblem-default", "On this computer"),
    ("pinned", "pinned", "emblem-favorite", "Kept on this computer"),
    ("pinned, fetching 7%", "fetching", "emblem-synchronizing", "Keeping: fetching 7%"),
    ("pinned, failed: the service answers 500 every time", "failed", "emblem-important", "Keeping failed: the service answers 500 every time"),
    ("3 of 5 files pinned", "partial", "emblem-downloads", "3 of 5 files kept"),
    ("waiting", "waiting", "appointment-soon", "Waiting to send"),
    ("sending 40%", "sending", "emblem-synchronizing", "Sending 40%"),
    ("sent", "sent", "emblem-shared", "Sent"),
    ("failed: the address is not valid", "failed", "emblem-important", "Failed: the address is not valid"),
    ("2 of 4 sent, 1 sending 40%, 1 failed", "failed", "emblem-important", "2 of 4 sent, 1 sending 40%, 1 failed"),
    ("1 sending 40%, 2 waiting", "sending", "emblem-synchronizing", "1 sending 40%, 2 waiting"),
    ("2 of 4 sent, 2 waiting", "waiting", "appointment-soon", "2 of 4 sent, 2 waiting"),
    ("empty", None, None, "Empty"),
]


class States(unittest.TestCase):
    def test_every_state_has_its_kind_emblem_and_words(self):
        for state, kind, emblem, words in EVERY_STATE:
            with self.subTest(state=state):
                entry = on_mount("outbox/x" if kind in ("waiting", "sending", "sent") else "inbox/T/a.bin", state=state)
                self.assertEqual(core.state_kind(state), kind)
                self.assertEqual(core.emblem(entry), emblem)
                self.assertEqual(core.column_text(entry), words)

    def test_no_state_shows_nothing(self):
        for entry in (on_mount("sent", is_dir=True), on_mount("inbox/T/.transfer.json"), local()):
            self.assertIsNone(core.emblem(entry))
            self.assertEqual(core.column_text(entry), "")

    def test_words_of_a_later_version_are_shown_as_they_are_with_no_emblem(self):
        entry = on_mount("inbox/T", True, state="archived somewhere")
        self.assertIsNone(core.emblem(entry))
        self.assertEqual(core.column_text(entry), "Archived somewhere")

    def test_a_reason_with_control_characters_is_shown_escaped(self):
        entry = on_mount("outbox/x", state="failed: bad\x1b]0;pwned\x07 name\u202e")
        self.assertEqual(core.column_text(entry), "Failed: bad\\x1b]0;pwned\\x07 name\\u{202e}")

    def test_only_fetches_and_sends_are_asked_again(self):
        changing = {s for s, *_ in EVERY_STATE if core.is_changing(on_mount("inbox/T", True, state=s))}
        self.assertEqual(changing, {"pinned, fetching 7%", "waiting", "sending 40%", "1 sending 40%, 2 waiting", "2 of 4 sent, 2 waiting"})


class Mounts(unittest.TestCase):
    def test_paths_on_a_transferfs_mount_and_off_it(self):
        self.assertEqual(core.transferfs_mount_of(MOUNTS, MNT + "/inbox/T/a.bin"), MNT)
        self.assertEqual(core.transferfs_mount_of(MOUNTS, MNT), MNT)
        self.assertIsNone(core.transferfs_mount_of(MOUNTS, "/home/ann/Transfers-2/a"))
        self.assertIsNone(core.transferfs_mount_of(MOUNTS, "/home/ann/report.pdf"))
        # Another FUSE filesystem, and a name with a space (mountinfo writes \040).
        self.assertIsNone(core.transferfs_mount_of(MOUNTS, "/home/ann/Other Mount/x"))
        # An older transferfs names no data folder in its source: still a transferfs mount.
        self.assertEqual(core.transferfs_mount_of(MOUNTS, "/home/ann/old mount/inbox"), "/home/ann/old mount")

    def test_a_local_path_is_read_without_any_attribute(self):
        with tempfile.NamedTemporaryFile() as f:
            entry = core.read_entry(f.name, False, MOUNTS)
            self.assertFalse(entry.on_mount)
            self.assertIsNone(entry.state)

    def test_where_an_entry_is(self):
        self.assertEqual(on_mount("inbox/T/docs/a.bin").transfer_folder, MNT + "/inbox/T")
        self.assertTrue(on_mount("search/report/T", True).is_transfer_folder)
        self.assertIsNone(on_mount("outbox/bob@example.com/a.bin").transfer_folder)
        self.assertIsNone(on_mount("inbox", True).transfer_folder)


class Menus(unittest.TestCase):
    def test_a_received_transfer_only_on_the_service(self):
        self.assertEqual(core.menu_actions([on_mount("inbox/T", True, state="online")]), [core.KEEP, core.DETAILS])

    def test_a_received_file_on_this_computer_with_its_address(self):
        entry = on_mount("inbox/T/a.bin", state="cached", origin_url="https://example.com/t/abc")
        self.assertEqual(core.menu_actions([entry]), [core.KEEP, core.FREE, core.COPY_LINK, core.OPEN_LINK, core.DETAILS])
        self.assertEqual(core.link_of(entry), "https://example.com/t/abc")

    def test_partly_here(self):
        self.assertEqual(core.menu_actions([on_mount("inbox/T/a.bin", state="partial 40%")]), [core.KEEP, core.FREE, core.DETAILS])

    def test_pinned_itself_offers_stop_keeping_not_keep_nor_free(self):
        for state in ("pinned", "pinned, fetching 7%", "pinned, failed: the service answers 500 every time"):
            with self.subTest(state=state):
                self.assertEqual(core.menu_actions([on_mount("inbox/T", True, state=state, pinned_itself=True)]), [core.STOP_KEEPING, core.DETAILS])

    def test_kept_through_a_folder_above_offers_neither(self):
        self.assertEqual(core.menu_actions([on_mount("inbox/T/a.bin", state="pinned")]), [core.DETAILS])

    def test_a_pin_over_budget_leaves_it_as_it_was_and_says_how_much_room_it_needs(self):
        # The pin was refused: the state did not change, so "Keep" is offered again.
        entry = on_mount("inbox/Big", True, state="online")
        self.assertIn(core.KEEP, core.menu_actions([entry]))
        stderr = "transferfs: No space left on device: needs 41.2 MiB of room in the cache, and diskCacheBytes is 64 MiB with 23 MiB pinned\n"
        ok, text = core.outcome(core.KEEP, [entry.path], 1, stderr)
        self.assertFalse(ok)
        self.assertEqual(text, "Could not keep Big: No space left on device: needs 41.2 MiB of room in the cache, and diskCacheBytes is 64 MiB with 23 MiB pinned")

    def test_a_folder_some_of_whose_files_are_kept(self):
        self.assertEqual(core.menu_actions([on_mount("inbox/T", True, state="2 of 5 files pinned")]), [core.KEEP, core.FREE, core.DETAILS])

    def test_a_waiting_or_failed_send_has_no_keep_free_or_link(self):
        for state in ("waiting", "sending 40%", "failed: the address is not valid", "1 sending 40%, 2 waiting, 1 failed"):
            with self.subTest(state=state):
                self.assertEqual(core.menu_actions([on_mount("outbox/bob@example.com/a.bin", state=state)]), [])

    def test_a_sent_transfer_with_its_link(self):
        entry = on_mount("sent/T", True, state="cached", has_link_file=True)
        self.assertEqual(core.menu_actions([entry]), [core.KEEP, core.FREE, core.COPY_LINK, core.OPEN_LINK, core.DETAILS])

    def test_the_files_the_mount_makes_are_never_kept_or_freed(self):
        self.assertEqual(core.menu_actions([on_mount("sent/T/link.url", state=None)]), [core.DETAILS])
        self.assertEqual(core.menu_actions([on_mount("sent", True)]), [])
        self.assertEqual(core.menu_actions([on_mount(".status")]), [])

    def test_several_selected_get_what_applies_to_all_and_no_single_transfer_entries(self):
        a = on_mount("inbox/A", True, state="online")
        b = on_mount("inbox/B", True, state="cached")
        self.assertEqual(core.menu_actions([a, b]), [core.KEEP])
        self.assertEqual(core.menu_actions([b, on_mount("inbox/C", True, state="partial 3%")]), [core.KEEP, core.FREE])
        self.assertEqual(core.menu_actions([a, local()]), [])

    def test_local_files_are_sent_once_the_send_dialog_is_there(self):
        self.assertEqual(core.menu_actions([local(), local("/home/ann/Photos", True)]), [core.SEND])
        self.assertEqual(core.menu_actions([local()], can_send=False), [])
        self.assertEqual(core.menu_actions([]), [])


class Commands(unittest.TestCase):
    def test_each_action_runs_the_transferfs_command(self):
        paths = [MNT + "/inbox/T", MNT + "/inbox/U"]
        self.assertEqual(core.command_for(core.KEEP, paths, {}), ["transferfs", "pin"] + paths)
        self.assertEqual(core.command_for(core.STOP_KEEPING, paths[:1], {}), ["transferfs", "unpin", paths[0]])
        self.assertEqual(core.command_for(core.FREE, paths[:1], {}), ["transferfs", "free", paths[0]])
        env = {"TRANSFERFS_COMMAND": "node '/opt/transfer fs/main.js'"}
        self.assertEqual(core.command_for(core.KEEP, paths[:1], env), ["node", "/opt/transfer fs/main.js", "pin", paths[0]])
        with self.assertRaises(ValueError):
            core.command_for(core.COPY_LINK, paths, {})

    def test_what_is_said_when_done_or_not(self):
        p = [MNT + "/inbox/T"]
        self.assertEqual(core.outcome(core.KEEP, p, 0, ""), (True, "Keeping T"))
        self.assertEqual(core.outcome(core.FREE, p + [MNT + "/inbox/U"], 0, ""), (True, "Freed the space of T and 1 more"))
        self.assertEqual(core.outcome(core.STOP_KEEPING, p, None, "[Errno 2] No such file or directory: 'transferfs'"),
                         (False, "Could not stop keeping T: the transferfs command could not be run ([Errno 2] No such file or directory: 'transferfs')"))
        self.assertEqual(core.outcome(core.KEEP, p, 1, "transferfs: is not mounted with the data folder /x\n"),
                         (False, "Could not keep T: is not mounted with the data folder /x"))
        self.assertEqual(core.outcome(core.KEEP, p, 3, ""), (False, "Could not keep T: transferfs ended with code 3"))


class Details(unittest.TestCase):
    def test_details_read_as_text_with_sender_text_escaped(self):
        text = core.details_text({
            "subject": "Report\x1b[2J",
            "from": "alice@example.com",
            "url": "https://example.com/t/abc",
            "sentdate": 1764330000,
            "passwordprotected": False,
            "recipients": [{"email": "bob@example.com"}],
            "files": [{"filename": "a.bin", "filesize": 12}],
            "key": "never shown",
        })
        self.assertEqual(text, "\n".join([
            "Subject: Report\\x1b[2J",
            "From: alice@example.com",
            "Link: https://example.com/t/abc",
            "Sent: 2025-11-28 11:40 UTC",
            "Password protected: no",
            "Recipients:",
            "  bob@example.com",
            "Files:",
            "  a.bin (12 bytes)",
        ]) + "\n")

    def test_a_sent_transfers_link_file(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "link.url"), "w") as f:
                f.write("[InternetShortcut]\nURL=https://example.com/t/xyz\n")
            entry = core.Entry(d, True, MNT, "cached", False, None, True, ("sent", "T"))
            self.assertEqual(core.link_of(entry), "https://example.com/t/xyz")
            self.assertEqual(core.link_of(core.Entry(d, True, MNT, "cached", False, None, False, ("sent", "T"))), None)


class AsGioGivesThem(unittest.TestCase):
    """The extensions ask GIO for the attributes (no Python thread waits on the mount)."""

    def test_gio_names_the_user_attributes_in_its_xattr_namespace(self):
        self.assertEqual([core.gio_attribute(n) for n in core.ATTRIBUTES], ["xattr::transferfs.state", "xattr::transferfs.pin", "xattr::xdg.origin.url"])
        with self.assertRaises(ValueError):
            core.gio_attribute("trusted.x")

    def test_gio_escaped_text_reads_as_the_mount_wrote_it(self):
        # GIO writes each byte outside printable ASCII, and the backslash, as \xNN.
        self.assertEqual(core.gio_text("failed: Caf\\xc3\\xa9 \\xe6\\x97\\xa5 \\x5c back"), "failed: Café 日 \\ back")
        self.assertEqual(core.gio_text("pinned"), "pinned")
        self.assertIsNone(core.gio_text(None))

    def test_an_entry_from_the_attributes_given(self):
        given = {core.STATE_ATTR: "cached", core.PIN_ATTR: "1", core.ORIGIN_ATTR: "https://example.com/t/abc"}
        entry = core.entry_from(MNT + "/inbox/T/a.bin", False, MOUNTS, given.get)
        self.assertEqual((entry.state, entry.pinned_itself, entry.origin_url, entry.parts), ("cached", True, "https://example.com/t/abc", ("inbox", "T", "a.bin")))
        # An address that is not a web page is not offered as a link.
        entry = core.entry_from(MNT + "/inbox/T/a.bin", False, MOUNTS, {core.ORIGIN_ATTR: "file:///etc/passwd"}.get)
        self.assertIsNone(entry.origin_url)
        self.assertFalse(core.entry_from("/home/ann/report.pdf", False, MOUNTS, given.get).on_mount)

    def test_the_three_attributes_from_the_one_read(self):
        self.assertEqual(core.gio_attribute(core.SHOWN_ATTR), "xattr::transferfs.shown")
        each = lambda text: [core.shown_attributes(text)[name] for name in core.ATTRIBUTES]
        self.assertEqual(each("pinned\npin page"), ["pinned", "1", core.PAGE_NOT_READ])
        self.assertEqual(each("cached\npage"), ["cached", None, core.PAGE_NOT_READ])
        self.assertEqual(each("online"), ["online", None, None])
        self.assertEqual(each(""), [None, None, None])
        self.assertEqual(each("\npage"), [None, None, core.PAGE_NOT_READ])
        # As GIO gives it: the bytes outside printable ASCII, and the backslash, as \xNN.
        self.assertEqual(each(core.gio_text("pinned, failed: Caf\\xc3\\xa9\\x0apin")), ["pinned, failed: Café", "1", None])
        # None: no such attribute (a mount of an earlier version).
        self.assertIsNone(core.shown_attributes(None))

    def test_an_entry_from_the_one_read_has_its_page_but_reads_its_address_when_used(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "inbox", "T", "a.bin")
            os.makedirs(os.path.dirname(path))
            open(path, "w").close()
            os.setxattr(path, core.ORIGIN_ATTR, b"https://example.com/t/abc")
            mounts = [core.Mount(d, core.FS_TYPE, "transferfs:/data")]
            entry = core.entry_from(path, False, mounts, core.shown_attributes("cached\npage").get)
            self.assertEqual((entry.state, entry.has_page, entry.origin_url), ("cached", True, None))
            self.assertEqual(core.menu_actions([entry]), [core.KEEP, core.FREE, core.COPY_LINK, core.OPEN_LINK, core.DETAILS])
            self.assertEqual(core.link_of(entry), "https://example.com/t/abc")
            # An address that is not a web page is no link, read late as early.
            os.setxattr(path, core.ORIGIN_ATTR, b"file:///etc/passwd")
            self.assertIsNone(core.link_of(entry))
            entry = core.entry_from(path, False, mounts, core.shown_attributes("cached").get)
            self.assertFalse(entry.has_page)
            self.assertNotIn(core.COPY_LINK, core.menu_actions([entry]))

    def test_only_a_sent_transfers_folder_is_looked_in_for_its_link_file(self):
        wants = lambda rel, is_dir=True: core.wants_link_file(core.entry_from(MNT + "/" + rel, is_dir, MOUNTS, lambda _n: None))
        self.assertTrue(wants("sent/T"))
        self.assertFalse(wants("sent/T/a.bin", False))
        self.assertFalse(wants("inbox/T"))
        self.assertFalse(wants("sent"))

    def test_details_and_link_from_their_text(self):
        self.assertEqual(core.details_from_text('{"subject": "Hi"}'), {"subject": "Hi"})
        self.assertIsNone(core.details_from_text("[1, 2]"))
        self.assertIsNone(core.details_from_text("not json"))
        self.assertEqual(core.link_from_text("[InternetShortcut]\r\nURL=https://example.com/t/x\r\n"), "https://example.com/t/x")
        self.assertIsNone(core.link_from_text("[InternetShortcut]\nURL=javascript:alert(1)\n"))


if __name__ == "__main__":
    unittest.main()
