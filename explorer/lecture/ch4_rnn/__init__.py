"""Chapter 4: linear attention is an RNN. Causal linear attention stepped one token at a time,
on the causal model's own heads where it is ready."""

from ..record import PRONOUN, Chapter, ControlSpec, head_control, head_params, layer_control

RNN_MAPS = ("elu1", "favor_plus_orthogonal", "favor_plus_iid", "relu", "taylor2")


def _deeper(c: dict, source: dict) -> dict:
    t = c["t"]
    return {"tab": "state", **source, **head_params(c), "smap": c["map"], "sm": int(c["m"]), "kind": "linear",
            **({"t": int(t)} if t >= 0 else {})}


CHAPTER = Chapter(
    number=4, package=__name__.rsplit(".", 1)[-1],
    controls=(layer_control(), head_control(),
              ControlSpec("map", "choice", "elu1", choices=RNN_MAPS, label_key="ctl.map"),
              ControlSpec("m", "int", 64, 8, 512, label_key="ctl.m", step=8),
              ControlSpec("t", "int", PRONOUN, -1, 511, label_key="ctl.t", step=1)),
    try_this={"map": "favor_plus_orthogonal", "m": 128, "t": -1},  # another map, a bigger state, the last step
    deeper=_deeper, builds=("b0", "b1", "b2", "b3"),
    reads_causal_model=True)
