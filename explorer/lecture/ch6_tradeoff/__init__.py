"""Chapter 6: the trade-off. Cost against quality, the Pareto frontier, the 2020 -> 2025
roadmap measured on one head; then the end of the talk as the article ends it: its five-step
recap, the hologram against the impression, the retrieval caveat, the hybrid future."""

from ...catalog import CAUSAL_MODEL
from ..record import Chapter, ControlSpec, head_control, head_params, layer_control, seed_control


def _deeper(c: dict, source: dict) -> dict:
    # The head the chapter measured, against causal softmax on the causal model, as it does;
    # its first figure drawn against cost (FLOPs), as the chapter's plane sets cost against quality.
    causal = {"causal": "true"} if source.get("model") == CAUSAL_MODEL["name"] else {}
    return {"tab": "quality", **source, **head_params(c), "m": int(c["m"]), **causal, "x": "FLOPs"}


CHAPTER = Chapter(
    number=6, package=__name__.rsplit(".", 1)[-1],
    controls=(layer_control(), head_control(),
              ControlSpec("m", "int", 64, 8, 512, label_key="ctl.m", step=8),
              seed_control()),
    try_this={"m": 256},
    deeper=_deeper, builds=("b0", "b1", "b2", "b3", "b4", "b5", "b6"),
    reads_causal_model=True,                    # the lecture's one model and sentence, to the end
    model_heads={CAUSAL_MODEL["name"]: (3, 4)})  # the layer SmolLM2's trained maps ship for (chapter 5's head)
