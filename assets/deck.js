() => {
  // The lecture as a slide deck, in the browser. A chapter is a sequence of builds, one
  // figure each; all of a chapter's figures arrive with one draw, so moving between builds
  // only changes which figure shows (data-step on #lecture, see explorer/ui/lecture_tab.css).
  // Past a chapter's last build the deck asks the server for the next chapter through a
  // hidden button (#deck-goto) that reads window.explorerDeck.target.
  //
  // Keys: → / PageDown / Space next, ← / PageUp back, Home / End the ends, a chapter's
  // number then Enter that chapter; D the drawer, N the notes over the slide, S a speaker
  // window (?notes=1), B or . a blank screen, F full screen, O the overview of every build,
  // Esc closes what is open. PageUp / PageDown (what clickers send) always move the deck; the
  // other keys do unless a text box has focus (a slider the speaker touched must not keep →).
  //
  // The deck and its speaker window hold one position (chapter, build, language), whichever
  // window the keys are pressed in: each move is told over a BroadcastChannel with a stamp,
  // and a window follows any position stamped later than its own (so a window never follows
  // an echo of a move it has since left).
  const params = new URLSearchParams(window.location.search);
  const speaker = params.get('notes') === '1';
  const initialStep = Number.parseInt(params.get('step') || '', 10);
  const initialCh = Number.parseInt(params.get('ch') || '0', 10);
  // pending: the build to show once chapter pendingCh has drawn (a link's step=, or a jump's).
  const deck = window.explorerDeck = {
    ch: null, step: 0, builds: 0, target: null, pending: Number.isFinite(initialStep) ? initialStep : null,
    pendingCh: Number.isFinite(initialCh) ? initialCh : 0, jumping: 0, speaker,
    stamp: speaker ? -1 : 0, at: null,     // the shared position's stamp (a new speaker window takes the deck's)
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
  // The language the switch holds (the page's own restore sets it from the address).
  const lang = () => {
    const picked = document.querySelector('#language input[type=radio]:checked');
    if (picked && (picked.value === 'en' || picked.value === 'zh')) { return picked.value; }
    return (document.documentElement.lang || 'en').toLowerCase().startsWith('zh') ? 'zh' : 'en';
  };

  // -- a larger window enlarges the whole slide ----------------------------------------------
  // In presentation mode the page is laid out for 1280 × 720 and scaled by the window's size
  // over it, so 1920 × 1080 reads like 1280 × 720 enlarged: text, bar labels and lines grow
  // together and nothing reflows. A window narrower than 1280 (a 1024-px projector) shrinks
  // the slide instead, since its figures are fitted to a 1280-px slide. Sizes measured on
  // screen are divided by the zoom.
  const BASE_W = 1280, BASE_H = 720;
  const zoom = () => {
    if (!document.body.classList.contains('presentation') || !lectureShown()) { return 1; }
    if (window.innerWidth < BASE_W) { return window.innerWidth / BASE_W; }
    return Math.max(1, Math.min(window.innerWidth / BASE_W, window.innerHeight / BASE_H));
  };
  // A transform, not CSS zoom: plotly measures its text on a node outside the page's
  // container, which a transform leaves at its true size (under zoom it measures too wide).
  const applyZoom = () => {
    const z = zoom();
    const page = document.querySelector('.gradio-container');
    if (!page) { return 1; }
    const transform = z === 1 ? '' : `scale(${z.toFixed(4)})`;
    const width = z === 1 ? '' : Math.floor(window.innerWidth / z) + 'px';
    const height = z === 1 ? '' : Math.floor(window.innerHeight / z) + 'px';
    if (page.style.transform !== transform || page.style.width !== width || page.style.height !== height) {
      // Not grown by its flex parent and overflow hidden: gradio's boxes fill the window's height,
      // which scaled would scroll.
      Object.assign(page.style, { transform, width, height, maxWidth: z === 1 ? '' : 'none',
        minHeight: z === 1 ? '' : '0', overflow: z === 1 ? '' : 'hidden', flex: z === 1 ? '' : 'none',
        transformOrigin: '0 0' });
    }
    return z;
  };
  deck.zoom = zoom;
  // The slide's own scale (deck.css): 0.6 in the speaker window, 0.57 beside the drawer.
  const slideScale = () => {
    const body = document.body.classList;
    if (speaker) { return 0.6; }
    return body.contains('presentation') && body.contains('drawer-open') ? 0.57 : 1;
  };

  // -- the figure takes the window's height below it ---------------------------------------
  const fitFigures = () => {
    const z = applyZoom();
    const box = document.getElementById('lecture-figures');
    if (!box || !lectureShown()) { return; }
    // Beside the drawer, and in the speaker window, the slide is scaled down whole
    // (assets/deck.css): its box is sized as the unscaled slide's would be.
    const main = document.getElementById('lecture-main');
    const mainTop = main ? main.getBoundingClientRect().top : 0;
    const top = mainTop + (box.getBoundingClientRect().top - mainTop) / slideScale() + window.scrollY;
    const presenting = document.body.classList.contains('presentation');
    const room = (window.innerHeight - top) / z - (presenting ? 6 : 12);
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
  // Each build's own claim and speaker notes, as the last draw computed them (deck-info's
  // data-says): the claim replaces the slide's text, the notes the chapter's list.
  const says = () => {
    const el = document.querySelector('#deck-info [data-ch]');
    if (!el || !el.dataset.says || Number.parseInt(el.dataset.ch, 10) !== deck.ch) { return null; }
    try { return JSON.parse(el.dataset.says); } catch (err) { return null; }
  };
  const escapeText = (value) => String(value).replace(/[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
  const showSays = (refit = false) => {
    const said = says();
    if (!said) { return; }
    const claim = (said.claims || [])[deck.step];
    const box = document.getElementById('lecture-claim');
    const target = box && (box.querySelector('.prose') || box.querySelector('.md') || box);
    if (target && typeof claim === 'string') {
      const html = claim.split(/\n\s*\n/).map((para) => `<p>${escapeText(para)}</p>`).join('');
      if (target.innerHTML !== html) { target.innerHTML = html; }
    }
    // The build's formulas (MathML the server built from its own structures: no text of a
    // reader's in it), in a row under the claim; the figure's box takes what is left.
    const formulas = (said.formulas || [])[deck.step];
    const slot = document.getElementById('lecture-formula');
    if (slot && Array.isArray(formulas)) {
      const html = formulas.length ? `<div class="deck-formulas">${formulas.join('')}</div>` : '';
      if (slot.dataset.shown !== html) {
        slot.innerHTML = html;
        slot.dataset.shown = html;
        slot.classList.toggle('deck-has-formula', formulas.length > 0);
        if (refit) { fitFigures(); }
      }
    }
    const notes = (said.notes || [])[deck.step];
    const list = document.querySelector(`#deck-notes .deck-notes-chapter[data-ch="${deck.ch}"][data-lang="${lang()}"] ul`);
    if (list && Array.isArray(notes)) {
      list.innerHTML = notes.map((line) => `<li>${escapeText(line)}</li>`).join('');
    }
  };
  // gradio writes the chapter's text into the claim again when the chapter or the language
  // changes, after or before the draw's data: the build's own claim is put back each half second.
  setInterval(() => { if (deck.ch !== null && lectureShown()) { showSays(true); } }, 500);
  let titleShown = false;     // the title build's narrower figure is on screen
  const show = (step) => {
    // While a draw is under way the build count is unknown (data-builds empty): the build
    // stays, rather than falling to the first one.
    deck.step = deck.builds ? Math.min(Math.max(step, 0), deck.builds - 1) : Math.max(step, 0);
    const lecture = document.getElementById('lecture');
    if (lecture) {
      lecture.dataset.step = String(deck.step);
      lecture.dataset.ch = String(deck.ch);
      // The title build gives the audience's QR code a column of its own: its figure narrows.
      const qr = document.querySelector('#deck-qr svg') ? '1' : '';
      const title = qr && deck.ch === (info() || {}).first && deck.step === 0;
      lecture.dataset.qr = qr;
      if (title !== titleShown) { titleShown = title; setTimeout(resizeShown, 0); }
    }
    dots();
    showSays();
    showNotes();
    fitFigures();
    putAddress();
    showNext();
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
  // A move made here: stamped, told to the other windows, then made.
  const move = (ch, step) => {
    const i = info();
    if (!i || ch < i.first || ch > i.last) { return; }
    deck.stamp = Math.max(Date.now(), deck.stamp + 1);
    deck.at = { ch, step };
    wanted = null;
    tell();
    jump(ch, step);
  };
  deck.go = (delta) => {
    const i = info();
    if (!i || !i.builds || (deck.jumping && Date.now() - deck.jumping < 15000)) { return; }
    const next = deck.step + delta;
    if (next >= 0 && next < deck.builds) { move(i.ch, next); } else if (delta > 0) { move(i.ch + 1, 0); } else {
      move(i.ch - 1, 'last');
    }
  };
  deck.home = () => { const i = info(); if (i) { move(i.first, 0); } };
  deck.end = () => { const i = info(); if (i) { move(i.last, 'last'); } };
  deck.goto = (ch, step) => move(ch, step);

  // The build a link or a jump asked for, once chapter i's build count is known (else null).
  const pendingStep = (i) => {
    if (deck.pending === null || deck.pendingCh !== i.ch || !i.builds) { return null; }
    const step = deck.pending === 'last' ? i.builds - 1 : deck.pending;
    deck.pending = null;
    deck.jumping = 0;
    return step;
  };
  // A draw taken in while the build count is unknown (data-builds empty while the chapter's
  // words are said again, which may arrive after the draw's own step): the count is read
  // when it comes, and the build asked for is shown then.
  let counting = null;
  const countLater = () => {
    if (counting) { return; }
    const until = Date.now() + 30000;
    counting = setInterval(() => {
      const i = info();
      if (i && !i.builds && Date.now() < until) { return; }
      clearInterval(counting);
      counting = null;
      if (!i || !i.builds || i.ch !== deck.ch) { return; }
      deck.builds = i.builds;
      const step = pendingStep(i);
      show(step === null ? deck.step : step);
    }, 100);
  };

  // After every draw of the lecture (the server's chain runs this with the chapter's
  // address): the build the jump asked for, else the first build of a new chapter, else
  // the same build; returns the address with the build in it.
  deck.drawn = (q) => {
    const i = info();
    if (!i) { return q; }
    dropHeld();                 // the real slide is here: the held one goes, a new one comes after
    if (q) { deck.address = q; }   // the chapter's address, without its build (withStep adds it)
    deck.builds = i.builds;
    let step = pendingStep(i);
    if (step === null) { step = deck.ch !== i.ch ? 0 : deck.step; }
    const first = deck.ch === null;
    deck.ch = i.ch;
    show(step);
    if (!i.builds) { countLater(); }
    if (first && channel) { channel.postMessage({ kind: 'hello' }); }   // where are the other windows?
    if (wanted && wanted.lang === lang()) { const m = wanted; wanted = null; follow(m); }
    if (tried && tried.ch === i.ch) { const before = tried; tried = null; setTimeout(() => showTried(before), 400); }
    return withStep(q);
  };

  // -- Try this: its change on screen ----------------------------------------------------------
  // The chapter's preset may change another build than the one shown: after its redraw the
  // deck moves to the first build that changed, if the one on screen did not.
  let tried = null;           // {ch, marks}: each build's figure before Try this
  const mark = (step) => {
    const gd = document.querySelector(`#lecture-plot-${step} .js-plotly-plot`);
    if (!gd || !gd.data) { return ''; }
    try {
      return JSON.stringify(gd.data.map((t) => [t.x, t.y, t.z, t.text])) +
        JSON.stringify(((gd.layout || {}).title || {}).text || '');
    } catch (err) { return ''; }
  };
  deck.beforeTry = () => {
    tried = { ch: deck.ch, marks: Array.from({ length: deck.builds }, (_, k) => mark(k)) };
  };
  const showTried = (before) => {
    if (deck.ch !== before.ch) { return; }
    const now = Array.from({ length: deck.builds }, (_, k) => mark(k));
    if (now[deck.step] !== before.marks[deck.step]) { return; }
    const changed = now.findIndex((m, k) => m !== before.marks[k]);
    if (changed >= 0) { move(deck.ch, changed); }
  };

  // -- the next chapter, held ready -----------------------------------------------------------
  // After each draw the server hands over the next chapter's first build (its claim, title,
  // build count and figure: lecture_handlers.upcoming_build), drawn here out of sight. → past the
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
    if (speaker) { keepUpcoming(raw); return; }
    if (!raw || document.body.classList.contains('deck-previewing')) { return; }
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
    if (Array.isArray(p.formulas) && p.formulas.length) {      // as the slot under the claim will show them
      const row = document.createElement('div');
      row.className = 'deck-formulas deck-preview-formulas';
      row.innerHTML = p.formulas.join('');
      text.appendChild(row);
    }
    const plot = document.createElement('div');
    plot.className = 'deck-preview-plot';
    el.append(text, plot);
    main.appendChild(el);
    // It covers the slide from the claim's top to the window's bottom, as the real one will.
    const z = zoom();
    const top = claim.getBoundingClientRect().top;
    el.style.top = ((top - main.getBoundingClientRect().top) / z) + 'px';
    const height = Math.max(240, Math.floor((window.innerHeight - top) / z - text.offsetHeight - 8));
    const width = Math.floor(plot.getBoundingClientRect().width / z);
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
  // A chapter's number typed, then Enter: that chapter (the digits are forgotten after 3 s).
  let digits = '';
  let digitsAt = 0;
  const typeDigit = (d) => {
    digits = (Date.now() - digitsAt < 3000 ? digits : '') + d;
    digitsAt = Date.now();
  };
  const enter = () => {
    const typed = Date.now() - digitsAt < 3000 ? digits : '';
    digits = '';
    if (!typed) { return false; }
    const i = info();
    const ch = Number.parseInt(typed, 10);
    if (i && ch >= i.first && ch <= i.last) { closeOverview(); move(ch, 0); }
    return true;
  };
  const ACTIONS = {
    PageDown: [() => deck.go(1), true], PageUp: [() => deck.go(-1), true],
    ArrowRight: [() => deck.go(1), false], ArrowDown: [() => deck.go(1), false], ' ': [() => deck.go(1), false],
    ArrowLeft: [() => deck.go(-1), false], ArrowUp: [() => deck.go(-1), false],
    Home: [() => deck.home(), false], End: [() => deck.end(), false],
    d: [() => toggleDrawer(), false], n: [() => toggleNotes(), false], s: [() => openSpeaker(), false],
    b: [() => toggleBlank(), false], '.': [() => toggleBlank(), false], f: [() => toggleFullScreen(), false],
    o: [() => toggleOverview(), false], Escape: [() => closeAll(), false],
  };
  document.addEventListener('keydown', (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || !lectureShown()) { return; }
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    const inText = textBox(event.target) || textBox(document.activeElement);
    if (/^[0-9]$/.test(key) && !inText) { typeDigit(key); return; }
    if (key === 'Enter' && !inText) {
      if (enter()) { event.preventDefault(); event.stopPropagation(); }
      return;
    }
    const action = ACTIONS[key];
    if (!action) { return; }
    const [run, always] = action;
    if (!always && inText) { return; }
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
  // N: the notes lie over the slide's right side, on top of it (the slide keeps its size).
  const toggleNotes = (open) => {
    const on = open === undefined ? !document.body.classList.contains('notes-inline') : !!open;
    document.body.classList.toggle('notes-inline', on);
    showNotes();
  };
  deck.toggleNotes = toggleNotes;
  const openSpeaker = () => {
    const p = new URLSearchParams(window.location.search);
    p.set('notes', '1');
    p.set('present', '1');
    p.set('lang', lang());
    if (deck.ch !== null) { p.set('ch', String(deck.ch)); p.set('step', String(deck.step)); }
    window.open(window.location.pathname + '?' + p.toString(), 'explorer-speaker');
  };
  deck.openSpeaker = openSpeaker;

  // The notes of the build on screen, in the page's language.
  const showNotes = () => {
    if (deck.ch === null) { return; }
    const l = lang();
    document.querySelectorAll('#deck-notes .deck-notes-chapter').forEach((el) => {
      el.hidden = !(Number(el.dataset.ch) === deck.ch && el.dataset.lang === l);
    });
    document.querySelectorAll('#deck-notes [data-lang]:not(.deck-notes-chapter), .deck-say[data-lang], ' +
      '#deck-overview [data-lang]').forEach((el) => { el.hidden = el.dataset.lang !== l; });
    document.querySelectorAll('#deck-notes .deck-where').forEach((el) => {
      el.textContent = `${deck.ch}.${deck.step} · ${deck.step + 1} / ${deck.builds}`;
    });
  };

  // -- blank screen, full screen, the overview ----------------------------------------------
  // B or . blanks the audience's screen from either window (the speaker window says so and
  // keeps its own view).
  const setBlank = (on) => { document.body.classList.toggle('deck-blank', !!on); };
  const toggleBlank = () => {
    const on = !document.body.classList.contains('deck-blank');
    setBlank(on);
    if (channel) { channel.postMessage({ kind: 'blank', on }); }
  };
  deck.toggleBlank = toggleBlank;
  const toggleFullScreen = () => {
    try {
      if (document.fullscreenElement) { document.exitFullscreen(); } else {
        Promise.resolve(document.documentElement.requestFullscreen()).catch(() => {});
      }
    } catch (err) { /* the browser refuses: nothing to do */ }
  };
  // O: every chapter and its builds as tiles (the page's #deck-overview); a click jumps there.
  const overviewTiles = () => {
    document.querySelectorAll('#deck-overview .deck-ov-build').forEach((el) => {
      el.classList.toggle('on', Number(el.dataset.ch) === deck.ch && Number(el.dataset.step) === deck.step);
    });
    document.querySelectorAll('#deck-overview [data-lang]').forEach((el) => { el.hidden = el.dataset.lang !== lang(); });
  };
  const toggleOverview = (open) => {
    const on = open === undefined ? !document.body.classList.contains('overview-open') : !!open;
    document.body.classList.toggle('overview-open', on);
    if (on) { overviewTiles(); }
  };
  const closeOverview = () => toggleOverview(false);
  deck.toggleOverview = toggleOverview;
  // Esc: whatever is open closes, the last opened first.
  const closeAll = () => {
    const body = document.body.classList;
    if (body.contains('overview-open')) { closeOverview(); return; }
    if (body.contains('deck-blank')) { toggleBlank(); return; }
    if (body.contains('notes-inline')) { toggleNotes(false); return; }
    if (body.contains('drawer-open') && body.contains('presentation')) { toggleDrawer(false); }
  };

  // Presentation mode starts with the drawer closed; without it the drawer is a side column.
  const followMode = () => toggleDrawer(!document.body.classList.contains('presentation'));
  new MutationObserver((records) => {
    if (records.some((r) => r.oldValue !== null && r.oldValue.includes('presentation') !==
      document.body.classList.contains('presentation'))) { followMode(); }
  }).observe(document.body, { attributes: true, attributeFilter: ['class'], attributeOldValue: true });
  followMode();

  // -- one position for the deck and its speaker window -------------------------------------
  const channel = 'BroadcastChannel' in window ? new BroadcastChannel('explorer-deck') : null;
  const tell = () => {
    if (!channel || deck.ch === null) { return; }
    const at = deck.at || { ch: deck.ch, step: deck.step };
    channel.postMessage({ kind: 'pos', ch: at.ch, step: at.step, lang: lang(), stamp: deck.stamp });
  };
  let wanted = null;          // a position asked for in another language: taken once the page has switched
  const follow = (m) => {
    deck.at = { ch: m.ch, step: m.step };
    if (m.lang && m.lang !== lang()) {
      const radio = document.querySelector(`#language input[type=radio][value="${m.lang}"]`);
      if (radio) { wanted = m; radio.click(); return; }
    }
    wanted = null;              // a later position than the one a language switch waits for
    jump(m.ch, m.step);
  };
  // A language picked here moves the other windows too (not one picked to follow them).
  document.addEventListener('change', (event) => {
    const el = event.target;
    if (!el || !el.matches || !el.matches('#language input[type=radio]') || !el.checked) { return; }
    if (wanted && wanted.lang === el.value) { return; }
    deck.stamp = Math.max(Date.now(), deck.stamp + 1);
    if (channel && deck.ch !== null) {
      const at = deck.at || { ch: deck.ch, step: deck.step };
      channel.postMessage({ kind: 'pos', ch: at.ch, step: at.step, lang: el.value, stamp: deck.stamp });
    }
  }, true);
  if (channel) {
    channel.onmessage = (event) => {
      const m = event.data || {};
      if (m.kind === 'hello') {
        tell();
        if (!speaker && document.body.classList.contains('deck-blank')) { channel.postMessage({ kind: 'blank', on: true }); }
        return;
      }
      if (m.kind === 'blank') { setBlank(m.on); return; }
      if (m.kind !== 'pos' || !(m.stamp > deck.stamp) || !info()) { return; }
      deck.stamp = m.stamp;
      follow(m);
    };
  }

  // -- the speaker window: the build after this one, the clock and the countdown -----------
  let upcoming = null;        // the next chapter's first build (lecture_handlers.upcoming_build)
  const keepUpcoming = (raw) => {
    try { upcoming = raw ? JSON.parse(raw) : null; } catch (err) { upcoming = null; }
    showNext();
  };
  const NEXT_W = 1280, NEXT_H = 720;   // drawn at a slide's size, shown smaller (no label crowds)
  // The build after this one lies under the audience's slide (scaled to 0.6, it leaves the
  // lower left free), in the room from the slide's bottom to the window's: its address
  // ("5.2", as the page's address counts), its claim and its figure, scaled to fit.
  const placeNext = (holder) => {
    const main = document.getElementById('lecture-main');
    if (!main) { return; }
    const z = zoom();
    // Moved by what is measured (the box's containing block is the window or the enlarged page).
    const want = main.getBoundingClientRect().bottom + 8 * z;
    const now = holder.getBoundingClientRect().top;
    // From the top it has now (the stylesheet's until this first moves it; the inline style
    // is empty then, and reading it as 0 put the box 4 px above the window).
    const top = (Number.parseFloat(getComputedStyle(holder).top) || 0) + (want - now) / z;
    if (Math.abs(want - now) > 0.5) { holder.style.top = Math.round(top) + 'px'; }
  };
  const showNext = () => {
    if (!speaker || !window.Plotly) { return; }
    const holder = document.querySelector('#deck-notes .deck-next');
    const box = document.querySelector('#deck-notes .deck-next-plot');
    if (!box || !holder) { return; }
    placeNext(holder);
    const i = info();
    let figure = null, claim = '', where = '';
    if (deck.step + 1 < deck.builds) {
      const gd = document.querySelector(`#lecture-plot-${deck.step + 1} .js-plotly-plot`);
      if (gd && gd.data) { figure = { data: gd.data, layout: gd.layout }; }
      claim = ((says() || {}).claims || [])[deck.step + 1] || '';
      where = `${deck.ch}.${deck.step + 1}`;
    } else if (upcoming && upcoming.after === deck.ch && upcoming.figure) {
      figure = upcoming.figure;
      claim = upcoming.claim || '';
      where = `${upcoming.ch}.0 · ${upcoming.title || ''}`;
    }
    const atEnd = !!i && deck.ch >= i.last && deck.step + 1 >= deck.builds;
    document.body.classList.toggle('deck-at-end', atEnd);
    holder.querySelectorAll('.deck-next-where').forEach((el) => { el.textContent = atEnd ? '' : where; });
    const said = holder.querySelector('.deck-next-claim');
    if (said) { said.textContent = atEnd ? '' : String(claim).split(/\n\s*\n/)[0]; }
    if (!figure || atEnd) { box.hidden = true; return; }
    box.hidden = false;
    let data = figure.data;
    let layout = figure.layout || {};
    try { data = structuredClone(data); layout = structuredClone(layout); } catch (err) {
      data = (data || []).map((t) => Object.assign({}, t));
      layout = Object.assign({}, layout);
    }
    layout = Object.assign(layout, { autosize: false, width: NEXT_W, height: NEXT_H });
    // The figure takes the room's height below the label, and at most 55 % of its width.
    const row = holder.querySelector('.deck-next-row');
    const room = row ? row.getBoundingClientRect() : null;
    const z = zoom();
    const scale = room && room.height > 0 ?
      Math.min((room.height / z) / NEXT_H, 0.55 * (room.width / z) / NEXT_W) : box.clientWidth / NEXT_W;
    box.style.width = Math.floor(NEXT_W * scale) + 'px';
    box.style.height = Math.floor(NEXT_H * scale) + 'px';
    let plot = box.querySelector('.deck-next-inner');
    if (!plot) {
      plot = document.createElement('div');
      plot.className = 'deck-next-inner';
      box.appendChild(plot);
    }
    plot.style.transform = `scale(${scale})`;
    try {
      Promise.resolve(window.Plotly.react(plot, data || [], layout, { staticPlot: true, displayModeBar: false }))
        .catch(() => {});
    } catch (err) { /* the next build shows once it is drawn */ }
  };
  deck.showNext = showNext;

  // The clock, the time since the talk began and what is left of its length (the drawer's
  // talk length); both windows read them from the browser's storage, so they agree.
  const STORE = { started: 'explorer-deck-started', minutes: 'explorer-deck-minutes' };
  const stored = (key, fallback) => {
    try { const v = Number(window.localStorage.getItem(key)); return Number.isFinite(v) && v > 0 ? v : fallback; } catch (err) {
      return fallback;
    }
  };
  const store = (key, value) => { try { window.localStorage.setItem(key, String(value)); } catch (err) { /* private mode */ } };
  const talkMinutes = () => Math.min(600, Math.max(1, Math.round(stored(STORE.minutes, 45))));
  const startedAt = () => {
    const t = stored(STORE.started, 0);
    if (t && Date.now() - t < 12 * 3600 * 1000) { return t; }
    const now = Date.now();
    store(STORE.started, now);
    return now;
  };
  const two = (x) => String(x).padStart(2, '0');
  const minSec = (s) => `${two(Math.floor(s / 60))}:${two(s % 60)}`;
  const clock = () => {
    const now = new Date();
    const since = Math.max(0, Math.floor((Date.now() - startedAt()) / 1000));
    const left = talkMinutes() * 60 - since;
    const set = (sel, text) => document.querySelectorAll(sel).forEach((el) => { el.textContent = text; });
    set('#deck-notes .deck-clock-now', `${two(now.getHours())}:${two(now.getMinutes())}`);
    set('#deck-notes .deck-clock-elapsed', minSec(since));
    set('#deck-notes .deck-clock-left', (left < 0 ? '−' : '') + minSec(Math.abs(left)));
    document.body.classList.toggle('deck-overtime', left < 0);
    const input = document.getElementById('deck-talk-minutes');
    if (input && document.activeElement !== input && Number(input.value) !== talkMinutes()) { input.value = talkMinutes(); }
  };
  document.addEventListener('input', (event) => {
    if (event.target && event.target.id === 'deck-talk-minutes') {
      const v = Number(event.target.value);
      if (Number.isFinite(v) && v >= 1 && v <= 600) { store(STORE.minutes, Math.round(v)); clock(); }
    }
  });
  document.addEventListener('click', (event) => {
    const target = event.target;
    if (!target.closest) { return; }
    if (target.closest('.deck-clock')) { store(STORE.started, Date.now()); clock(); }
    const dot = target.closest('.deck-dot');
    if (dot && deck.ch !== null) { move(deck.ch, Number(dot.dataset.build)); }
    const tile = target.closest('.deck-ov-build');
    if (tile) { closeOverview(); move(Number(tile.dataset.ch), Number(tile.dataset.step)); }
  });
  clock();
  setInterval(clock, 1000);

  // -- layout follows the window and whatever changes above the figure ----------------------
  let queued = null;
  const later = () => { if (!queued) { queued = requestAnimationFrame(() => { queued = null; fitFigures(); showNext(); }); } };
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
