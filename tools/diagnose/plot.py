"""`rlpilot plot`: a run's main curves drawn to an image, for a report, a chat or a Slack thread.

The series are read with the readers `diagnose` uses, and judged by it, so the pictures show
what the findings speak of: the primary finding's steps are shaded and the rollback step is
drawn on every panel. Pillow (a dependency of verifiers as well) draws them; it is imported
only here. The file's suffix names its format; a folder that does not exist is made only inside
the workspace, so a mistyped path elsewhere writes nothing.
"""

from __future__ import annotations

import io
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, BinaryIO

from pydantic import BaseModel, Field

from tools.framework.contract import Arg, Context, ToolResult
from tools.framework.errors import BadInput
from tools.io import files

# The curves worth a glance, in the order the playbook looks at them.
MAIN_CURVES = ("reward_mean", "reward_std", "entropy", "response_length", "truncated_frac", "mismatch_kl",
               "grad_norm")

_PANEL = (460, 200)
_MARGIN = 36
_BACKGROUND, INK, _GRID, _LINE = (255, 255, 255), (30, 30, 30), (225, 225, 225), (31, 119, 180)
TROUBLE, ROLLBACK = (253, 219, 199), (44, 160, 44)  # the primary finding's steps; where to resume
# A grad norm spans orders of magnitude: on a linear axis one spike flattens the rest of the curve.
LOG_SCALE = frozenset({"grad_norm"})
_TICKS = 5


@dataclass(frozen=True)
class Marks:
    """What the diagnosis says about where: the primary finding's steps and its rollback step."""

    code: str
    span: tuple[int, int] | None
    rollback: int | None


class PlotInput(BaseModel):
    source: Annotated[Path, Arg(positional=True), Field(
        description="A run's metrics, in any form `diagnose` reads.")]
    output: Annotated[Path, Arg(short="-o"), Field(
        description="The image file to write: .png, .jpg, .jpeg, .webp, .tif or .tiff.")] = Path("curves.png")
    series: Annotated[list[str] | None, Field(
        description="Canonical series to draw (default: the main curves the run has).")] = None


class PlotResult(ToolResult):
    output: str
    series: list[str]
    steps: list[int] = Field(description="[first, last] step drawn")
    log_scale: list[str] = Field(default_factory=list, description="series drawn on a log axis")
    marked: str | None = Field(None, description="the primary finding whose steps are shaded, if any")
    marked_steps: list[int] | None = Field(None, description="[from, to] the shading covers")
    rollback_step: int | None = Field(None, description="the step drawn as the place to resume from")

    def render(self) -> str:
        text = f"wrote {self.output}: {', '.join(self.series)} over steps {self.steps[0]}..{self.steps[1]}"
        if self.marked:
            text += f"; shaded: {self.marked}"
            text += f", rollback at step {self.rollback_step}" if self.rollback_step is not None else ""
        return text


def plot_metrics(args: PlotInput, ctx: Context) -> PlotResult:
    from tools.diagnose.readers import read
    from tools.diagnose.tool import judge

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
    _may_replace(output)  # someone's file is named as that first, whatever its suffix
    image_format = _format_of(output, ctx.workspace)
    primary, findings = judge(run, None)
    marks = None
    if primary is not None:
        steps = findings[0].steps
        start = primary.at_step if primary.at_step is not None else (steps[0] if steps else None)
        span = (start, steps[1] if steps else start) if start is not None else None
        marks = Marks(primary.code, span, primary.rollback_step)
    picture = io.BytesIO()
    draw_panels({name: (list(run.series[name].steps), list(run.series[name].values)) for name in drawable}, picture,
                marks, image_format)
    if not output.parent.is_dir():
        files.make_dirs(output.parent, root=ctx.workspace)  # the check above let only the workspace's through
    _write(output, picture.getvalue(), ctx)
    steps = [int(min(run.series[n].steps[0] for n in drawable)), int(max(run.series[n].steps[-1] for n in drawable))]
    result = PlotResult(output=str(output), series=drawable, steps=steps,
                        log_scale=[name for name in drawable if _log_axis(name, run.series[name].values)])
    if marks:
        result.marked, result.rollback_step = marks.code, marks.rollback
        result.marked_steps = list(marks.span) if marks.span else None
    return result


# Written into every image drawn here: only a file that carries it is replaced without a question.
MADE_BY = ("Software", "rlpilot plot")
_SOFTWARE_TAG = 0x0131  # EXIF's Software, which Pillow writes into and reads from each format below
# The formats whose files carry MADE_BY: PNG as a text chunk, the others in their EXIF.
FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".webp": "WEBP", ".tif": "TIFF", ".tiff": "TIFF"}


def _format_of(output: Path, workspace: Path) -> str:
    """The format the suffix names, in a folder that is there or inside the workspace (made once the plot is
    drawn); checked before anything is drawn."""
    image_format = FORMATS.get(output.suffix.lower())
    if image_format is None:
        raise BadInput("unknown-image-suffix", f"{output}: plot writes {', '.join(FORMATS)} files, and "
                       f"`{output.suffix or '(no suffix)'}` is none of them; nothing was drawn",
                       "name the file with one of those suffixes")
    if not output.parent.is_dir() and not output.is_relative_to(workspace.resolve()):
        raise BadInput("no-such-folder", f"{output.parent} does not exist and is outside the workspace "
                       f"{workspace}; nothing was drawn",
                       "create the folder first, or name a file in a folder that exists")
    return image_format


