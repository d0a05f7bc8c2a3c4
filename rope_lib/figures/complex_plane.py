"""Lesson 5's picture: RoPE in the complex plane.

thumbnail() is the live widget (rope_lib.widgets.complex_plane) at m = 9, n = 3, theta = 0.1
(imported when drawn: the figures sit below the widgets, which draw with them).
"""

from __future__ import annotations

from matplotlib.figure import Figure


def thumbnail() -> Figure:
    """Lesson 5 in one picture: q turned by m theta and k by n theta (left); their product
    q' conj(k') turned by (m - n) theta, its real part the score (right)."""
    from ..widgets.complex_plane import (
        ComplexPlaneWidget,  # the live figure, drawn once
    )

    widget = ComplexPlaneWidget(
        figure=Figure(figsize=(4.0, 2.56), dpi=80), m=9, n=3, theta=0.1
    )
    return widget.figure
