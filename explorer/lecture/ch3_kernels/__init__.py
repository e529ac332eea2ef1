"""Chapter 3: choosing the kernel. Taylor truncations, the Taylor gap, kernel profiles, random-feature
convergence on a real head."""

from ...catalog import CAUSAL_MODEL
from ..record import Chapter, ControlSpec, head_control, head_params, layer_control, seed_control


def _deeper(c: dict, source: dict) -> dict:
    favor = "favor_plus_orthogonal" if c["orthogonal"] else "favor_plus_iid"
    # The causal model's head is measured against causal softmax there too, as the chapter does.
    causal = {"causal": "true"} if source.get("model") == CAUSAL_MODEL["name"] else {}
    return {"tab": "quality", **source, **head_params(c), "m": int(c["m"]), "qmaps": favor, "seeds": 10, "x": "m",
            **causal}


CHAPTER = Chapter(
    number=3, package=__name__.rsplit(".", 1)[-1],
    controls=(layer_control(), head_control(),
              ControlSpec("m", "int", 64, 4, 1024, label_key="ctl.m", step=4),
              ControlSpec("orthogonal", "bool", True, label_key="ctl.orthogonal"),
              seed_control()),
    try_this={"m": 16, "orthogonal": False},
    deeper=_deeper, builds=("b0", "b1", "b2", "b3", "b4", "b5", "b6"),
    reads_causal_model=True)   # the lecture's one model and sentence, in the audience's language
