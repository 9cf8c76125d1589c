"""What every part of the worker shares: the schema version, the exit
statuses, the clock and the usage error."""

import time


SCHEMA = 1
EXIT_USAGE = 2
EXIT_RUNTIME = 3


perf_counter_ns = time.perf_counter_ns


class UsageError(Exception):
    """A bad flag, model, device or policy: reported before any step runs."""
