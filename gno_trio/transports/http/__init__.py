"""The resident Streamable HTTP MCP gateway (``gno-trio serve`` / ``gno-trio daemon``).

Modules, in the order a request meets them: :mod:`.boundary` (peer, Host,
Origin, rate, bearer token, body size), :mod:`.asgi` (routing, admission,
shared guards from :mod:`.guards`, era split), then :mod:`.legacy` (2025-11-25
sessions, with :mod:`.sessions`) or :mod:`.modern` (sessionless 2026-07-28).
:mod:`.server` binds and runs it on hypercorn's trio worker.

Nothing is imported here, so the CLI can build its parser without loading
hypercorn.
"""
