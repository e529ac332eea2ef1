() => {
  // Presentation mode on a tool tab: its main figure fits the window below the bar, the
  // tab row and the folded data panel. Figures drawn with a fixed height taller than what
  // is left are laid out again at the height that is left (layout only, as a resize would),
  // when that keeps at least half their height: a figure squeezed further would be unreadable
  // (and plotly refuses plot areas squeezed below their margins).
  const FIRST = { maps: 'maps-plot', quality: 'quality-plot', state: 'state-step', complexity: 'cx-plot',
    learn: 'learn-loss' };
  const fit = () => {
    if (!document.body.classList.contains('presentation') || !window.Plotly) { return; }
    Object.entries(FIRST).forEach(([tab, id]) => {
      const holder = document.getElementById('tab-' + tab);
      const gd = document.querySelector('#' + id + ' .js-plotly-plot');
      if (!holder || !gd || gd.offsetParent === null || !gd._fullLayout) { return; }
      const top = gd.getBoundingClientRect().top + window.scrollY;
      const room = Math.floor(window.innerHeight - top - 10);
      const height = gd._fullLayout.height;
      if (room >= 220 && height > room + 1 && room >= 0.5 * height) {
        window.Plotly.relayout(gd, { height: room });
      }
    });
  };
  let queued = null;
  const later = () => { if (!queued) { queued = requestAnimationFrame(() => { queued = null; fit(); }); } };
  window.addEventListener('resize', () => setTimeout(later, 100));
  new MutationObserver(later).observe(document.body, { childList: true, subtree: true, attributes: true,
    attributeFilter: ['class', 'style'] });
}
