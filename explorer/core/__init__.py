"""What every layer of the engine may use, and which imports nothing of the engine itself:
plain facts and small tools (the feature maps' specs, one bounded cache: standard library
only, so the page, built from ``explorer.catalog`` before the engine loads, can read them),
block sizes (``blocks``) and the autograd test that decides whether work may be done in
place (``grad``)."""
