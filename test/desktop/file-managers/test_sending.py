"""The send dialog's logic (desktop/file-managers/transferfs_fm/sending.py): the recipients read
from what was typed, which way a send goes, the outbox entry it makes (copied under a temporary
name, then renamed; nothing left behind when cancelled), the `transferfs send` command line
(the password never in it), failures in plain words, and earlier sends' recipients.
Run by test/desktop/file-manager-core.test.ts.
"""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../desktop/file-managers"))
from transferfs_fm import sending  # noqa: E402
from transferfs_fm.mounts import Mount  # noqa: E402

MOUNT = Mount("/home/ann/Transfers", "fuse.transferfs", "transferfs:/home/ann/.local/share/transferfs")


def request(**kw):
    base = dict(paths=["/home/ann/report.pdf"], recipients=["bob@example.com"], subject="report.pdf")
    base.update(kw)
    return sending.SendRequest(**base)


class Recipients(unittest.TestCase):
    def test_split_at_commas_semicolons_and_lines_each_once(self):
        got, problems = sending.parse_recipients(" bob@example.com, Team;\nBOB@example.com ,, carol@example.org ")
        self.assertEqual(got, ["bob@example.com", "Team", "carol@example.org"])
        self.assertEqual(problems, [])

    def test_a_part_with_an_at_must_be_an_address(self):
        got, problems = sending.parse_recipients("bob@example, ann@example.com")
        self.assertEqual(got, ["ann@example.com"])
        self.assertEqual(problems, ["bob@example is not an e-mail address"])

    def test_the_recipient_folder_is_the_addresses_joined(self):
        self.assertEqual(sending.recipient_folder(["a@x.org", "b@y.org"]), "a@x.org,b@y.org")
        self.assertEqual(sending.recipient_folder([]), "")
        # A group's folder is a recipient folder only where the mount knows the group.
        self.assertIsNone(sending.recipient_folder(["a@x.org", "Team"]))
        self.assertIsNone(sending.recipient_folder(["a%d@example.com" % i for i in range(30)]))
        # A name the outbox takes as temporary would wait for ever.
        self.assertIsNone(sending.recipient_folder(["a@example.tmp"]))


class Route(unittest.TestCase):
    def test_through_the_outbox_when_mounted_and_nothing_of_its_own(self):
        self.assertEqual(sending.route(request(), MOUNT), sending.OUTBOX)
        self.assertEqual(sending.route(request(recipients=[]), MOUNT), sending.OUTBOX)

    def test_through_transferfs_send_otherwise(self):
        self.assertEqual(sending.route(request(), None), sending.COMMAND)
        for kw in (dict(message="hi"), dict(days=3), dict(password="s3cret"), dict(notify=True), dict(confirmation=True),
                   dict(recipients=["Team"]), dict(subject="a/b"), dict(subject=".hidden"), dict(subject="x.part"),
                   dict(subject="é" * 200), dict(paths=["/a/x.txt", "/b/x.txt"], subject="Both")):
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                self.assertEqual(sending.route(request(**kw), MOUNT), sending.COMMAND)


class Outbox(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.mnt = os.path.join(self.root, "mnt")
        os.makedirs(os.path.join(self.mnt, "outbox"))
        self.src = os.path.join(self.root, "src")
        os.makedirs(os.path.join(self.src, "photos", "raw"))
        self.write("report.pdf", b"r" * 3000)
        self.write("photos/a.jpg", b"a" * 10)
        self.write("photos/raw/b.raw", b"b" * 20)
        os.symlink("a.jpg", os.path.join(self.src, "photos", "link"))

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, data):
        with open(os.path.join(self.src, rel), "wb") as f:
            f.write(data)

    def tree(self, top):
        out = []
        for root, dirs, files in os.walk(top):
            for name in dirs + files:
                full = os.path.join(root, name)
                out.append(os.path.relpath(full, top) + ("/" if os.path.isdir(full) and not os.path.islink(full) else ""))
        return sorted(out)

    def test_one_file_under_its_own_name_is_the_entry(self):
        plan = sending.outbox_plan(request(paths=[os.path.join(self.src, "report.pdf")]), self.mnt)
        entry = sending.place_in_outbox(plan)
        self.assertEqual(entry, os.path.join(self.mnt, "outbox", "bob@example.com", "report.pdf"))
        self.assertEqual(self.tree(os.path.join(self.mnt, "outbox")), ["bob@example.com/", "bob@example.com/report.pdf"])

    def test_another_subject_or_several_items_make_a_folder_named_by_the_subject(self):
        plan = sending.outbox_plan(request(paths=[os.path.join(self.src, "report.pdf"), os.path.join(self.src, "photos")], subject="For Bob",
                                           recipients=["bob@example.com", "ann@example.org"]), self.mnt)
        seen = []
        sending.place_in_outbox(plan, progress=seen.append)
        self.assertEqual(self.tree(os.path.join(self.mnt, "outbox", "bob@example.com,ann@example.org")), [
            "For Bob/", "For Bob/photos/", "For Bob/photos/a.jpg", "For Bob/photos/raw/", "For Bob/photos/raw/b.raw", "For Bob/report.pdf"])
        self.assertEqual(sum(seen), 3030)
        self.assertEqual(sending.files_below([os.path.join(self.src, "report.pdf"), os.path.join(self.src, "photos")]), (3, 3030))

    def test_one_folder_is_the_entry_under_the_subject_and_no_recipient_is_a_link(self):
        plan = sending.outbox_plan(request(paths=[os.path.join(self.src, "photos")], subject="Holiday", recipients=[]), self.mnt)
        sending.place_in_outbox(plan)
        self.assertEqual(self.tree(os.path.join(self.mnt, "outbox")), ["Holiday/", "Holiday/a.jpg", "Holiday/raw/", "Holiday/raw/b.raw"])

    def test_copied_under_a_temporary_name_then_renamed(self):
        plan = sending.outbox_plan(request(paths=[os.path.join(self.src, "photos")], subject="Holiday"), self.mnt)
        names = []

        def progress(_n):
            names.extend(os.listdir(plan.folder))

        sending.place_in_outbox(plan, progress=progress)
        self.assertTrue(names and all(sending.is_temporary_name(n) for n in names), names)
        self.assertEqual(os.listdir(plan.folder), ["Holiday"])

    def test_cancelled_or_taken_leaves_nothing(self):
        plan = sending.outbox_plan(request(paths=[os.path.join(self.src, "photos")], subject="Holiday"), self.mnt)
        with self.assertRaises(sending.Cancelled):
            sending.place_in_outbox(plan, cancelled=lambda: True)
        self.assertEqual(os.listdir(plan.folder), [])
        os.mkdir(os.path.join(plan.folder, "Holiday"))
        with self.assertRaises(FileExistsError):
            sending.place_in_outbox(plan)
        self.assertEqual(os.listdir(plan.folder), ["Holiday"])
        self.assertEqual(os.listdir(os.path.join(plan.folder, "Holiday")), [])


