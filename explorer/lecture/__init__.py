"""The lecture: the article's argument as seven chapters (an opening and six), each a claim
and one or two live figures on the current text.

Each chapter is one package, and one record in it (``CHAPTER``, an
``explorer.lecture.record.Chapter``): its controls, its preset, the full tab behind "Go
deeper", its builds and its text keys, and where its compute and its drawing live.

    ch0_bottleneck/           0  the article's teacher (every pair compared); pairs, memory and
                                 FLOPs of the N x N map as N grows
    ch1_kernel_regression/    1  kernel regression in 1-D, and one query of a real head
    ch2_associativity/        2  the two multiplication orders, their sizes, FLOPs and times
    ch3_kernels/              3  Taylor truncations, kernel profiles, random-feature convergence
    ch4_rnn/                  4  causal linear attention stepped as an RNN
    ch5_closing_the_gap/      5  decay and gates, learned maps, hybrids
    ch6_tradeoff/             6  cost against quality, the Pareto frontier, the roadmap; the end of
                                 the talk (recap, hybrid future, hologram and impression)
    record.py                    what a chapter is, and what every chapter's controls share
    chapters.py                  the chapters in order: controls, Try this and Go deeper (torch-free)
    text.py                      every sentence, title, axis label and speaker note in English and Chinese
    mathml.py                    the article's formulas as MathML (the browser draws them), built from parts
    memo.py, threads.py          small caches; small work on one thread (a chapter's arithmetic is tiny)

Inside a chapter's package each module sits in one layer, and imports only point down:

    __init__.py   the record                plain data (standard library, catalog, record)
    formulas.py   the article's formulas    plain data: MathML of the builds that argue them
                                             (``lecture.mathml``; words from the language files)
    maths.py      the chapter's new math     engine: plain functions returning numpy arrays,
                                             floats and dicts; what the engine already has
                                             (attention maps, linear forms, feature maps,
                                             recall probes, Hedgehog, hybrids, the FLOP
                                             model) is called, not re-implemented
    view.py       ``compute``                views: the math on the text read, as a ChapterView
                                             (shared parts: ``explorer.lecture.view_common``)
    figures.py    ``draw(view, style)``      figures: the view's builds, one plotly figure each,
                                             their words messages (``text.words``), said in a
                                             language by the page (shared parts:
                                             ``explorer.lecture.figure_common``)

``explorer.lecture.view`` computes a chapter through its record, ``explorer.lecture.figures``
draws it; ``explorer.deck_export`` and ``explorer.ui.lecture_tab``, above both, show it.
Nothing here imports gradio.
"""
