"""Command lines that start a Python child isolated from the directory it is started in.

``python -m x`` and ``python -c ...`` put the working directory first on the
child's ``sys.path``. gno-trio is often started from a folder somebody else
filled (a notes folder, a cloned repository: editors spawn ``gno-trio mcp``
there), so a ``zipfile.py`` or ``json.py`` lying in it would be imported by
the conversion worker, the ``serve --workers N`` children or the detached
resident instead of the standard library's.

Every child therefore runs isolated (``-I``: no working directory or script
folder on ``sys.path``, no ``PYTHON*`` variables, no user site-packages) and
finds gno-trio through the interpreter's own site-packages (a regular or an
editable install) or, failing that, through the folder this package was
loaded from, appended after the standard library so it can shadow nothing.

Processes ``multiprocessing`` spawns (a large sync's file workers) are
isolated by :mod:`.spawn`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

ISOLATED_FLAG: Final = "-I"


def package_root() -> str:
    """The folder holding the ``gno_trio`` package this process runs."""
    return str(Path(__file__).resolve().parent.parent)


def _bootstrap(body: str) -> str:
    root = package_root()
    return f"import sys\nif {root!r} not in sys.path:\n    sys.path.append({root!r})\n{body}"


def isolated_module(module: str, *args: str) -> list[str]:
    """The command running ``module`` as ``__main__`` (like ``python -m``), isolated."""
    body = f"import runpy\nrunpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n"
    return [sys.executable, ISOLATED_FLAG, "-c", _bootstrap(body), *args]


def isolated_call(entry: str, *args: str) -> list[str]:
    """The command calling ``entry`` (``"package.module:function"``), exiting with its result."""
    module, _, function = entry.partition(":")
    body = f"from {module} import {function}\nraise SystemExit({function}())\n"
    return [sys.executable, ISOLATED_FLAG, "-c", _bootstrap(body), *args]


__all__ = ["ISOLATED_FLAG", "isolated_call", "isolated_module", "package_root"]
