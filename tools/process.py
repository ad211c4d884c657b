"""Where the process door used to be: it is tools/io/process.py now, with the other doors."""

from tools.io.process import (  # noqa: F401
    BASE_VARIABLES,
    LineCallback,
    ProcessResult,
    minimal_environment,
    person_environment,
    run,
    which,
)
