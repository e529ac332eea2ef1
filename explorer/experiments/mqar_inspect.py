"""What a trained recall model reads when it answers: one MQAR sequence through the model,
and for every question, each layer's attention over the earlier tokens.

Each mixer's output at position t is a weighted sum of the values v_s of the tokens s <= t;
the weights form the mechanism's exact map (``attention_map`` of the registered mechanism,
the same one the maps tab draws; the sliding window: softmax over the last ``WINDOW`` keys).
For a recurrent mechanism the row of a question is what its state gives back of each past
token. ``inspect`` keeps the rows of the questions: (heads, questions, N) per layer, and
what the model answered. The sequence is drawn from its own seed, apart from the training
and held-out data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .. import mechanisms
from .mqar import FILLER, IGNORED, WINDOW, Mixer, RecallModel, Task, mechanism, sequences

SEQUENCE_SEED = 2_000_000        # the inspected sequences' seeds start here: not a training or held-out draw


@dataclass
class RecallInspection:
    """One sequence read by a trained model."""

    tokens: list            # the sequence's token ids (N)
    questions: list         # the positions where a key is asked
    asked: list             # the key asked at each question
    answers: list           # the value each question asks for
    predicted: list         # the model's answer at each question (arg max)
    pair_positions: list    # where each asked key stands among the pairs (its value follows it)
    mixers: list            # each layer's mixer
    maps: list              # per layer: (heads, questions, N) weights of the question rows
    signed: list            # per layer: whether its map has negative weights (the delta rule)
    seed: int
    task: Task

    @property
    def right(self) -> list:
        return [int(a == p) for a, p in zip(self.answers, self.predicted)]

    def pair_weight(self, layer: int) -> np.ndarray:
        """(heads,): each head's weight on the asked pairs (key and value), averaged over the questions."""
        m = self.maps[layer]
        rows = np.arange(len(self.questions))
        keys = np.asarray(self.pair_positions)
        return (m[:, rows, keys] + m[:, rows, keys + 1]).mean(-1)

    def reading_head(self, layer: int) -> int:
        """The head of ``layer`` that puts the most weight on the asked pairs."""
        return int(np.argmax(self.pair_weight(layer)))

    def reading_layer(self) -> int:
        """The layer whose reading head puts the most weight on the asked pairs."""
        return int(np.argmax([self.pair_weight(layer).max() for layer in range(len(self.maps))]))

    def rows(self, layer: int, head: int | None = None) -> np.ndarray:
        """(questions, N): one head's rows of ``layer``, or their mean over heads (None)."""
        m = self.maps[layer]
        return m.mean(0) if head is None else m[head]


def mixer_map(mixer: Mixer, x: torch.Tensor) -> torch.Tensor:
    """(B, H, N, N): the exact weights the mixer applies to its values, on its input ``x``."""
    inputs = mixer.inputs(x)
    q, k = inputs.pop("q"), inputs.pop("k")
    inputs.pop("v")
    if mixer.mixer == "sliding_window":
        n = q.shape[-2]
        lag = torch.arange(n).unsqueeze(-1) - torch.arange(n)
        scores = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
        return scores.masked_fill((lag < 0) | (lag >= WINDOW), float("-inf")).softmax(-1)
    return mechanisms.get(mechanism(mixer.mixer)).attention_map(q, k, **inputs)


def token_name(token: int, task: Task) -> str:
    """k<id> for a key, v<id> for a value, · for the filler."""
    if token == FILLER:
        return "·"
    return f"k{token}" if token in task.keys else f"v{token}"


@torch.no_grad()
def inspect(model: RecallModel, task: Task, seed: int = 0) -> RecallInspection:
    """Draw one sequence (``seed``) and read it with ``model``: its answers and each layer's
    map at the questions."""
    tokens, labels = sequences(task, 1, torch.Generator().manual_seed(SEQUENCE_SEED + int(seed)))
    seen = []
    hooks = [block.mixer.register_forward_pre_hook(lambda module, args: seen.append((module, args[0])))
             for block in model.blocks]
    try:
        was_training = model.training
        model.eval()
        logits = model(tokens)
        model.train(was_training)
    finally:
        for hook in hooks:
            hook.remove()
    questions = (labels[0] != IGNORED).nonzero().flatten()
    row = tokens[0].tolist()
    pairs = {row[i]: i for i in range(0, 2 * task.pairs, 2)}
    maps, signed = [], []
    for module, x in seen:
        full = mixer_map(module, x)[0].double()                     # (H, N, N)
        rows = full[:, questions].numpy()
        maps.append(rows)
        signed.append(bool((full < 0).any()))
    return RecallInspection(
        tokens=row, questions=questions.tolist(), asked=[row[i] for i in questions],
        answers=labels[0, questions].tolist(), predicted=logits[0, questions].argmax(-1).tolist(),
        pair_positions=[pairs[row[i]] for i in questions], mixers=[m.mixer for m, _ in seen], maps=maps,
        signed=signed, seed=int(seed), task=task)
