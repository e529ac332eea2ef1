() => {
  // Figures keep their clipping and colour bars when the address changes. Plotly points a
  // plot's clip paths and colour-bar fills at url("<page address>#id") and remembers the
  // address of its first draw (gd._context._baseUrl). Once the address holds another view
  // (a tab's settings, the deck's next build), that is another document: bars on a log
  // axis ran past their axis (unclipped) and colour bars drew empty. So on every address
  // change, point every plot, and every reference already drawn, at the current address.
  const rebase = (value, here) => value.replace(/url\((["']?)[^#"')]*#/, 'url($1' + here + '#');
  const stale = (value, here) => value && value.includes('url(') && value.includes('#') && !value.includes(here + '#');
  const fixAddresses = () => {
    const here = window.location.href.split('#')[0];
    document.querySelectorAll('.js-plotly-plot').forEach((gd) => {
      if (gd._context && gd._context._baseUrl) { gd._context._baseUrl = here; }
    });
    document.querySelectorAll('.js-plotly-plot [clip-path]').forEach((el) => {
      const clip = el.getAttribute('clip-path');
      if (stale(clip, here)) { el.setAttribute('clip-path', rebase(clip, here)); }
    });
    document.querySelectorAll('.js-plotly-plot [style*="url("]').forEach((el) => {
      const fill = el.style.fill;
      if (stale(fill, here)) { el.style.fill = rebase(fill, here); }
    });
  };
  let pending = null;
  const later = () => { if (!pending) { pending = requestAnimationFrame(() => { pending = null; fixAddresses(); }); } };
  window.addEventListener('resize', () => { later(); setTimeout(fixAddresses, 400); });
  // Every address change (a tab's link, the deck's build) goes through replaceState.
  const replaceState = window.history.replaceState.bind(window.history);
  window.history.replaceState = (...args) => { const done = replaceState(...args); fixAddresses(); later(); return done; };

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
  // In presentation mode the header (presentation mode, the language) floats over the top row;
  // that row leaves free what the header takes of the window's right side (--header-room, from
  // the header's left edge to the window's right edge; read in projector.css and deck.css),
  // whatever the window and the font size make it.
  let measured = null;
  const headerWidth = () => {
    const header = document.getElementById('header');
    if (!header || header === measured) { return; }
    measured = header;
    // In the page's own pixels: a deck enlarged for a large window (assets/deck.js scales the
    // page) would otherwise leave the room at its screen size, 1.5 times too wide at 1920 px,
    // and squeeze the chapter's title to "1 · Attention i".
    const set = () => {
      const box = header.getBoundingClientRect();
      const scale = header.offsetWidth ? box.width / header.offsetWidth : 1;
      document.documentElement.style.setProperty(
        '--header-room', Math.ceil((window.innerWidth - box.left) / (scale || 1)) + 'px');
    };
    new ResizeObserver(set).observe(header);
    window.addEventListener('resize', set);
  };
  new MutationObserver(() => { hook(); later(); headerWidth(); }).observe(document.body, { childList: true, subtree: true });

  // A visitor whose connection to the queue drops (a busy proxy, a flaky network, a server
  // restarting) would otherwise see nothing: gradio only logs "Connection errored out" to the
  // console, and the result never comes. Say so, with a button that opens the view again
  // (the address holds it). A stream the page itself closes ends with an AbortError: not this.
  const words = __EXPLORER_WORDS__;
  const connectionLost = () => {
    if (document.getElementById('explorer-connection-lost')) { return; }
    const lang = (document.documentElement.lang || 'en').toLowerCase().startsWith('zh') ? 'zh' : 'en';
    const box = document.createElement('div');
    box.id = 'explorer-connection-lost';
    box.setAttribute('role', 'alert');
    const text = document.createElement('span');
    text.textContent = words[lang].lost;
    const retry = document.createElement('button');
    retry.textContent = words[lang].retry;
    retry.addEventListener('click', () => window.location.reload());
    box.append(text, ' ', retry);
    document.body.appendChild(box);
  };
  const fetchBefore = window.fetch;
  window.fetch = function (input) {
    const url = String((input && input.url) || input);
    const answer = fetchBefore.apply(this, arguments);
    if (!/\/queue\/(data|join)/.test(url)) { return answer; }
    return answer.catch((err) => {
      if (!err || err.name !== 'AbortError') { connectionLost(); }
      throw err;
    });
  };
}
