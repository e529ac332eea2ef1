"""One folder per mechanism of causal attention: its parameters, its fast forms and its map."""
