"""The MCP tools: one module per family, each declaring its tools whole.

A family module (``retrieval``, ``reading``, ``graph`` ...) holds, for each
of its tools, the argument Struct, the descriptions per profile, the output
schema name, the egress content class, the annotations and the handler: a
thin adapter from MCP arguments to one :class:`~gno_trio.engine.Engine`
method and back. :mod:`.catalogue` assembles them in wire order;
:mod:`.fields` holds the field shapes several families share;
:mod:`.resources` serves documents as MCP resources.
"""

from __future__ import annotations

from gno_trio.tools.catalogue import CATALOGUE as CATALOGUE
from gno_trio.tools.catalogue import CORE_READ as CORE_READ
from gno_trio.tools.catalogue import CORE_WRITE as CORE_WRITE
from gno_trio.tools.catalogue import TOOL_ORDER as TOOL_ORDER
