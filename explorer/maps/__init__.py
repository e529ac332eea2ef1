"""The feature-map zoo: phi such that k(q, k) = phi(q) . phi(k).

Importing the package registers every map: each module below depends on ``base`` alone
(and the engine's forms), and registers its own maps.
"""

from . import fixed, random, hybrid, learned, luna  # noqa: F401  (importing registers the maps)
from .base import FeatureMap, create, names, records_grad, register  # noqa: F401
from .fixed import CosFormer, EluPlusOne, Identity, Relu, Taylor1, Taylor2  # noqa: F401
from .random import FavorPlus, TrigRFF, gaussian_projection  # noqa: F401
from .luna import Luna  # noqa: F401