class Command(unittest.TestCase):
    def test_the_command_line_with_every_option_and_the_password_in_the_environment(self):
        argv, env = sending.send_command(request(recipients=["bob@example.com", "Team"], subject="-x", message="Hello", days=3,
                                                 password="s3cret", notify=True, confirmation=False), ["transferfs"])
        self.assertEqual(argv, ["transferfs", "send", "--json", "--to", "bob@example.com", "--to", "Team", "--subject", "-x",
                                "--message", "Hello", "--days", "3", "--notify", "--no-confirmation", "--", "/home/ann/report.pdf"])
        self.assertEqual(env, {"TRANSFERFS_PASSWORD": "s3cret"})
        self.assertNotIn("s3cret", " ".join(argv))
        argv, env = sending.send_command(request(), ["node", "main.js"])
        self.assertEqual(argv[:4], ["node", "main.js", "send", "--json"])
        self.assertEqual(env, {})

    def test_failures_in_plain_words(self):
        self.assertIn("not signed in", sending.failure_text(3, "transferfs: not signed in\nhint: ..."))
        self.assertIn("cannot be reached", sending.failure_text(5, "transferfs: connect ECONNREFUSED"))
        self.assertEqual(sending.failure_text(1, "transferfs: too large\x1b[31m\nhint: split it\n"), "The transfer was not sent: too large\\x1b[31m")
        self.assertIn("could not be started", sending.failure_text(None, "No such file"))

    def test_the_link_of_the_answer(self):
        self.assertEqual(sending.sent_link(json.dumps({"transferid": "t1", "url": "https://x.example/t1"})), "https://x.example/t1")
        self.assertIsNone(sending.sent_link("not json"))


class Earlier(unittest.TestCase):
    def test_recipients_of_earlier_sends_latest_first_each_once(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            with open(os.path.join(a, "sent.jsonl"), "w") as f:
                f.write(json.dumps({"recipients": ["old@example.com", "Team"], "sentAt": 1}) + "\n")
                f.write("{broken\n")
                f.write(json.dumps({"recipients": ["new@example.com"], "sentAt": 30}) + "\n")
            with open(os.path.join(b, "sent.jsonl"), "w") as f:
                f.write(json.dumps({"recipients": ["team", "mid@example.com"], "sentAt": 20}) + "\n")
            self.assertEqual(sending.earlier_recipients([a, b, "/nonexistent"]), ["new@example.com", "team", "mid@example.com", "old@example.com"])

    def test_data_folders_of_the_mounts_and_transferfs_own(self):
        env = {"HOME": "/home/ann", "XDG_DATA_HOME": "/home/ann/.data"}
        other = Mount("/mnt/x", "fuse.transferfs", "transferfs:/srv/tfs")
        self.assertEqual(sending.known_data_dirs([MOUNT, other, Mount("/", "ext4", "/dev/sda1")], env),
                         ["/home/ann/.local/share/transferfs", "/srv/tfs", "/home/ann/.data/transferfs"])
        self.assertEqual(sending.data_dir_of(None, {"TRANSFERFS_DATA_DIR": "/d"}), "/d")

    def test_an_unreachable_service_in_the_mount_status(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertIsNone(sending.service_trouble(d))
            with open(os.path.join(d, "status.json"), "w") as f:
                json.dump({"service": {"state": "offline", "reason": "connect ECONNREFUSED", "since": 1, "retryingReads": 0}}, f)
            text = sending.service_trouble(d)
            self.assertIn("cannot be reached", text)
            self.assertIn("ECONNREFUSED", text)
            with open(os.path.join(d, "status.json"), "w") as f:
                json.dump({"service": {"state": "online"}}, f)
            self.assertIsNone(sending.service_trouble(d))


if __name__ == "__main__":
    unittest.main()
