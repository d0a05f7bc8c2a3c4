"""Lesson 1's picture for the README.

thumbnail(): the sinusoidal table and the dot product against the offset.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..language import _fig
from ..sinusoidal import sinusoidal_offset_dot


def thumbnail():
    """The lesson in one picture: the sinusoidal table and the dot product against the offset."""
    from ..sinusoidal import sinusoidal_encoding

    with plt.ioff():
        fig, (left, right) = plt.subplots(1, 2, figsize=(4, 2.5), layout="constrained")
    left.imshow(
        sinusoidal_encoding(64, 32).numpy(),
        aspect="auto",
        cmap="RdBu_r",
        vmin=-1,
        vmax=1,
    )
    left.set_xlabel(_fig("coordinate"), fontsize=7)
    left.set_ylabel(_fig("position"), fontsize=7)
    left.set_title(_fig("PE table"), fontsize=8)
    k = np.arange(-64, 65)
    right.plot(k, sinusoidal_offset_dot(k, 32).numpy(), color="tab:green", lw=1)
    right.set_xlabel(_fig("offset Δ"), fontsize=7)
    right.set_title("PE(m)·PE(m+Δ)", fontsize=8)
    for ax in (left, right):
        ax.tick_params(labelsize=6)
    return fig
