() => {
  // The lecture tab in the browser: <body class="lecture-on"> while it is on screen, and
  // gradio's own language following the language switch.

  // Keys and builds: assets/deck.js.
  const lectureShown = () => {
    const el = document.getElementById('lecture');
    return !!el && el.offsetParent !== null;
  };

  // <body class="lecture-on"> while the lecture is the tab on screen (the stylesheet gives it
  // the whole screen in presentation mode). Tab switches flip aria-selected on the tab buttons.
  const sync = () => document.body.classList.toggle('lecture-on', lectureShown());
  new MutationObserver(() => setTimeout(sync, 0))
    .observe(document.body, { subtree: true, attributes: true, attributeFilter: ['aria-selected'] });
  setTimeout(sync, 0);

  // gradio picks its locale from the browser; the switch (and a link's lang=) overrides it
  // through gradio's own changeLocale, exported by its core module. Without it (another
  // gradio build) the labels stay in the browser's language; the lecture text still follows.
  const LOCALES = { en: 'en', zh: 'zh-CN' };
  let core = null;
  const gradioCore = async () => {
    if (core) { return core; }
    const url = performance.getEntriesByType('resource').map((e) => e.name)
      .find((name) => /\/assets\/core-[\w-]+\.js$/.test(name.split('?')[0]));
    if (!url) { return null; }
    const mod = await import(url);
    core = typeof mod.changeLocale === 'function' ? mod : null;
    return core;
  };
  window.explorerSetLanguage = async (lang) => {
    const locale = LOCALES[lang] || 'en';
    document.documentElement.lang = locale;   // lets the browser pick CJK glyph forms
    try {
      const mod = await gradioCore();
      if (mod) { mod.changeLocale(locale); }
      return !!mod;
    } catch (err) {
      console.warn('language switch: gradio locale not available', err);
      return false;
    }
  };
}
