"""The lecture: the article's argument as seven chapters (an opening and six), each a claim
and one or two live figures on the current text.

One package per chapter holds, in its ``maths`` module, that chapter's new math as plain
functions returning plain data (numpy arrays, floats, dicts); everything that already exists in the engine
(attention maps, linear forms, feature maps, recall probes, Hedgehog, hybrids, the FLOP
model) is called, not re-implemented:

    ch0_bottleneck/           0  pairs, memory and FLOPs of the N x N map as N grows
    ch1_kernel_regression/    1  kernel regression in 1-D, and one query of a real head
    ch2_associativity/        2  the two multiplication orders, their sizes, FLOPs and times
    ch3_kernels/              3  Taylor truncations, kernel profiles, random-feature convergence
    ch4_rnn/                  4  causal linear attention stepped as an RNN
    ch5_closing_the_gap/      5  decay and gates, learned maps, hybrids
    ch6_tradeoff/             6  cost against quality, the Pareto frontier, the roadmap
    text.py                      every sentence, title, axis label and speaker note in English and Chinese
    chapters.py                  the chapter list, each chapter's controls, Try this and Go deeper (torch-free)
    threads.py                   small work on one thread (a chapter's arithmetic is tiny)

``explorer.views.lecture`` assembles them into one view per chapter and
``explorer.figures.lecture`` draws it as a short sequence of builds, one figure each;
``explorer.deck_export``, above both, writes the deck to take home.
Nothing here imports gradio.
"""
