"""Forgetting by decay and gates (RetNet, GLA, HGRN2): entry point. The gates live in
``explorer.forms.decay``, HGRN2's recurrence in ``explorer.forms.hgrn2``."""

from .forms.decay import (gamma_to_log_decay, gla_log_gates, hgrn2_layer_bounds, hgrn2_log_forget,
                          is_feature_dependent, prepare_log_decay, retnet_log_decay)
from .forms.hgrn2 import hgrn2, hgrn2_reference

__all__ = ["gamma_to_log_decay", "gla_log_gates", "hgrn2", "hgrn2_layer_bounds", "hgrn2_log_forget",
           "hgrn2_reference", "is_feature_dependent", "prepare_log_decay", "retnet_log_decay"]
