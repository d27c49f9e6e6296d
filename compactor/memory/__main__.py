"""``python -m compactor.memory ARGS``: the same as ``compactor memory ARGS``."""

import sys

from compactor.memory.cli import main

sys.exit(main())
