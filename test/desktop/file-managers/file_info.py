"""A file object shaped like a file manager's FileInfo (NautilusFileInfo, NemoFileInfo,
CajaFileInfo): what the transferfs extension asks of it, with what it was given kept for the
checks. Used by check_binding.py and check_listing.py.
"""


class FileInfo:
    """What the extension asks of a file manager's FileInfo."""

    def __init__(self, path, is_dir=False):
        from gi.repository import Gio

        self.location = Gio.File.new_for_path(path)
        self.is_dir = is_dir
        self.emblems = []
        self.attributes = {}
        self.invalidated = 0

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

    def invalidate_extension_info(self):
        self.invalidated += 1

    def is_gone(self):
        return False
