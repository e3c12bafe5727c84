"""The resident's folder watch: the index follows the collection folders (see :mod:`.watcher`)."""

from gno_trio.watch.watcher import FolderWatcher

__all__ = ["FolderWatcher"]
