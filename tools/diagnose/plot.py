"""`rlpilot plot`: a run's main curves drawn to a PNG, for a report, a chat or a Slack thread.

The series are read with the readers `diagnose` uses, so the pictures show what the findings
speak of. Pillow (a dependency of verifiers as well) draws them; it is imported only here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from tools.contract import Arg, BadInput, Context, ToolResult

# The curves worth a glance, in the order the playbook looks at them.
MAIN_CURVES = ("reward_mean", "reward_std", "entropy", "response_length", "truncated_frac", "mismatch_kl",
               "grad_norm")

_PANEL = (460, 200)
_MARGIN = 36
_BACKGROUND, _INK, _GRID, _LINE = (255, 255, 255), (30, 30, 30), (225, 225, 225), (31, 119, 180)


class PlotInput(BaseModel):
    source: Annotated[Path, Arg(positional=True), Field(
        description="A run's metrics, in any form `diagnose` reads.")]
    output: Annotated[Path, Arg(short="-o"), Field(description="The PNG file to write.")] = Path("curves.png")
    series: Annotated[list[str] | None, Field(
        description="Canonical series to draw (default: the main curves the run has).")] = None


class PlotResult(ToolResult):
    output: str
    series: list[str]
    steps: list[int] = Field(description="[first, last] step drawn")

    def render(self) -> str:
        return f"wrote {self.output}: {', '.join(self.series)} over steps {self.steps[0]}..{self.steps[1]}"


def plot_metrics(args: PlotInput, ctx: Context) -> PlotResult:
    from tools.diagnose.readers import read

    source = ctx.resolve(args.source)
    _, run = read(source)
    wanted = args.series or [name for name in MAIN_CURVES if name in run.series]
    unknown = [name for name in wanted if name not in run.series]
    if unknown:
        raise BadInput("unknown-series", f"{source} has no series {', '.join(unknown)}",
                       f"choose from: {', '.join(sorted(run.series))}")
    drawable = [name for name in wanted if len(run.series[name]) >= 2]
    if not drawable:
        raise BadInput("nothing-to-plot", f"{source} has fewer than two steps of {', '.join(wanted) or 'any curve'}",
                       "plot a run that has reported at least two steps")
    output = ctx.resolve(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    draw_panels({name: (list(run.series[name].steps), list(run.series[name].values)) for name in drawable}, output)
    steps = [int(min(run.series[n].steps[0] for n in drawable)), int(max(run.series[n].steps[-1] for n in drawable))]
    return PlotResult(output=str(output), series=drawable, steps=steps)


def draw_panels(curves: dict[str, tuple[list[float], list[float]]], output: Path) -> None:
    """One panel per curve, two to a row, each scaled to its own range."""
    from PIL import Image, ImageDraw

    columns = 2 if len(curves) > 1 else 1
    rows = -(-len(curves) // columns)
    width, height = _PANEL
    image = Image.new("RGB", (width * columns, height * rows), _BACKGROUND)
    pen = ImageDraw.Draw(image)
    for index, (name, (steps, values)) in enumerate(curves.items()):
        left, top = (index % columns) * width, (index // columns) * height
        box = (left + _MARGIN, top + 24, left + width - 12, top + height - 22)
        _panel(pen, box, name, steps, values)
    image.save(output, format="PNG")


def _panel(pen, box: tuple[int, int, int, int], name: str, steps: list[float], values: list[float]) -> None:
    x0, y0, x1, y1 = box
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    first, last = steps[0], steps[-1]
    length = (last - first) or 1.0
    pen.rectangle(box, outline=_GRID)
    for fraction in (0.25, 0.5, 0.75):
        y = y1 - fraction * (y1 - y0)
        pen.line([(x0, y), (x1, y)], fill=_GRID)
    points = [(x0 + (s - first) / length * (x1 - x0), y1 - (v - low) / span * (y1 - y0))
              for s, v in zip(steps, values, strict=True)]
    pen.line(points, fill=_LINE, width=2)
    pen.text((x0, y0 - 18), name, fill=_INK)
    pen.text((x0 - _MARGIN + 2, y0), f"{high:.3g}", fill=_INK)
    pen.text((x0 - _MARGIN + 2, y1 - 10), f"{low:.3g}", fill=_INK)
    pen.text((x0, y1 + 6), f"step {int(first)}", fill=_INK)
    pen.text((x1 - 60, y1 + 6), f"step {int(last)}", fill=_INK)
