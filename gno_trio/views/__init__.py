"""Text views: the words a person or a model reads for an engine answer.

The MCP tools return these as their text content and the commands print
them, so both surfaces say the same thing from one place. A view takes an
engine result (a plain object, or a result type from :mod:`gno_trio.engine`)
and returns text; it reads nothing and decides nothing. Views stand above
the engine and below the tools and the CLI, which import them by module
(``gno_trio.views.management``, ``.ask``, ``.capsules``).
"""
