"""Chapter 2: associativity. The two multiplication orders, their sizes, FLOPs and times."""

from ..record import Chapter, ControlSpec, seed_control, short_sweep


def _deeper(c: dict, source: dict) -> dict:
    return {**short_sweep(c["n"], c["d"]), "cm": int(c["m"]),
            "cmap": "elu1" if c["map"] == "elu1" else "favor_plus"}


CHAPTER = Chapter(
    number=2, package=__name__.rsplit(".", 1)[-1],
    controls=(ControlSpec("n", "int", 2048, 16, 100_000, label_key="ctl.n", step=16),
              ControlSpec("d", "int", 64, 8, 256, label_key="ctl.d", step=8),
              ControlSpec("m", "int", 64, 8, 512, label_key="ctl.m", step=8),
              ControlSpec("map", "choice", "elu1", choices=("elu1", "favor_plus_orthogonal"), label_key="ctl.map"),
              seed_control()),
    try_this={"n": 8192, "d": 64, "m": 64, "map": "elu1"},
    deeper=_deeper, builds=("b0", "b1"),
    timed=True,            # the orders run as the machine runs them
    reads_causal_model=True)   # the sentence the other chapters read, in the audience's language
