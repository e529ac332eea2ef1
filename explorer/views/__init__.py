"""What each tab of the app shows, assembled from the engine: plain data, no gradio.

Each ``*_view`` function runs the engine (sources -> feature maps -> maps / states ->
metrics) and returns a small dataclass of numpy arrays and rows that ``explorer.figures``
draws and ``explorer.ui`` displays. Keeping this here means the API endpoints, the tests
and the command line can call exactly what the UI shows, and the UI stays free of math.

One module per tab: ``common`` (samples, heads, caps), ``maps``, ``quality``, ``state``,
``complexity``, ``learn``, ``hybrid``. This package re-exports what callers use, so
``views.maps_view(...)`` reads the same as before; ``views.learn`` and ``views.hybrid`` are
imported on their own (they load the learned maps' and the hybrid model's machinery).

Display arrays may be reduced for the browser (block means of a large N x N map); every
metric is computed at full resolution before that, and the view says when it happened.
"""

# The catalogue (labels, presets, limits; no torch) is re-exported for the engine's callers.
from ..catalog import (  # noqa: F401
    DEFAULT_MAPS, DEFAULT_METHODS, FEATURE_MAPS, HEADLINE_METRICS, MAX_POINTS, METRIC_INFO,
    METRIC_SHORT, N_CAP, REFERENCE, MapSpec,
    default_maps, map_choices, map_specs, metric_help, metric_keys, random_map_ids,
)
from .common import (  # noqa: F401
    DISPLAY_MAX, MAX_MAP_CELLS, MAX_OVERVIEW_CELLS, MAX_STATE_ELEMENTS, SAMPLE_CACHE_SIZE,
    block_labels, block_mean, load_sample, make_feature_map, metrics_table, select_head,
)
from .complexity import ComplexityView, complexity_table, complexity_view, plan_sweep, sweep_lengths  # noqa: F401
from .maps import MapsView, clear_caches, maps_view, resolve_causal  # noqa: F401
from .quality import (  # noqa: F401
    MAX_QUALITY_WORK, QUALITY_MS, REQUIRED_ERROR, HeadOverview, QualityCurve, QualityView, head_overview,
    kernel_estimate_mse, measure_redraw, measure_redraw_plain, price_request, price_sample_request, quality_page,
    quality_view, seeds_at, theory_relative_mse,
)
from .state import MEMORY_HORIZON, RECALL_LAGS, StateView, state_step, state_view  # noqa: F401
