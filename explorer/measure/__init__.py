"""Measuring: quality metrics, the cost model, timings and the public peers."""
