"""Chapter 1: attention is kernel regression. Nadaraya-Watson in 1-D, and one query of a real
head computed as kernel regression against the model's own output."""

from ..record import PRONOUN, Chapter, ControlSpec, head_control, head_params, layer_control, seed_control


def _deeper(c: dict, source: dict) -> dict:
    return {"tab": "maps", **source, **head_params(c), "maps": "softmax,elu1"}


CHAPTER = Chapter(
    number=1, package=__name__.rsplit(".", 1)[-1],
    controls=(ControlSpec("x", "float", 3.0, 0.0, 10.0, label_key="ctl.x", step=0.05),
              ControlSpec("h", "float", 0.6, 0.05, 5.0, label_key="ctl.h", step=0.05),
              ControlSpec("points", "int", 30, 3, 200, label_key="ctl.points", step=1),
              seed_control(), layer_control(), head_control(),
              ControlSpec("query", "int", PRONOUN, 0, 511, label_key="ctl.query", step=1)),
    try_this={"h": 0.15, "x": 5.0, "points": 30},
    deeper=_deeper, builds=("b0", "b1", "b2"),
    reads_causal_model=True)
