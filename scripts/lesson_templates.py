"""The files of a new lesson's skeleton (scripts/new_lesson.py), as str.format templates.

Fields: n (the lesson's number), nn (two digits), topic, stem (NN_<topic>), title,
title_zh, widget (the widget's class name). The skeleton is a trivial but real lesson
("one pair, one angle"): every file passes the suite as written, and every part shows
the form the real content takes (CONTRIBUTING.md).
"""

# --- the notebook, English and Chinese: (cell type, slide type, tags, source) ---------
SETUP = """\
%matplotlib widget
import torch

from rope_lib.exercises import {topic} as ex
from rope_lib.figures import static_png
from rope_lib.language import set_language
from rope_lib.widgets.{topic} import {widget}

torch.manual_seed(0)
torch.set_printoptions(precision=4)
set_language("{language}")  # {switch}
"""

TEXT = {
    "en": dict(
        title="""\
# Lesson {n} · {title}

RoPE turns every pair of a query's coordinates by an angle that grows with the query's
position. This lesson follows one pair as its position moves, and counts the pairs of a head.
Every computation below uses `rope_lib`.
""",
        goals="""\
**By the end you will be able to**
- count the pairs RoPE rotates in a head of $d$ coordinates;
- read the angle $m\\theta$ of one pair off a live widget, and predict it before you look.
""",
        switch='"zh": feedback, widgets and figures in Chinese',
        section="""\
## 1. One pair, one angle

RoPE turns pair $i$ of a query at position $m$ by the angle $m\\theta_i$. The widget below
turns one pair: move $m$ and $\\theta$, and read the angle the arrow has turned.
""",
        exercise="""\
## Exercise 1 – pairs in a head

How many pairs does RoPE rotate in a head of $d = 64$ coordinates?
""",
        your_code="your code here",
        solution="""\
<details><summary>Solution</summary>

```python
answer = 64 // 2     # a pair holds two coordinates
```
</details>
""",
        summary="""\
## Summary

- RoPE turns pair $i$ at position $m$ by the angle $m\\theta_i$.
- A head of $d$ coordinates has $d/2$ pairs, each turned at its own frequency.
""",
    ),
    "zh": dict(
        title="""\
# 第 {n} 课 · {title_zh}

RoPE 把查询的每一个维度对转过一个角度，这个角度随查询的位置增大。本课跟随一个维度对，看它随位置转动，并数一数一个头里有多少个维度对。下面的每一步计算都用 `rope_lib`。
""",
        goals="""\
**学完本课，你将能够**
- 数出 RoPE 在一个有 $d$ 个坐标的头里旋转多少个维度对；
- 从交互控件上读出一个维度对的角度 $m\\theta$，并在看之前先预测它。
""",
        switch='"en"：反馈、交互控件和图改用英文',
        section="""\
## 1. 一个维度对，一个角度

RoPE 把位置 $m$ 处查询的第 $i$ 个维度对转过角度 $m\\theta_i$。下面的交互控件转动一个维度对：移动 $m$ 和 $\\theta$，读出箭头转过的角度。
""",
        exercise="""\
## 练习 1：一个头里的维度对

一个有 $d = 64$ 个坐标的头，RoPE 旋转多少个维度对？
""",
        your_code="在这里写你的代码",
        solution="""\
<details><summary>解答</summary>

```python
answer = 64 // 2     # 一个维度对有两个坐标
```
</details>
""",
        summary="""\
## 小结

- RoPE 把位置 $m$ 处的第 $i$ 个维度对转过角度 $m\\theta_i$。
- 一个有 $d$ 个坐标的头有 $d/2$ 个维度对，每个以自己的频率转动。
""",
    ),
}