def _may_replace(output: Path) -> None:
    """A new file, or a plot this tool drew, may be replaced; anything else is someone's file."""
    if not output.exists() and not output.is_symlink():
        return
    if not output.is_file():
        raise BadInput("not-a-plot", f"{output} exists and is not a regular file; nothing was drawn",
                       "name a new image file with -o")
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(output) as image:
            marks = (image.info.get(MADE_BY[0]), image.getexif().get(_SOFTWARE_TAG))
            ours = image.format == FORMATS.get(output.suffix.lower()) and MADE_BY[1] in marks
    except (UnidentifiedImageError, OSError):
        ours = False
    if not ours:
        raise BadInput("not-a-plot", f"{output} exists and is not a plot rlpilot drew; it was left as it is",
                       "name a new image file with -o, or move that file away yourself")


def _write(output: Path, data: bytes, ctx: Context) -> None:
    """Replace whole or not at all, the plot it replaces kept under rlpilot's home."""
    from tools.configs.edit import atomic_write, refuse_read_only
    from tools.framework.workspace import rlpilot_home

    refuse_read_only(output)
    if output.exists():
        backups = rlpilot_home(ctx.workspace) / "plot-backups"
        files.make_dirs(backups, private=True)
        kept = files.read_bytes_bounded(output, files.PICTURE_LIMIT, hint="that is no plot rlpilot drew; move it "
                                        "away yourself, or name a new image file with -o")
        atomic_write(backups / f"{output.stem}-{time.time_ns()}{output.suffix}", kept, private=True)
    atomic_write(output, data)


def step_ticks(first: int, last: int, count: int = _TICKS) -> list[int]:
    """Round steps (1, 2 or 5 times a power of ten apart) across [first, last], about `count` of them."""
    if last <= first:
        return [first]
    rough = (last - first) / count
    power = 10 ** math.floor(math.log10(rough))
    gap = max(1, int(next(m * power for m in (1, 2, 5, 10) if m * power >= rough)))
    return list(range(-(-first // gap) * gap, last + 1, gap))


def _log_axis(name: str, values: list[float]) -> bool:
    return name in LOG_SCALE and min(values) > 0


def draw_panels(curves: dict[str, tuple[list[float], list[float]]], output: Path | BinaryIO,
                marks: Marks | None = None, image_format: str = "PNG") -> None:
    """One panel per curve, two to a row, each scaled to its own range, all marked alike."""
    from PIL import Image, ImageDraw, PngImagePlugin

    columns = 2 if len(curves) > 1 else 1
    rows = -(-len(curves) // columns)
    width, height = _PANEL
    image = Image.new("RGB", (width * columns, height * rows), _BACKGROUND)
    pen = ImageDraw.Draw(image)
    for index, (name, (steps, values)) in enumerate(curves.items()):
        left, top = (index % columns) * width, (index // columns) * height
        box = (left + _MARGIN, top + 24, left + width - 12, top + height - 22)
        _panel(pen, box, name, steps, values, marks)
    if image_format == "PNG":
        made_by = PngImagePlugin.PngInfo()
        made_by.add_text(*MADE_BY)
        image.save(output, format="PNG", pnginfo=made_by)
        return
    exif = Image.Exif()
    exif[_SOFTWARE_TAG] = MADE_BY[1]
    image.save(output, format=image_format, exif=exif)


def _panel(pen, box: tuple[int, int, int, int], name: str, steps: list[float], values: list[float],
           marks: Marks | None) -> None:
    x0, y0, x1, y1 = box
    log = _log_axis(name, values)
    shown = [math.log10(v) for v in values] if log else values
    low, high = min(shown), max(shown)
    span = (high - low) or 1.0
    first, last = int(steps[0]), int(steps[-1])
    length = (last - first) or 1.0

    def x_of(step: float) -> float:
        return x0 + (step - first) / length * (x1 - x0)

    if marks and marks.span:
        start, end = max(first, marks.span[0]), min(last, marks.span[1])
        if start <= end:
            pen.rectangle((x_of(start), y0, max(x_of(end), x_of(start) + 1), y1), fill=TROUBLE)
    pen.rectangle(box, outline=_GRID)
    for fraction in (0.25, 0.5, 0.75):
        y = y1 - fraction * (y1 - y0)
        pen.line([(x0, y), (x1, y)], fill=_GRID)
    for tick in step_ticks(first, last):
        pen.line([(x_of(tick), y1), (x_of(tick), y1 + 4)], fill=INK)
        pen.text((x_of(tick) - 3 * len(str(tick)), y1 + 6), str(tick), fill=INK)
    if marks and marks.rollback is not None and first <= marks.rollback <= last:
        pen.line([(x_of(marks.rollback), y0), (x_of(marks.rollback), y1)], fill=ROLLBACK, width=2)
    points = [(x_of(s), y1 - (v - low) / span * (y1 - y0)) for s, v in zip(steps, shown, strict=True)]
    pen.line(points, fill=_LINE, width=2)
    title = f"{name} (log scale)" if log else name
    if marks:
        title += f"   shaded: {marks.code}" + (f", resume at {marks.rollback}" if marks.rollback is not None else "")
    pen.text((x0, y0 - 18), title, fill=INK)
    top, bottom = (10 ** high, 10 ** low) if log else (high, low)
    pen.text((x0 - _MARGIN + 2, y0), f"{top:.3g}", fill=INK)
    pen.text((x0 - _MARGIN + 2, y1 - 10), f"{bottom:.3g}", fill=INK)
