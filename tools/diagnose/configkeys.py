"""A run's config as diagnosis reads it: the config engine's one view, opened from a path."""

from __future__ import annotations

from pathlib import Path

from tools.configs.detect import detect_file
from tools.configs.document import load
from tools.configs.view import ConfigView


def open_config(path: Path) -> ConfigView:
    config = load(path)
    detection = detect_file(config.data, config.path)
    return ConfigView(config.data, detection.dialect, kind=detection.kind, path=config.path)
