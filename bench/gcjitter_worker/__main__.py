"""The worker's entry point: the zipapp's __main__.py (gcjitter builds the
archive with this file at its root too) and `python -m gcjitter_worker`."""

import sys

from gcjitter_worker.cli import main

sys.exit(main())
