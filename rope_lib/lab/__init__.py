"""The extrapolation lab: train tiny models at length L, test them at 2L, 4L, 8L.

    python -m rope_lib.lab --seed N --out DIR [--quick]

model.py        LabModel: a tiny decoder-only transformer on rope_lib's attention
data.py         the generated data (a second-order Markov source, passkeys) and the scorer
train.py        training, evaluation, checkpoints
experiments.py  the two experiments over seeds, results.json
figures.py      the figures, drawn from results.json
"""

from .data import MarkovSource, passkey_accuracy, passkey_batch, passkey_predictions
from .experiments import make_config, run
from .model import SCHEMES, LabModel

__all__ = [
    "LabModel",
    "MarkovSource",
    "SCHEMES",
    "make_config",
    "passkey_accuracy",
    "passkey_batch",
    "passkey_predictions",
    "run",
]
