"""Chapter 0: the bottleneck. The article's opening (a teacher whose 1,000 students compare
every pair), then pairs, memory and FLOPs of the N x N map as N grows: arithmetic on N and d
alone, no text read."""

from ..record import Chapter, ControlSpec, short_sweep


def _deeper(c: dict, source: dict) -> dict:
    return short_sweep(c["n"], c["d"])


CHAPTER = Chapter(
    number=0, package=__name__.rsplit(".", 1)[-1],
    controls=(ControlSpec("n", "int", 100_000, 64, 1_000_000, label_key="ctl.n", step=64),
              ControlSpec("d", "int", 128, 8, 512, label_key="ctl.d", step=8)),
    try_this={"n": 1_000_000},                         # a million tokens: 4 TB for one head
    deeper=_deeper, builds=("b0", "b1", "b2", "b3"), reads_text=False)
