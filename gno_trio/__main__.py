"""Allow ``python -m gno_trio``."""

from gno_trio.cli import main

raise SystemExit(main())
