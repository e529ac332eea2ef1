"""Attention with a feature map: the N x N kernel maps with their ill-defined rows flagged
(``attention``), and the recurrent state's diagnostics for the state tab (``state``). The
mechanisms themselves (softmax, linear, decays, gates, the delta rule) live in
``explorer.mechanisms``."""