def cells(language: str, fields: dict) -> list[tuple]:
    """The skeleton's cells in one language: (type, slide type, tags, source)."""
    text = {k: v.format(**fields) for k, v in TEXT[language].items()}
    setup = SETUP.format(**fields, language=language, switch=text["switch"])
    widget = "w = {widget}()\nw.widget()".format(**fields)
    answer = f"answer = None  # {text['your_code']}\nex.check_pair_count(answer)"
    return [
        ("markdown", "slide", (), text["title"]),
        ("markdown", "subslide", (), text["goals"]),
        ("code", "skip", (), setup),
        ("markdown", "slide", (), text["section"]),
        ("code", "subslide", ("nbval-ignore-output",), widget),
        ("code", None, (), "static_png(w.figure)"),
        ("markdown", "slide", (), text["exercise"]),
        ("code", None, (), answer),
        ("markdown", "fragment", (), text["solution"]),
        ("markdown", "slide", (), text["summary"]),
    ]


# --- rope_lib ---------------------------------------------------------------------------
EXERCISES = '''\
"""Exercise checkers for lesson {n} ({title}).

Each checker is declared as data (rope_lib/exercises/exercise.py): its reader, the right
value, and the known mistakes in order, each with the message the learner gets.
"""

from __future__ import annotations

from ..language import N_
from . import Mistake, exercise
from .answers import as_count

HEAD_DIM = 64


@exercise(
    read=as_count,
    expected=HEAD_DIM // 2,
    placeholder=N_("replace `None` with a whole number"),
    mistakes=[
        Mistake(
            HEAD_DIM,
            N_("{{value}} is the head's width: RoPE turns its coordinates two at a time"),
        ),
        Mistake(
            HEAD_DIM // 4,
            N_("{{value}} halves the width twice: each pair holds two coordinates"),
        ),
        Mistake(
            HEAD_DIM // 2 + 1,
            N_("one too many: the pairs are numbered 0 to d/2 - 1"),
        ),
    ],
    otherwise=N_("count the pairs of a head of 64 coordinates; got {{value}}"),
    right=N_("{{value}} pairs: a head of d coordinates has d / 2 of them"),
)
def check_pair_count(answer):
    """How many pairs does RoPE rotate in a head of 64 coordinates?"""
'''

WIDGET = '''\
"""Lesson {n}'s live widget: one pair of a query turned by the angle m theta.

{widget} draws the pair as an arrow on the unit circle (rope_lib.figures.{topic},
where the lesson's still figures are too) and reads out the angle m theta.
"""

from __future__ import annotations

import math

from ..figures.{topic} import arrow, plane
from ..language import N_
from .base import TIGHT_LINES, Control, LiveWidget


class {widget}(LiveWidget):
    """Controls: "m" (the position) and "theta" (the pair's frequency). After update(),
    .state["angle"] is m theta in radians."""

    CONTROLS = (
        Control("m", "m", "int", 0, 20, 1, default=5),
        Control("theta", N_("theta"), "float", 0.0, 1.0, 0.01, default=0.3),
    )
    ROWS = (("m",), ("theta",))
    # the controls and the readout in a column left of the figure: long sliders, and
    # all of it on the projector's screen (tests/browser/test_projector.py)
    BESIDE, READOUT_WIDTH, READOUT = "side", "232px", TIGHT_LINES
    FIGSIZE = (4.25, 3.3)
    SWEPT = ("m", "theta")

    def build(self, figure):
        ax = figure.add_axes((0.05, 0.05, 0.9, 0.9))
        plane(ax)
        self.arrow = arrow(ax, 0.0)
        return [self.arrow]

    def compute(self, v):
        return {{"angle": v["m"] * v["theta"]}}

    def draw(self, s):
        angle = s["angle"]
        self.arrow.set_data([0, math.cos(angle)], [0, math.sin(angle)])

    def readout_text(self):
        return f"m·θ = {{self.state['angle']:.4f}}"
'''

