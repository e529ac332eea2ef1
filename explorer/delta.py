"""The delta rule (DeltaNet, Gated DeltaNet): entry point; the code lives in
``explorer.forms.delta``."""

from .forms.delta import METHODS, chunked, delta_rule, delta_rule_reference, delta_step, recurrent

__all__ = ["METHODS", "chunked", "delta_rule", "delta_rule_reference", "delta_step", "recurrent"]
