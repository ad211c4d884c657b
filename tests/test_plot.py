"""`rlpilot plot`: a run's curves as a real PNG file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from diagnose_support import make_run, write_csv, write_jsonl
from PIL import Image

from tools.contract import BadInput, Context
from tools.diagnose.plot import PlotInput, plot_metrics

RLPILOT = Path(sys.executable).parent / "rlpilot"
LINE = (31, 119, 180)


def test_the_cli_draws_one_panel_per_curve(tmp_path):
    source = write_jsonl(tmp_path / "metrics.jsonl", make_run(steps=80))
    done = subprocess.run([RLPILOT, "plot", str(source), "-o", "curves.png", "--json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["series"][:2] == ["reward_mean", "entropy"]
    assert result["steps"] == [0, 79]
    image = Image.open(tmp_path / "curves.png")
    panels = len(result["series"])
    assert image.format == "PNG" and image.size == (2 * 460, -(-panels // 2) * 200)
    assert LINE in {color for _, color in image.getcolors(maxcolors=1 << 16)}


def test_chosen_series_from_a_csv_export(tmp_path):
    source = write_csv(tmp_path / "export.csv", make_run(steps=30))
    result = plot_metrics(PlotInput(source=source, output=Path("r.png"), series=["reward_mean"]),
                          Context(workspace=tmp_path))
    assert result.series == ["reward_mean"] and Image.open(tmp_path / "r.png").size == (460, 200)


def test_an_unknown_series_names_the_ones_there(tmp_path):
    source = write_jsonl(tmp_path / "metrics.jsonl", make_run(steps=10))
    with pytest.raises(BadInput) as raised:
        plot_metrics(PlotInput(source=source, series=["rewards"]), Context(workspace=tmp_path))
    assert "reward_mean" in raised.value.hint
    assert not (tmp_path / "curves.png").exists()
