"""Reads back what an attnscope SVG plots, through its axes alone: the ticks' pixels and their
labels give each axis's map (linear, or log10 of the labels on a log axis), and every mark's
pixel is mapped back and compared with the number it should be.  Nothing here reads the
marks' data-x/data-y attributes, which the writer fills from the same numbers it places.

Pixels are printed with two decimals (±0.005).  An axis map taken through its outermost ticks
t0, t1 predicts a value's pixel with an error of at most 0.005·(|1 − s| + |s|), s its place
between them (s = 0 at t0, 1 at t1); the mark itself adds its own 0.005.
"""
import math
import re

TICK = re.compile(r'<line class="tick" x1="([-0-9.]+)" x2="[-0-9.]+" y1="([-0-9.]+)" '
                  r'y2="[-0-9.]+" stroke="#333"/><text x="[-0-9.]+" y="[-0-9.]+" '
                  r'text-anchor="(middle|end)">([^<]+)</text>')
ROUNDING = 0.005


class Axis:
    """value (in the axis's units: log10 of the value on a log axis) to pixel, from ticks.  An
    axis of one tick (the layers of a one-layer network) places that tick's value alone."""

    def __init__(self, ticks, log):
        assert ticks, "an axis without ticks cannot be read"
        units = [(p, math.log10(v) if log else v) for p, v in ticks]
        (self.p0, self.u0), (self.p1, self.u1) = units[0], units[-1]
        self.single = len(units) == 1
        assert self.single or self.u1 != self.u0
        for p, u in units[1:-1]:  # every tick where its label says
            assert abs(self.pixel(u) - p) <= self.tolerance(u), (p, u, self.pixel(u))

    def place(self, u):
        if self.single:
            assert u == self.u0, f"{u} on an axis whose one tick is {self.u0}"
            return 0.0
        return (u - self.u0) / (self.u1 - self.u0)

    def pixel(self, u):
        return self.p0 + self.place(u) * (self.p1 - self.p0)

    def value(self, pixel):
        assert not self.single, "one tick gives no scale to read a pixel by"
        return self.u0 + (pixel - self.p0) / (self.p1 - self.p0) * (self.u1 - self.u0)

    def tolerance(self, u):
        s = self.place(u)
        return ROUNDING * (abs(1 - s) + abs(s)) + ROUNDING + 1e-9


def axes(svg, x_log, y_log):
    """The x and y axes of a plot, read off its labelled ticks."""
    ticks = TICK.findall(svg)
    x = [(float(a), float(label)) for a, _, anchor, label in ticks if anchor == "middle"]
    y = [(float(b), float(label)) for _, b, anchor, label in ticks if anchor == "end"]
    return Axis(x, x_log), Axis(y, y_log)


def series_marks(svg):
    """The markers of a series plot by series (its data-series index), as pixel (x, y) of the
    point each marks: a marker's text sits 4 pixels below its point (its baseline)."""
    marks = {}
    pattern = r'<text class="point" data-series="(\d)" [^>]*?x="([-0-9.]+)" y="([-0-9.]+)"'
    for k, px, py in re.findall(pattern, svg):
        marks.setdefault(int(k), []).append((float(px), float(py) - 4))
    return marks


def check_series(svg, x_log, y_log, expected):
    """expected: {series: [(x, y)]} in the axes' units (None for a point not drawn).  Each
    series' markers, in order, where the axes put its points.  Returns the points checked."""
    x_axis, y_axis = axes(svg, x_log, y_log)
    marks = series_marks(svg)
    checked = 0
    for k, points in expected.items():
        drawn = [(x, y) for x, y in points if x is not None and y is not None]
        got = marks.get(k, [])
        assert len(got) == len(drawn), f"series {k}: {len(got)} marks, {len(drawn)} points"
        for (px, py), (x, y) in zip(got, drawn):
            assert abs(x_axis.pixel(x) - px) <= x_axis.tolerance(x), (k, x, px, x_axis.pixel(x))
            assert abs(y_axis.pixel(y) - py) <= y_axis.tolerance(y), (k, y, py, y_axis.pixel(y))
            checked += 1
    assert sorted(marks) == sorted(k for k, v in expected.items() if any(
        x is not None and y is not None for x, y in v)), (sorted(marks), sorted(expected))
    return checked


def log_units(values):
    """log10 of each positive value (None elsewhere): a log axis's units."""
    return [math.log10(v) if v is not None and v > 0 else None for v in values]


def check_histogram(svg, values, every_value=False, scale=1.0):
    """A histogram of values (descending, as the axis reads them once times scale): ticks
    under the axis, one per pixel column that holds values, at the column's middle, each with
    how many (data-count) and the least and greatest (data-min, data-max) of the values that
    fall in it, values beyond the view's right edge in its column; the first value marked apart
    at its value or, pinned, at 0.99 of the view; with every_value, ticks for each and none
    apart.  The ticks, taken left to right, account for every value but the first (every
    value: every_value) exactly, and each column's values lie in it; the bars' counts
    (data-count) sum to the same number, each bar as high as its count on the y axis.  Returns
    the count."""
    x_axis, y_axis = axes(svg, False, False)
    right = x_axis.value(580)  # the frame's right edge: SIDE + (640 − 2·SIDE)
    ticks = sorted((float(x), int(n), float(lo), float(hi)) for n, lo, hi, x in re.findall(
        r'<line class="point" data-count="(\d+)" data-min="([^"]+)" data-max="([^"]+)" '
        r'x1="([-0-9.]+)"', svg))
    ticked = sorted(values if every_value else values[1:])
    assert sum(n for _, n, _, _ in ticks) == len(ticked), (len(ticks), len(ticked))
    assert len(set(x for x, _, _, _ in ticks)) == len(ticks), "a column ticked twice"
    taken = 0
    for x, n, lo, hi in ticks:
        group = ticked[taken:taken + n]
        taken += n
        assert group[0] == lo and group[-1] == hi, (x, n, lo, hi, group[0], group[-1])
        for v in (lo, hi):  # the column's edges, x ± 0.5, widened by the axis's rounding
            u = min(scale * v, right)
            assert abs(x_axis.pixel(u) - x) <= 0.5 + x_axis.tolerance(u), (v, x)
    bars = [(int(n), float(y)) for n, y in re.findall(
        r'<rect class="bar" data-count="(\d+)" x="[-0-9.]+" y="([-0-9.]+)"', svg)]
    assert sum(n for n, _ in bars) == len(ticked), (sum(n for n, _ in bars), len(ticked))
    for n, y in bars:
        assert abs(y_axis.pixel(n) - y) <= y_axis.tolerance(n), (n, y)
    first = re.search(r'<text class="point (?:first|outlier)" x="([-0-9.]+)"', svg)
    if every_value:
        assert not first, "a value marked apart"
        return len(values)
    assert first, "s1 not marked"
    at = float(first.group(1))
    # Pinned, 0.99 of the right edge read back: twice the tolerance (that edge's own error).
    assert any(abs(x_axis.pixel(u) - at) <= 2 * x_axis.tolerance(u)
               for u in (scale * values[0], 0.99 * right)), (values[0], at)
    return len(values)
