"""Experiments: runs that put maps, models, texts and metrics together (training a learned map
on texts and judging it on held-out ones; hybrid models with some layers made linear).

This layer sits above the maps, the sources and the measures, and below the views.
"""
