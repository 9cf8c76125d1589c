"""The worker's entry point: the zipapp's __main__.py (gcjitter builds the
archive with this file at its root too) and `python -m gcjitter_worker`."""

from gcjitter_worker.cli import main
from gcjitter_worker.warm import end

end(main())
