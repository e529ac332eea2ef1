"""Attention Kernel Explorer engine: softmax attention seen as a kernel, and its linear approximations.

The data path reads like the article it illustrates:
source -> (Q, K, V) -> feature map phi -> N x N map or O(N) output -> metrics -> figure.
Nothing in this package (outside ``explorer.ui``) imports gradio.
"""

__version__ = "0.1.0"

# The engine was once one flat level; these names still resolve (``from explorer import
# linear``), so notebooks and scripts written against it keep working. Loaded lazily, so
# ``import explorer.catalog`` stays free of torch.
_MOVED = {
    "attention": "forms.attention", "linear": "forms.linear", "state": "forms.state",
    "feature_maps": "maps", "rf_theory": "maps.rf_theory", "learned": "maps.learned", "hybrid": "maps.hybrid",
    "metrics": "measure.metrics", "cost": "measure.cost", "bench": "measure.bench",
    "live_timing": "measure.live_timing", "peers": "measure.peers",
}


def __getattr__(name: str):
    if name in _MOVED:
        import importlib
        return importlib.import_module(f"{__name__}.{_MOVED[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
