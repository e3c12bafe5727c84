"""gno-trio: a local-first knowledge engine served over the Model Context Protocol."""

__version__ = "0.1.0"
SERVER_NAME = "gno"
