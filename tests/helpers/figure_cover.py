"""Whether a legend or an annotation of a plotly figure lies on its data, as drawn in the page.

Every plotted point is placed on screen from plotly's own axes (``_fullLayout``'s ``c2p`` of
the trace's calculated data, lines sampled every few pixels between their points, bars and
histogram bins as drawn) and compared with the boxes of the figure's legend and annotations
as drawn: a point or bar inside one of them is covered. ``COVERED_JS`` takes a selector of
the figure and returns one line per covering found (a trace stops at its first).
"""

# What covers data: the legend's and every annotation's box on screen; the data: each trace's
# points on screen (inside its axes' plot area), lines sampled between points, bars as drawn.
COVERED_JS = """(selector) => {
  const gd = document.querySelector(selector);
  if (!gd || !gd._fullLayout || !gd.calcdata) { return ['no figure at ' + selector]; }
  const fl = gd._fullLayout, svg = gd.querySelector('.main-svg').getBoundingClientRect();
  const scale = svg.width / fl.width;                 // the deck's enlargement of the page
  const covers = [];
  const add = (el, what) => { const r = el.getBoundingClientRect();
    if (r.width * r.height > 0) { covers.push({what, r}); } };
  gd.querySelectorAll('.infolayer .legend').forEach((el) => add(el, 'legend'));
  gd.querySelectorAll('.infolayer .annotation').forEach((el) => add(el, 'label "' + el.textContent.slice(0, 30) + '"'));
  const inside = (r, x, y) => x > r.left + 1 && x < r.right - 1 && y > r.top + 1 && y < r.bottom - 1;
  const out = [];
  const hit = (what, x, y) => { for (const c of covers) { if (inside(c.r, x, y)) {
    out.push(c.what + ' covers ' + what + ' at (' + Math.round(x) + ', ' + Math.round(y) + ')'); return true; } }
    return false; };
  const axis = (id, letter) => fl[letter + 'axis' + (id && id.length > 1 ? id.slice(1) : '')];
  gd.calcdata.forEach((cd, i) => {
    const trace = cd[0] && cd[0].trace;
    if (!trace || trace.visible !== true || !['scatter', 'scattergl'].includes(trace.type)) { return; }
    const xa = axis(trace.xaxis, 'x'), ya = axis(trace.yaxis, 'y');
    if (!xa || !ya) { return; }
    const px = (p) => [xa._offset + xa.c2p(p.x), ya._offset + ya.c2p(p.y)];
    const inPlot = ([x, y]) => Number.isFinite(x) && Number.isFinite(y) && x >= xa._offset && x <= xa._offset + xa._length &&
      y >= ya._offset && y <= ya._offset + ya._length;
    const name = 'trace ' + i + ' (' + String(trace.name || '').slice(0, 30) + ')';
    const points = cd.map(px);
    const lines = (trace.mode || '').includes('lines');
    for (let j = 0; j < points.length; j++) {
      const [x, y] = points[j];
      if (inPlot(points[j]) && hit(name, svg.left + x * scale, svg.top + y * scale)) { return; }
      if (lines && j + 1 < points.length) {
        const [x2, y2] = points[j + 1];
        const steps = Math.ceil(Math.hypot(x2 - x, y2 - y) / 3);
        for (let k = 1; k < steps && Number.isFinite(steps); k++) {
          const q = [x + (x2 - x) * k / steps, y + (y2 - y) * k / steps];
          if (inPlot(q) && hit(name, svg.left + q[0] * scale, svg.top + q[1] * scale)) { return; }
        }
      }
    }
  });
  gd.querySelectorAll('.barlayer .point path').forEach((el) => {
    const r = el.getBoundingClientRect();
    if (r.width * r.height <= 0) { return; }
    for (const c of covers) {
      if (r.left < c.r.right - 1 && c.r.left < r.right - 1 && r.top < c.r.bottom - 1 && c.r.top < r.bottom - 1) {
        out.push(c.what + ' covers a bar at (' + Math.round(r.left) + ', ' + Math.round(r.top) + ')'); break;
      }
    }
  });
  return out;
}"""
