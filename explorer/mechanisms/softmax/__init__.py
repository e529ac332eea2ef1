"""Softmax attention: the exact map."""
