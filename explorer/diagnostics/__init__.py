"""Diagnostics of attention: the N x N attention maps with their ill-defined rows flagged
(``attention``), and the recurrent state's diagnostics for the state tab (``state``) with
its recall and capacity probes (``state_probes``). The mechanisms themselves (softmax,
linear, decays, gates, the delta rule) and their fast forms live in ``explorer.mechanisms``."""
