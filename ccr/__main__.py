import sys

from ccr.cli import main

sys.exit(main())
