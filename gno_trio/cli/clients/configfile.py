"""Reading and rewriting one client's configuration file, keeping everything else in it.

JSON files are edited with :mod:`.jsonc` (comments, trailing commas and the
layout of other entries stay byte for byte); Codex's TOML with ``tomlkit``,
which keeps comments and unrelated tables. Before a file is changed its
previous text is saved next to it as ``<name>.bak``; both writes are atomic
(the engine's one atomic file write), so a client never reads half a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gno_trio.cli.clients import jsonc
from gno_trio.cli.clients.targets import SERVER_NAME, Target
from gno_trio.engine import write_file_atomically
from gno_trio.errors import GnoError

if TYPE_CHECKING:
    import tomlkit

BACKUP_SUFFIX = ".bak"


@dataclass(frozen=True, slots=True)
class ConfigFile:
    """A client's configuration file as found on disk (``text`` None: there is none)."""

    target: Target
    path: Path
    text: str | None

    @classmethod
    def read(cls, target: Target, path: Path) -> ConfigFile:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(target, path, None)
        except (OSError, UnicodeDecodeError) as exc:
            raise GnoError("RUNTIME", f"Cannot read {path}: {exc}") from exc
        found = cls(target, path, text)
        found.servers()  # fail early, before anything is written, if it does not parse
        return found

    def _toml(self) -> tomlkit.TOMLDocument:
        import tomlkit  # only Codex's file is TOML; keep it off every other start-up
        from tomlkit.exceptions import TOMLKitError

        try:
            return tomlkit.parse(self.text or "")
        except TOMLKitError as exc:
            raise self._unreadable(exc) from exc

    def _unreadable(self, exc: Exception) -> GnoError:
        return GnoError(
            "CONFIG_INVALID",
            f"Cannot parse {self.path} ({exc}); fix it or move it away. Nothing was written.",
        )

    def servers(self) -> dict[str, Any]:
        """The client's servers (an empty mapping when the file or the key is missing)."""
        if self.text is None:
            return {}
        if self.target.toml:
            value: Any = self._toml().get(self.target.key, {})
        else:
            try:
                value = jsonc.loads(self.text).get(self.target.key, {})
            except jsonc.JsoncError as exc:
                raise self._unreadable(exc) from exc
        if not isinstance(value, dict):
            raise GnoError(
                "CONFIG_INVALID",
                f"{self.target.key} in {self.path} is not an object; nothing was written",
            )
        return dict(value)

    def entry(self) -> Any:
        """The stored ``gno`` server, or None."""
        return self.servers().get(SERVER_NAME)

    def with_entry(self, entry: dict[str, Any]) -> str:
        """The file's text with the ``gno`` server set to ``entry``."""
        if self.target.toml:
            import tomlkit

            document = self._toml()
            table = tomlkit.table()
            for key, value in entry.items():
                if isinstance(value, dict):
                    inner = tomlkit.table()
                    for name, item in value.items():
                        inner.add(name, item)
                    table.add(key, inner)
                else:
                    table.add(key, value)
            if self.target.key not in document:
                document.add(self.target.key, tomlkit.table(is_super_table=True))
            document[self.target.key][SERVER_NAME] = table  # type: ignore[index]
            return document.as_string()
        return jsonc.set_member(self.text or "", [self.target.key, SERVER_NAME], entry)

    def without_entry(self) -> str | None:
        """The file's text without the ``gno`` server (and without a server key left empty)."""
        if self.text is None or self.entry() is None:
            return None
        if self.target.toml:
            document = self._toml()
            servers = document[self.target.key]
            del servers[SERVER_NAME]  # type: ignore[union-attr]
            if not servers:
                del document[self.target.key]
            return document.as_string()
        text = jsonc.remove_member(self.text, [self.target.key, SERVER_NAME])
        assert text is not None
        if not jsonc.loads(text).get(self.target.key):
            text = jsonc.remove_member(text, [self.target.key]) or text
        return text


def replace_config(path: Path, text: str, previous: str | None) -> Path | None:
    """Write ``text`` to ``path`` after saving ``previous`` as the backup; the backup's path."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        backup = None
        if previous is not None:
            backup = path.with_name(path.name + BACKUP_SUFFIX)
            write_file_atomically(backup, previous)
        write_file_atomically(path, text)
    except OSError as exc:
        raise GnoError("RUNTIME", f"Cannot write {path}: {exc.strerror or exc}") from exc
    return backup


__all__ = ["BACKUP_SUFFIX", "ConfigFile", "replace_config"]