FIGURES = '''\
"""Lesson {n}'s still figures and its README thumbnail: one pair as an arrow on the unit
circle (the live widget rope_lib.widgets.{topic} draws with plane and arrow)."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt


def plane(ax) -> None:
    """The unit circle on a square plane, no axes."""
    turn = [2 * math.pi * i / 200 for i in range(201)]
    ax.plot([math.cos(t) for t in turn], [math.sin(t) for t in turn], color="0.75")
    ax.set_xlim(-1.15, 1.15)
    ax.set_ylim(-1.15, 1.15)
    ax.set_aspect("equal")
    ax.axis("off")


def arrow(ax, angle: float, **style):
    """A pair turned by `angle` (radians): a line from the centre to the circle."""
    style = {{"lw": 2.5, "color": "C0"}} | style
    (line,) = ax.plot([0, math.cos(angle)], [0, math.sin(angle)], **style)
    return line


def thumbnail():
    """One pair at positions 0, 1, 2, 3 (theta = 0.5): the angle grows with m."""
    with plt.ioff():
        figure = plt.figure(figsize=(4, 2.5), dpi=80)
    ax = figure.add_axes((0.2, 0.05, 0.6, 0.9))
    plane(ax)
    for m in range(4):
        arrow(ax, 0.5 * m, alpha=0.4 + 0.2 * m)
    return figure
'''

TEST = '''\
"""Lesson {n} ({title}): its claims, its checkers and its widget.

The two tests below hold for any content of rope_lib.exercises.{topic} and
rope_lib.widgets.{topic}: every checker takes its declared answer and refuses each
mistake it declares as a value; every widget of the topic draws each frame of its sweep.
Add the lesson's own claims here: each number the lesson states, checked against the
library or a reference (transformers, the paper).
"""

from __future__ import annotations

import inspect

import matplotlib
import matplotlib.pyplot as plt
import pytest

from rope_lib.exercises import either
from rope_lib.exercises import {topic} as ex
from rope_lib.widgets import {topic} as widgets
from rope_lib.widgets.base import LiveWidget

matplotlib.use("Agg")

CHECKERS = [c for name, c in vars(ex).items() if name.startswith("check_")]
WIDGETS = [
    c
    for c in vars(widgets).values()
    if inspect.isclass(c)
    and issubclass(c, LiveWidget)
    and c.__module__ == widgets.__name__
]


@pytest.mark.parametrize("check", CHECKERS, ids=lambda c: c.__name__)
def test_a_checker_takes_its_answer_and_refuses_its_mistakes(check):
    declared = check.exercise
    if (
        declared.given is None
        and not declared.cases
        and not callable(declared.expected)
    ):
        assert check(declared.expected).ok
    for mistake in () if callable(declared.mistakes) else declared.mistakes:
        values = mistake.match if isinstance(mistake.match, either) else [mistake.match]
        for value in [v for v in values if not callable(v)]:
            feedback = check(value)
            assert not feedback.ok and feedback.message, value


@pytest.mark.parametrize("cls", WIDGETS, ids=lambda c: c.__name__)
def test_a_widget_draws_each_frame_of_its_sweep(cls):
    widget = cls.example()
    for step in widget.sweep():
        widget.update(**step)
        widget.figure.canvas.draw()
    plt.close(widget.figure)
'''

#: The skeleton's messages in Chinese (new_lesson.py fills them into the catalog).
MESSAGES_ZH = {
    "replace `None` with a whole number": "把 `None` 换成一个整数",
    "count the pairs of a head of 64 coordinates; got {value}": (
        "数一数有 64 个坐标的头里的维度对；你给出的是 {value}"
    ),
    "{value} is the head's width: RoPE turns its coordinates two at a time": (
        "{value} 是头的宽度：RoPE 每次转动两个坐标"
    ),
    "{value} halves the width twice: each pair holds two coordinates": (
        "{value} 把宽度减半了两次：每个维度对含两个坐标"
    ),
    "one too many: the pairs are numbered 0 to d/2 - 1": (
        "多了一个：维度对的编号是 0 到 d/2 - 1"
    ),
    "{value} pairs: a head of d coordinates has d / 2 of them": (
        "{value} 个维度对：有 d 个坐标的头有 d / 2 个维度对"
    ),
}

