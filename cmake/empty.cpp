// libminnow.so has no sources of its own: its code is the whole minnow_core archive.
