"""Moved to tests/helpers/words.py; this name stays only until the last module that imports
it reads helpers.words."""

from helpers.words import english_words, figure_texts  # noqa: F401
