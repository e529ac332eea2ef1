() => {
  // The lecture as a slide deck, in the browser. A chapter is a sequence of builds, one
  // figure each; all of a chapter's figures arrive with one draw, so moving between builds
  // only changes which figure shows (data-step on #lecture, see explorer/ui/lecture_tab.css).
  // Past a chapter's last build the deck asks the server for the next chapter through a
  // hidden button (#deck-goto) that reads window.explorerDeck.target.
  //
  // Keys: → / PageDown / Space next, ← / PageUp back, Home / End the ends; D the drawer,
  // N the notes beside the slide, S a speaker window (?notes=1) kept in step over a
  // BroadcastChannel. PageUp / PageDown (what clickers send) always move the deck; the
  // other keys do unless a text box has focus (a slider the speaker touched must not keep →).
  const params = new URLSearchParams(window.location.search);
  const speaker = params.get('notes') === '1';
  const initialStep = Number.parseInt(params.get('step') || '', 10);
  const initialCh = Number.parseInt(params.get('ch') || '0', 10);
  // pending: the build to show once chapter pendingCh has drawn (a link's step=, or a jump's).
  const deck = window.explorerDeck = {
    ch: null, step: 0, builds: 0, target: null, pending: Number.isFinite(initialStep) ? initialStep : null,
    pendingCh: Number.isFinite(initialCh) ? initialCh : 0, jumping: 0, speaker,
  };
  if (speaker) { document.body.classList.add('speaker-view'); }

  const lectureShown = () => {
    const el = document.getElementById('lecture');
    return !!el && el.offsetParent !== null;
  };
  const info = () => {
    const el = document.querySelector('#deck-info [data-ch]');
    if (!el) { return null; }
    const n = (key) => Number.parseInt(el.dataset[key] || '', 10);
    return { ch: n('ch'), first: n('first'), last: n('last'), builds: n('builds') || 0 };
  };
  const lang = () => ((document.documentElement.lang || 'en').toLowerCase().startsWith('zh') ? 'zh' : 'en');

  // -- the figure takes the window's height below it ---------------------------------------
  const fitFigures = () => {
    const box = document.getElementById('lecture-figures');
    if (!box || !lectureShown()) { return; }
    const top = box.getBoundingClientRect().top + window.scrollY;
    const presenting = document.body.classList.contains('presentation');
    const room = window.innerHeight - top - (presenting ? 6 : 12);
    const height = Math.max(presenting ? 240 : 420, Math.floor(room));
    const before = document.documentElement.style.getPropertyValue('--deck-fig-h');
    document.documentElement.style.setProperty('--deck-fig-h', height + 'px');
    if (before !== height + 'px') { resizeShown(); }
  };
  const resizeShown = () => {
    if (!window.Plotly) { return; }
    document.querySelectorAll('#lecture-figures .js-plotly-plot').forEach((gd) => {
      if (gd.offsetParent !== null && gd._fullLayout) {
        // A figure that leaves the page while it resizes rejects the promise: nothing to do then.
        try { Promise.resolve(window.Plotly.Plots.resize(gd)).catch(() => {}); } catch (err) { /* not drawn yet */ }
      }
    });
  };
  deck.fit = fitFigures;

  // -- builds -------------------------------------------------------------------------------
  const dots = () => {
    const holder = document.querySelector('#deck-info .deck-dots');
    if (!holder) { return; }
    const n = Math.max(deck.builds, 0);
    holder.innerHTML = Array.from({ length: n }, (_, i) =>
      `<span class="deck-dot${i === deck.step ? ' on' : ''}" data-build="${i}"></span>`).join('');
  };
  const withStep = (q) => {
    if (!q) { return q; }
    const p = new URLSearchParams(q);
    p.set('step', String(deck.pending !== null && Number.isInteger(deck.pending) ? deck.pending : deck.step));
    return p.toString();
  };
  deck.withStep = withStep;
  const putAddress = () => {
    if (!lectureShown() || speaker) { return; }
    const q = deck.address || window.location.search.slice(1);
    if (!q || !/(^|&)tab=lecture(&|$)/.test(q)) { return; }
    const p = new URLSearchParams(withStep(q));
    p.set('present', document.body.classList.contains('presentation') ? '1' : '0');   // toggled since the draw?
    window.history.replaceState(null, '', '?' + p.toString());
  };
  const show = (step) => {
    deck.step = Math.min(Math.max(step, 0), Math.max(deck.builds - 1, 0));
    const lecture = document.getElementById('lecture');
    if (lecture) { lecture.dataset.step = String(deck.step); }
    dots();
    showNotes();
    fitFigures();
    putAddress();
    tell();
  };
  const jump = (ch, step) => {
    const i = info();
    if (!i || ch < i.first || ch > i.last) { return; }
    if (ch === i.ch) { show(step === 'last' ? deck.builds - 1 : step); return; }
    if (step === 0) { showHeld(ch); }
    deck.target = ch;
    deck.pending = step;
    deck.pendingCh = ch;
    deck.jumping = Date.now();
    const button = document.getElementById('deck-goto');
    if (button) { button.click(); }
  };
  deck.go = (delta) => {
    const i = info();
    if (!i || !i.builds || (deck.jumping && Date.now() - deck.jumping < 15000)) { return; }
    const next = deck.step + delta;
    if (next >= 0 && next < deck.builds) { show(next); } else if (delta > 0) { jump(i.ch + 1, 0); } else { jump(i.ch - 1, 'last'); }
  };
  deck.home = () => { const i = info(); if (i) { jump(i.first, 0); } };
  deck.end = () => { const i = info(); if (i) { jump(i.last, 'last'); } };
  deck.goto = (ch, step) => jump(ch, step);

  // After every draw of the lecture (the server's chain runs this with the chapter's
  // address): the build the jump asked for, else the first build of a new chapter, else
  // the same build; returns the address with the build in it.
  deck.drawn = (q) => {
    const i = info();
    if (!i) { return q; }
    dropHeld();                 // the real slide is here: the held one goes, a new one comes after
    if (q) { deck.address = q; }   // the chapter's address, without its build (withStep adds it)
    deck.builds = i.builds;
    let step = deck.step;
    if (deck.pending !== null && deck.pendingCh === i.ch) {
      step = deck.pending === 'last' ? i.builds - 1 : deck.pending;
      deck.pending = null;
      deck.jumping = 0;
    } else if (deck.ch !== i.ch) {
      step = 0;
    }
    const first = deck.ch === null;
    deck.ch = i.ch;
    show(step);
    if (first && speaker && channel) { channel.postMessage({ kind: 'hello' }); }   // where is the deck?
    return withStep(q);
  };

  // -- the next chapter, held ready -----------------------------------------------------------
  // After each draw the server hands over the next chapter's first build (its claim, title,
  // build count and figure: lecture_tab.upcoming_build), drawn here out of sight. → past the
  // last build shows it at once while the server switches chapters; the real slide replaces
  // it when it arrives (deck.drawn). Only in presentation mode without the notes beside the
  // slide, and only while the page reads the same data in the same language and mode.
  let held = null;            // {payload, el, plot} of the chapter drawn out of sight
  // What the data panel puts in an address (a long text travels packed, as tz and tcut).
  const SAME_DATA = ['src', 'text', 'tz', 'tcut', 'model', 'preset', 'n', 'd', 'dseed', 'temp'];
  const samePage = (p) => {
    const here = new URLSearchParams(window.location.search);
    const there = new URLSearchParams(p.query || '');
    return SAME_DATA.every((k) => (here.get(k) || '') === (there.get(k) || ''));
  };
  const dropHeld = () => {
    document.body.classList.remove('deck-previewing');
    if (!held) { return; }
    // Hidden, not removed, until plotly is done with it: a plot still being drawn into a box
    // that left the page fails its axis scaling.
    const { el, plot } = held;
    held = null;
    el.style.display = 'none';
    el.removeAttribute('id');
    setTimeout(() => {
      try { if (window.Plotly) { window.Plotly.purge(plot); } } catch (err) { /* already gone */ }
      el.remove();
    }, 1000);
  };
  deck.preload = (raw, tries = 0) => {
    if (speaker || !raw || document.body.classList.contains('deck-previewing')) { return; }
    if (!window.Plotly) {       // the page loads plotly with its first figure: the prefetch may come first
      if (tries < 40) { setTimeout(() => deck.preload(raw, tries + 1), 250); }
      return;
    }
    let p = null;
    try { p = JSON.parse(raw); } catch (err) { return; }
    const main = document.getElementById('lecture-main');
    const claim = document.getElementById('lecture-claim');
    if (!p || !p.figure || p.after !== deck.ch || !main || !claim || !lectureShown()) { return; }
    dropHeld();
    const el = document.createElement('div');
    el.id = 'deck-preview';
    el.dataset.ch = String(p.ch);
    const text = document.createElement('div');
    text.className = 'deck-preview-claim';
    String(p.claim || '').split(/\n\s*\n/).forEach((para) => {
      const line = document.createElement('p');
      line.textContent = para;
      text.appendChild(line);
    });
    const plot = document.createElement('div');
    plot.className = 'deck-preview-plot';
    el.append(text, plot);
    main.appendChild(el);
    // It covers the slide from the claim's top to the window's bottom, as the real one will.
    const top = claim.getBoundingClientRect().top;
    el.style.top = (top - main.getBoundingClientRect().top) + 'px';
    const height = Math.max(240, Math.floor(window.innerHeight - top - text.offsetHeight - 8));
    const width = Math.floor(plot.getBoundingClientRect().width);
    if (width < 100) { el.remove(); return; }          // nowhere to draw it (a hidden tab)
    plot.style.height = height + 'px';
    // A fixed size: plotly measures no hidden box (a box of no size fails its axis scaling).
    const layout = Object.assign({}, p.figure.layout || {}, { autosize: false, width, height });
    held = { payload: p, el, plot };
    try {
      Promise.resolve(window.Plotly.newPlot(plot, p.figure.data || [], layout, { displaylogo: false, responsive: false }))
        .catch(() => { if (held && held.plot === plot) { dropHeld(); } });
    } catch (err) { dropHeld(); }
  };
  const showHeld = (ch) => {
    const body = document.body.classList;
    if (!held || held.payload.ch !== ch || held.payload.lang !== lang() || !body.contains('presentation') ||
        held.payload.presentation !== true || body.contains('notes-inline') || !samePage(held.payload)) { return; }
    body.add('deck-previewing');
    // Should the server's slide never come (an error, said in a toast), the held one goes.
    const shown = held;
    setTimeout(() => { if (held === shown && document.body.classList.contains('deck-previewing')) { dropHeld(); } },
      15000);
    // The bar follows at once: the chapter's title, "n / 6" and its first build's dot.
    const input = document.querySelector('#lecture-chapter input');
    if (input) { input.value = held.payload.title; }
    const count = document.querySelector('#deck-info .deck-n');
    const i = info();
    if (count && i) { count.textContent = `${ch} / ${i.last}`; }
    const holder = document.querySelector('#deck-info .deck-dots');
    if (holder) {
      holder.innerHTML = Array.from({ length: held.payload.builds }, (_, k) =>
        `<span class="deck-dot${k === 0 ? ' on' : ''}"></span>`).join('');
    }
  };

  // -- keys ---------------------------------------------------------------------------------
  const textBox = (el) => !!el && (el.isContentEditable || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' ||
    (el.tagName === 'INPUT' && !['range', 'checkbox', 'radio', 'button', 'submit'].includes(el.type)));
  const ACTIONS = {
    PageDown: [() => deck.go(1), true], PageUp: [() => deck.go(-1), true],
    ArrowRight: [() => deck.go(1), false], ArrowDown: [() => deck.go(1), false], ' ': [() => deck.go(1), false],
    ArrowLeft: [() => deck.go(-1), false], ArrowUp: [() => deck.go(-1), false],
    Home: [() => deck.home(), false], End: [() => deck.end(), false],
    d: [() => toggleDrawer(), false], D: [() => toggleDrawer(), false],
    n: [() => toggleNotes(), false], N: [() => toggleNotes(), false],
    s: [() => openSpeaker(), false], S: [() => openSpeaker(), false],
  };
  document.addEventListener('keydown', (event) => {
    const action = ACTIONS[event.key];
    if (!action || event.altKey || event.ctrlKey || event.metaKey || !lectureShown()) { return; }
    const [run, always] = action;
    if (!always && (textBox(event.target) || textBox(document.activeElement))) { return; }
    event.preventDefault();
    event.stopPropagation();
    if (document.activeElement && document.activeElement.type === 'range') { document.activeElement.blur(); }
    run();
  }, true);

  // -- drawer and notes ---------------------------------------------------------------------
  const toggleDrawer = (open) => {
    const on = open === undefined ? !document.body.classList.contains('drawer-open') : !!open;
    document.body.classList.toggle('drawer-open', on);
    setTimeout(fitFigures, 0);
  };
  deck.toggleDrawer = toggleDrawer;
  const toggleNotes = () => {
    document.body.classList.toggle('notes-inline');
    showNotes();
    setTimeout(() => { fitFigures(); resizeShown(); }, 0);
  };
  deck.toggleNotes = toggleNotes;
  const openSpeaker = () => {
    const p = new URLSearchParams(window.location.search);
    p.set('notes', '1');
    p.set('present', '1');
    window.open(window.location.pathname + '?' + p.toString(), 'explorer-speaker');
  };
  deck.openSpeaker = openSpeaker;

  // The notes of the chapter on screen (in the speaker window: the chapter the deck shows).
  let shownNotes = null;      // {ch, step, builds} of the deck the notes are about
  const showNotes = () => {
    const about = speaker ? shownNotes : { ch: deck.ch, step: deck.step, builds: deck.builds };
    if (!about) { return; }
    const l = (speaker && about.lang) || lang();
    document.querySelectorAll('#deck-notes .deck-notes-chapter').forEach((el) => {
      el.hidden = !(Number(el.dataset.ch) === about.ch && el.dataset.lang === l);
    });
    document.querySelectorAll('#deck-notes [data-lang]:not(.deck-notes-chapter)').forEach((el) => {
      el.hidden = el.dataset.lang !== l;
    });
    const where = document.querySelector('#deck-notes .deck-where');
    if (where) { where.textContent = `${about.ch} · ${about.step + 1} / ${about.builds}`; }
  };

  // Presentation mode starts with the drawer closed; without it the drawer is a side column.
  const followMode = () => toggleDrawer(!document.body.classList.contains('presentation'));
  new MutationObserver((records) => {
    if (records.some((r) => r.oldValue !== null && r.oldValue.includes('presentation') !==
      document.body.classList.contains('presentation'))) { followMode(); }
  }).observe(document.body, { attributes: true, attributeFilter: ['class'], attributeOldValue: true });
  followMode();

  // -- the speaker window, kept in step -----------------------------------------------------
  const channel = 'BroadcastChannel' in window ? new BroadcastChannel('explorer-deck') : null;
  const tell = () => {
    if (speaker || !channel || deck.ch === null) { return; }
    const i = info();
    channel.postMessage({ kind: 'deck', ch: deck.ch, step: deck.step, builds: deck.builds, last: i ? i.last : deck.ch,
      lang: lang() });
  };
  if (channel) {
    channel.onmessage = (event) => {
      const m = event.data || {};
      if (!speaker && m.kind === 'hello') { tell(); return; }
      if (!speaker || m.kind !== 'deck') { return; }
      // The speaker window shows the build after the audience's, and the notes of the chapter on screen.
      shownNotes = m;
      showNotes();
      const nextInChapter = m.step + 1 < m.builds;
      if (!nextInChapter && m.ch >= m.last) { document.body.classList.add('deck-at-end'); return; }
      document.body.classList.remove('deck-at-end');
      const [ch, step] = nextInChapter ? [m.ch, m.step + 1] : [m.ch + 1, 0];
      if (deck.ch === ch && !deck.jumping) { show(step); } else if (info()) { jump(ch, step); }
    };
  }
  const clock = () => {
    const el = document.querySelector('#deck-notes .deck-clock');
    if (el) {
      const now = new Date();
      const since = Math.floor((Date.now() - started) / 1000);
      const two = (x) => String(x).padStart(2, '0');
      el.textContent = `${two(now.getHours())}:${two(now.getMinutes())} · ${two(Math.floor(since / 60))}:${two(since % 60)}`;
    }
  };
  let started = Date.now();
  document.addEventListener('click', (event) => {
    if (event.target.closest && event.target.closest('.deck-clock')) { started = Date.now(); clock(); }
    const dot = event.target.closest && event.target.closest('.deck-dot');
    if (dot) { show(Number(dot.dataset.build)); }
  });
  setInterval(clock, 1000);

  // -- layout follows the window and whatever changes above the figure ----------------------
  let queued = null;
  const later = () => { if (!queued) { queued = requestAnimationFrame(() => { queued = null; fitFigures(); }); } };
  window.addEventListener('resize', later);
  new MutationObserver(later).observe(document.body, { attributes: true, attributeFilter: ['class'] });
  const watch = () => {
    const targets = ['lecture-nav', 'lecture-claim', 'lecture-notices', 'header'].map((id) => document.getElementById(id));
    if (targets.some((el) => !el)) { setTimeout(watch, 200); return; }
    const observer = new ResizeObserver(later);
    targets.forEach((el) => observer.observe(el));
    later();
  };
  watch();
}
