"""Chapter 5: closing the gap. Decay and gates, learned maps, hybrids; on the causal model
where it is ready."""

from ...catalog import CAUSAL_MODEL
from ..record import Chapter, ControlSpec, head_control, head_params, layer_control

HYBRID_MODES = ("greedy", "last")      # which softmax layers a hybrid keeps (maths.hybrid_curve)
HYBRID_MAPS = ("elu1", "favor_plus", "taylor2")
# On the causal model the hybrid build is the model linearized with its shipped maps (the
# learn tab's Linearize section): these sets, at these counts of softmax layers kept.
LINEARIZED_SETS = ("elu1:0", "hedgehog:0", "hedgehog:16:1")     # the last: 16 recent keys and token 0 exact
LINEARIZED_KS = (0, 3, 6, 12, 30)


def _deeper(c: dict, source: dict) -> dict:
    m = c["m"] if c["m"] % 2 == 0 else c["m"] + 1
    return {"tab": "learn", **source, **head_params(c), "llayer": c["layer"], "lhead": str(c["head"]), "lm": int(m),
            "steps": int(c["steps"])}


CHAPTER = Chapter(
    number=5, package=__name__.rsplit(".", 1)[-1],
    controls=(layer_control(), head_control(),
              ControlSpec("m", "int", 64, 8, 256, label_key="ctl.m", step=8),
              ControlSpec("gamma", "float", 0.97, 0.5, 1.0, label_key="ctl.gamma", step=0.005),
              ControlSpec("strength", "float", 1.0, 0.0, 8.0, label_key="ctl.strength", step=0.25),
              ControlSpec("train", "bool", False, label_key="ctl.train"),
              ControlSpec("steps", "int", 300, 10, 2000, label_key="ctl.steps", step=10),
              ControlSpec("hybrid", "choice", "last", choices=HYBRID_MODES, label_key="ctl.hybrid"),
              ControlSpec("hybrid_map", "choice", "elu1", choices=HYBRID_MAPS, label_key="ctl.hybrid_map")),
    try_this={"gamma": 0.9, "strength": 3.0, "hybrid": "greedy"},
    deeper=_deeper, builds=("b0", "b1", "b2", "b3", "b4", "b5", "b6"),
    reads_causal_model=True,
    # On the causal SmolLM2: layer 3, head 4, a sharp head (row entropy about 0.4 nats on the
    # lecture's sentence) where elu+1's flat rows miss by a mean row KL above 1 and FAVOR+
    # does no better; its trained Hedgehog ships for every head of that layer
    # (scripts/train_lecture_maps.py).
    model_heads={CAUSAL_MODEL["name"]: (3, 4)})
