() => {
  // Colour bars keep their colours when the address changes. Plotly fills a colour bar
  // with url("<page address>#gradient") and remembers the address of its first draw
  // (gd._context._baseUrl): once the address holds a view (?tab=...), a redraw after a
  // window resize would point at the old address, another document, and draw the bar
  // empty. So point every plot, and every fill already drawn, at the current address.
  const fixGradients = () => {
    const here = window.location.href.split('#')[0];
    document.querySelectorAll('.js-plotly-plot').forEach((gd) => {
      if (gd._context && gd._context._baseUrl) { gd._context._baseUrl = here; }
    });
    document.querySelectorAll('.js-plotly-plot [style*="url("]').forEach((el) => {
      const fill = el.style.fill;
      if (fill && fill.includes('#') && !fill.includes(here + '#')) {
        el.style.fill = fill.replace(/url\(["']?[^#"')]*#/, 'url("' + here + '#');
      }
    });
  };
  window.explorerFixGradients = fixGradients;
  let pending = null;
  const later = () => { if (!pending) { pending = requestAnimationFrame(() => { pending = null; fixGradients(); }); } };
  window.addEventListener('resize', () => { later(); setTimeout(fixGradients, 400); });

  // A figure redrawn while its tab was hidden (presentation mode toggled elsewhere) was
  // laid out with zero-sized text: titles ran into subtitles. Lay the shown tab's figures
  // out again when a tab is opened.
  const relayoutShown = () => window.dispatchEvent(new Event('resize'));
  document.addEventListener('click', (event) => {
    if (event.target.closest && event.target.closest('.tab-wrapper')) {
      setTimeout(relayoutShown, 60);
      setTimeout(relayoutShown, 500);
    }
  }, true);

  // Clicking a cell of the quality tab's head overview opens that head in the maps tab:
  // the click fills the layer/head boxes under the table and presses "Open in the maps tab".
  const setNumber = (id, value) => {
    const input = document.querySelector(`#${id} input`);
    if (!input) { return false; }
    input.value = String(value);
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(new Event('change', { bubbles: true }));
    return true;
  };
  const hook = () => {
    const gd = document.querySelector('#quality-overview .js-plotly-plot');
    if (!gd || !gd.on || gd.__explorerHooked === gd.data) { return; }
    gd.__explorerHooked = gd.data;
    gd.removeAllListeners && gd.removeAllListeners('plotly_click');
    gd.on('plotly_click', (event) => {
      const point = event && event.points && event.points[0];
      if (!point) { return; }
      if (setNumber('quality-open-layer', point.y) && setNumber('quality-open-head', point.x)) {
        setTimeout(() => document.querySelector('#quality-open')?.click(), 150);
      }
    });
  };
  new MutationObserver(() => { hook(); later(); }).observe(document.body, { childList: true, subtree: true });
}
