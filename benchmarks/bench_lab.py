"""Training throughput of the lab model (tokens/s) per position scheme, against the floor: the
same model with no positions on plain torch.nn.functional.scaled_dot_product_attention.

    python benchmarks/bench_lab.py [--rounds 5] [--steps 10] [--threads 1]

The configurations are measured interleaved (round-robin, `rounds` times `steps` training
steps each) so that a machine shared with other work slows them alike; the median per scheme
is reported with its ratio to the floor. Goal: every scheme within 1.3x of the floor.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from rope_lib.lab.data import VOCAB_SIZE
from rope_lib.lab.experiments import make_config
from rope_lib.lab.model import SCHEMES, LabModel

GOAL = 1.3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    names = ["floor (plain sdpa, no positions)", *SCHEMES]
    shape = make_config()["model"]  # the lab's model, as the experiments train it
    setups = {}
    for name in names:
        plain = name.startswith("floor")
        model = LabModel(VOCAB_SIZE, "none" if plain else name, plain=plain, **shape)
        setups[name] = (model, torch.optim.AdamW(model.parameters(), lr=1e-3))
    tokens = torch.randint(0, VOCAB_SIZE, (args.batch, args.length + 1))

    def step(model, optimizer):
        loss = F.cross_entropy(
            model(tokens[:, :-1]).flatten(0, 1), tokens[:, 1:].flatten()
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    for model, optimizer in setups.values():  # warm-up
        for _ in range(3):
            step(model, optimizer)
    seconds = {name: [] for name in names}
    for _ in range(args.rounds):
        for name in names:
            start = time.perf_counter()
            for _ in range(args.steps):
                step(*setups[name])
            seconds[name].append((time.perf_counter() - start) / args.steps)
    per_step_tokens = args.batch * args.length
    floor = statistics.median(seconds[names[0]])
    print(
        f"training throughput, batch {args.batch} x {args.length} tokens, d_model "
        f"{shape['d_model']}, {shape['n_layers']} layers, {shape['n_heads']} heads, "
        f"{args.threads} thread(s); median of {args.rounds} rounds"
    )
    print(f"{'scheme':36s} {'tokens/s':>10s} {'x floor':>8s}")
    worst = 0.0
    for name in names:
        t = statistics.median(seconds[name])
        ratio = t / floor
        if name != names[0]:
            worst = max(worst, ratio)
        print(f"{name:36s} {per_step_tokens / t:10.0f} {ratio:8.2f}")
    verdict = "met" if worst <= GOAL else "missed"
    print(f"slowest scheme: {worst:.2f}x the floor (goal <= {GOAL}x: {verdict})")


if __name__ == "__main__":
    main()