# --- teacher notes ----------------------------------------------------------------------
SLIDESHOW = """\
## As a slideshow

Open the notebook and run all cells (Run → Run All Cells): the widget slide needs the kernel
running. Click the title cell, then the **Toggle Deck** button of the notebook toolbar (the
orange cards; or Ctrl+Shift+C, "Start Deck"): the notebook itself becomes the slideshow, in the
same tab and on the same kernel. **Space** steps through the cells of a slide, then on to the
next slide; **Shift+Space** steps back. The exercise's solution appears as a fragment. **Esc**
ends the slideshow. On the widget slide (section 1) move the controls as in the demo: the
widget stays live in the slideshow; then click its readout line, so that Space moves on again.
`make test-slides` checks every slide of this lesson at the projector's size.
"""

NOTES = (
    """\
# Teacher notes · Lesson {n} · {title}

Notebook: `notebooks/{stem}.ipynb` · exercises: `rope_lib.exercises.{topic}` · widget:
`{widget}` (section 1).

## Goals

By the end of the session the class can

- say how many pairs RoPE rotates in a head of $d$ coordinates, and why the answer is $d/2$;
- read the angle $m\\theta$ of one pair off the live widget, and predict it before moving a
  slider;
- explain why a larger $\\theta$ makes the pair turn faster, and what a pair that has turned
  more than once around the circle can no longer tell apart.

## Plan for 45 minutes

| minutes | what |
|---|---|
| 0–5 | Hook: draw one arrow on the board and ask where it points after five steps of 0.3 radians each. |
| 5–15 | Section 1: the angle $m\\theta_i$, one pair at a time; stop and ask (Q1). |
| 15–30 | The live widget: the demo below, then Q2 and Q3 while the class moves the sliders. |
| 30–40 | Exercise 1: let everyone answer before anyone runs the checker. |
| 40–45 | Summary, and what the next lesson builds on this. |

## Stop and ask

1. *Before the widget:* "At $m = 5$ and $\\theta = 0.3$, how far has the pair turned?"
   Expected: 1.5 radians, $m\\theta$; the readout says 1.5000.
2. *After moving $m$:* "Which positions does this pair confuse when $\\theta = 1$?"
   Expected: two positions about $2\\pi \\approx 6.3$ apart point the same way.
3. *Before exercise 1:* "Does a head of 64 coordinates have 64 frequencies?"
   Expected: no, 32: each frequency turns one pair of two coordinates.

## Live demo

Start from the widget as the notebook builds it ($m = 5$, $\\theta = 0.3$): the arrow has
turned 1.5 radians from the horizontal, and the readout says so.

1. Drag to `m = 10`: the arrow turns twice as far, 3.0 radians. Say: the angle grows with the
   position, step by step.
2. Set `theta = 0.6`: the same position, twice the frequency, twice the angle again.
3. Set `m = 0`: the arrow is back at the start, whatever $\\theta$ is. Say: position 0 is never
   turned.
4. Set `m = 20` and `theta = 1`: the arrow has gone round the circle three times; ask which
   earlier position points the same way.

## Misconceptions the checkers catch

- **"A head of 64 coordinates has 64 pairs."** `answer = 64` in exercise 1: the checker says
  `is the head's width: RoPE turns its coordinates two at a time`. Answer: $d/2 = 32$.
- **"Halve, then halve again."** `answer = 16`: the checker says `halves the width twice: each
  pair holds two coordinates`. Answer: halve once.
- **"Count both ends."** `answer = 33`: the checker says `one too many: the pairs are numbered 0
  to d/2 - 1`. Answer: pairs 0 to 31 are 32 pairs.

## If you are short of time

- Run the demo yourself and skip the class's own slider time; keep Q2, the one idea that the
  next lessons use again.
- Exercise 1 can be done orally: ask for a show of hands for 64, 32 and 16.
- The summary slide can be read aloud in a minute.

"""
    + SLIDESHOW
)

