"""``python -m compactor.memory``: the ``memory`` command line."""

import sys

from compactor.memory.cli import main

sys.exit(main())
