"""``python -m memory``: the ``memory`` command line."""

import sys

from memory.cli import main

sys.exit(main())
