"""Catalogued tools this server does not implement yet: their names and descriptions.

They are part of the target surface (the catalogue order in
:mod:`gno_trio.tools.catalogue` lists them), so their read/write class is
known to the write gate before they exist. Implementing one means moving its
row into the family module that declares it whole.
"""

from __future__ import annotations

from typing import Final

from gno_trio.server.registry import ToolText

PLANNED: Final[tuple[ToolText, ...]] = ()
"""Every catalogued tool is implemented; a future one starts its life here."""
