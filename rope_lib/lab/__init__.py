"""The extrapolation lab: train tiny models at length L, test them at 2L, 4L, 8L.

    python -m rope_lib.lab --out DIR [--seed N] [--seeds K] [--workers W] [--quick]

data.py         the generated data (text from a second-order Markov source, passkeys, copies),
                its yardsticks and the passkey scorer
model.py        LabModel: a tiny decoder-only transformer on rope_lib's attention
train.py        training, evaluation, checkpoints
experiments.py  the jobs (one per scheme and seed), the extensions, the fine-tune sweep,
                results.json
results.py      where results.json is: ROPE_LAB_RESULTS or the committed one
summary.py      reading results.json: per seed, k of n seeds, means, yardsticks
figures.py      the figures, drawn from results.json
"""

from .data import (
    MarkovSource,
    copy_batch,
    passkey_accuracy,
    passkey_batch,
    passkey_predictions,
)
from .experiments import make_config, run
from .model import SCHEMES, LabModel

__all__ = [
    "LabModel",
    "MarkovSource",
    "SCHEMES",
    "copy_batch",
    "make_config",
    "passkey_accuracy",
    "passkey_batch",
    "passkey_predictions",
    "run",
]
