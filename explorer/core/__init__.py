"""What every layer of the engine may use: plain facts and small tools, standard library only.

Nothing here imports torch, so the page (built from ``explorer.catalog`` before the engine
loads) can read it too.
"""
