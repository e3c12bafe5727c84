"""The web workspace ``serve`` offers at ``/``: server-rendered pages over the same tools.

:func:`.routes.serve` is the gateway's pages surface. Pages are HTML rendered
on the server (Jinja2, autoescaped) with one small script of our own, served
from this package with the style sheet; nothing is fetched from elsewhere.
"""
