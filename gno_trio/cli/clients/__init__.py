"""Setting gno-trio up in MCP clients: their config locations, entry shapes and files.

:mod:`.targets` is the table of clients (where each keeps its servers and
how one entry looks, for stdio and for the HTTP gateway), :mod:`.configfile`
reads and rewrites one client's file keeping everything else in it, and
:mod:`.jsonc` edits JSON-with-comments text in place.
"""
