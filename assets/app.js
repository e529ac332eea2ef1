() => {
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
  new MutationObserver(hook).observe(document.body, { childList: true, subtree: true });
}
