"""Plotly figures from engine results: pure functions, no gradio, no attention math.

Every builder takes numbers the engine (``explorer.views``) already computed and draws
them as they are: the ``z`` of a heatmap is the engine's array, a curve's ``y`` is the
engine's list. What is decided here is only how they look: colour scales and their
ranges, labels, fonts, layout. ``Style(presentation=True)`` is the lecture-hall version:
large fonts, thick lines, a colour-blind-safe palette (Okabe & Ito) and scales (cividis).

One module per tab (``maps``, ``quality``, ``state``, ``complexity``, ``learn``; ``linearize`` for
the linearized language model) over
``style``, which holds the shared look; this package re-exports the builders.

Token axes are categorical with unique labels, so two "the" never merge into one row
(plotly merges equal category names), and plotly thins the tick labels when they do not
fit instead of overprinting them.
"""

from .complexity import complexity, flop_claim  # noqa: F401
from .linearize import keep_softmax_curves, sensitivity_bars  # noqa: F401
from .maps import attention_grid, metric_bars  # noqa: F401
from .quality import favor_norms, head_overview, quality_curves  # noqa: F401
from .state import memory_growth, state_capacity, state_curves, state_step  # noqa: F401
from .style import OKABE_ITO, PLOTLY_DEFAULT, Style, as_style, unique_labels  # noqa: F401