NOTES_ZH = """\
# 教师笔记 · 第 {n} 课 · {title_zh}

笔记本：`notebooks/zh/{stem}.ipynb` · 练习：`rope_lib.exercises.{topic}` · 交互控件：`{widget}`（第 1 节）。

## 目标

下课时，全班能够

- 说出 RoPE 在一个有 $d$ 个坐标的头里旋转多少个维度对，并说明为什么答案是 $d/2$；
- 从交互控件上读出一个维度对的角度 $m\\theta$，并在移动滑块之前先预测它；
- 解释为什么更大的 $\\theta$ 让维度对转得更快，以及一个已经绕圆转过不止一圈的维度对再也分不清哪些位置。

## 45 分钟教学安排

| 分钟 | 内容 |
|---|---|
| 0–5 | 引入：在黑板上画一个箭头，问它每步转 0.3 弧度、走五步之后指向哪里。 |
| 5–15 | 第 1 节：角度 $m\\theta_i$，一次看一个维度对；停下来提问（问题 1）。 |
| 15–30 | 交互控件：按下面的演示操作，然后在全班拖动滑块时提出问题 2 和问题 3。 |
| 30–40 | 练习 1：先让每个人都给出答案，再运行检查器。 |
| 40–45 | 小结，以及下一课如何在这一课的基础上继续。 |

## 停下来提问

1. *交互控件之前：*“在 $m = 5$、$\\theta = 0.3$ 时，这个维度对转了多少？”预期答案：1.5 弧度，即 $m\\theta$；读数显示 1.5000。
2. *移动 $m$ 之后：*“当 $\\theta = 1$ 时，这个维度对会混淆哪些位置？”预期答案：相距约 $2\\pi \\approx 6.3$ 的两个位置指向同一个方向。
3. *练习 1 之前：*“一个有 64 个坐标的头有 64 个频率吗？”预期答案：不是，是 32 个：每个频率转动一个含两个坐标的维度对。

## 现场演示

从笔记本构建的交互控件开始（$m = 5$，$\\theta = 0.3$）：箭头从水平方向转过了 1.5 弧度，读数也这样显示。

1. 拖动到 `m = 10`：箭头转过的角度加倍，变成 3.0 弧度。讲解：“角度随位置一步一步增大。”
2. 设 `频率 θ = 0.6`：同一个位置，频率加倍，角度再次加倍。
3. 设 `m = 0`：无论 $\\theta$ 是多少，箭头都回到起点。讲解：“位置 0 从不旋转。”
4. 设 `m = 20` 和 `频率 θ = 1`：箭头已经绕圆转了三圈；问全班哪个更早的位置指向同一个方向。

## 检查器能发现的误解

- **“有 64 个坐标的头有 64 个维度对。”** 练习 1 答 `answer = 64`：检查器会说 `是头的宽度：RoPE 每次转动两个坐标`。解答：$d/2 = 32$。
- **“减半，再减半。”** 答 `answer = 16`：检查器会说 `把宽度减半了两次：每个维度对含两个坐标`。解答：只减半一次。
- **“两端都算上。”** 答 `answer = 33`：检查器会说 `多了一个：维度对的编号是 0 到 d/2 - 1`。解答：编号 0 到 31 的维度对共有 32 个。

## 时间不够时

- 由你自己完成演示，省去全班自己拖动滑块的时间；保留问题 2，后面几课还会用到这个想法。
- 练习 1 可以口头完成：请大家分别为 64、32 和 16 举手。
- 小结那张幻灯片一分钟就能读完。

## 幻灯片放映

打开笔记本，运行所有单元格（运行 → 运行所有单元格 / Run → Run All Cells）：交互控件那张幻灯片需要内核在运行。点击标题单元格，再点击笔记本工具栏上的 **Toggle Deck** 按钮（橙色卡片图标；或按 Ctrl+Shift+C，“Start Deck”）：笔记本本身就变成幻灯片，在同一个标签页、同一个内核上。**Space** 逐个单元格前进，然后进入下一张幻灯片；**Shift+Space** 后退。练习的解答以片段（fragment）的形式出现。**Esc** 结束放映。在交互控件那张幻灯片（第 1 节）上按演示步骤操作控件：放映时交互控件仍然可以操作；操作完后点一下它的读数行，Space 就又能前进了。`make test-slides` 以投影仪的尺寸检查这一课的每一张幻灯片。
"""
