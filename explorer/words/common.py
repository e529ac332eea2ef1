"""Words shared by every tool tab: units, generic notices."""

TEXT = {
    "common.layer": {"en": "layer", "zh": "层"},
    "common.head": {"en": "head", "zh": "头"},
    "common.tokens": {"en": "tokens", "zh": "词元"},
}
