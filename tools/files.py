"""Where the files door used to be: it is tools/io/files.py now, with the other doors."""

from tools.io.files import (  # noqa: F401
    CONFIG_LIMIT,
    LINE_LIMIT,
    BoundedLines,
    MiB,
    open_regular,
    read_bytes_bounded,
    read_text_bounded,
    real_path,
)
