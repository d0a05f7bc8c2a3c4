"""A class on the hub, in a real browser (README, "Teaching a class").

The teacher and four students (one reading the Chinese edition) log in at once with the
passwords the hub issued, each in a browser context of their own; each student gets their
own JupyterLab on their own subdomain with their own copy of the notebooks, runs lesson 3,
drags a widget and saves an answer to an exercise. Then: an intruder who is not on the
roster is refused; a student cannot open, read or change another's notebooks, nor reach
another's server or kernel; only the teacher reaches the admin page and the REST API; a
student whose kernel is killed loses no saved work; an assignment goes through the
Assignment List and the grading user; the teacher stops every server and the hub, leaving
no process behind. The attacks are in test_attacks.py.

The tests run in this order and share the hub and the people's pages (conftest.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import hubclass
import lab
import psutil

LESSON = "03_rotation_2d.ipynb"
# Exercise 1 of lesson 3: q = (0.5, -1.0) turned by m·theta = 1.5 rad, counter-clockwise
ANSWER = (
    "q = torch.tensor([0.5, -1.0], dtype=f64)\n"
    "m, theta = 3, 0.5\n"
    "a = m * theta\n"
    "q_rot = torch.tensor([q[0] * math.cos(a) - q[1] * math.sin(a),\n"
    "                      q[0] * math.sin(a) + q[1] * math.cos(a)])\n"
    "ex.check_rotated_query(q_rot)"
)
CHECKED = (
    "(1.0329, 0.4280)"  # the checker's "Correct: ..." line shows it (either language)
)

# In the page: put the answer into exercise 1's cell, run that cell, return its output.
_JS_ANSWER = """async (answer) => {
  const panel = window.jupyterapp.shell.currentWidget, nb = panel.content;
  const index = nb.widgets.findIndex(c => c.model.type === 'code' &&
      c.model.sharedModel.getSource().includes('check_rotated_query(q_rot)'));
  if (index < 0) throw new Error('exercise 1 not found');
  nb.widgets[index].model.sharedModel.setSource(answer);
  nb.activeCellIndex = index;
  await window.jupyterapp.commands.execute('notebook:run-cell');
  const t0 = Date.now();
  while (Date.now() - t0 < 30000) {
    const text = nb.widgets[index].node.querySelector('.jp-OutputArea') ?.textContent || '';
    const prompt = nb.widgets[index].node.querySelector('.jp-InputPrompt').textContent;
    if (text && /\\d/.test(prompt)) return text;
    await new Promise(r => setTimeout(r, 100));
  }
  throw new Error('exercise 1 gave no output in 30 s');
}"""

_JS_SAVE = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.context.save();
  return panel.context.model.dirty;
}"""


def lesson_path(hub, name: str) -> str:
    """The lesson as the student sees it (notebooks/...): the Chinese edition for zh."""
    return f"zh/{LESSON}" if hub.students[name] == "zh" else LESSON


def lesson_file(hub, name: str) -> Path:
    return Path("/home", name, "rope-notebooks", "notebooks", lesson_path(hub, name))


def drag(page, selector: str, pixels: float = 60) -> tuple[float, float]:
    """Drag a slider's handle with the mouse, in small steps as a hand does, towards the
    end it is farther from; returns the slider's value before and after."""
    track = page.locator(selector).locator(".noUi-target").first
    handle = page.locator(selector).locator(".noUi-handle").first
    # scroll the handle to the middle of the window until the notebook's layout settles
    # (cells above it may still change height)
    box = None
    for _ in range(20):
        handle.evaluate("h => h.scrollIntoView({block: 'center'})")
        lab.next_frame(page)
        last, box = box, handle.bounding_box()
        if box == last and 0 < box["y"] < page.viewport_size["height"]:
            break
    value = "t => Number(t.noUiSlider.get(true))"
    before = track.evaluate(value)
    lo, hi = track.evaluate(
        "t => [t.noUiSlider.options.range.min, t.noUiSlider.options.range.max]"
    )
    sign = -1 if before - lo > hi - before else 1
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, 7):
        page.mouse.move(x + sign * pixels * step / 6, y)
    page.mouse.up()
    return before, track.evaluate(value)


def test_teacher_and_four_students_log_in_at_once(hub, people):
    teacher = people[hub.teacher]
    # no sign-up page: every roster name and the teacher have a password the hub issued
    assert hub.get("hub/signup")[0] == 404
    t0 = time.monotonic()
    for name in hub.students:  # four logins in flight together: four servers start
        hub.start_log_in(people[name], name)
    for name in hub.students:
        hub.wait_lab(people[name], name)
    print(f"four students logged in and in JupyterLab: {time.monotonic() - t0:.1f} s")
    for name, lang in hub.students.items():
        page = people[name]
        # their own server, on their own subdomain, their own Unix user, their own copy
        # of both editions
        assert page.url.startswith(hub.user_url(name, "lab")), page.url
        home = Path("/home", name)
        assert home.stat().st_uid == hubclass.pwd.getpwnam(name).pw_uid
        assert home.stat().st_mode & 0o777 == 0o700
        copy = home / "rope-notebooks" / "notebooks"
        assert (copy / LESSON).is_file() and (copy / "zh" / LESSON).is_file()
        assert not (copy / "teacher_notes").exists()
        assert (copy / LESSON).stat().st_uid == home.stat().st_uid
        if (
            lang == "zh"
        ):  # the Chinese edition opens, with JupyterLab's menus in Chinese
            assert page.url.split("?")[0].endswith("/lab/tree/notebooks/zh")
            page.wait_for_function(
                "() => document.querySelector('#jp-MainMenu')?.textContent"
                ".includes('文件')"
            )
    # the teacher logs in as admin without starting a server of their own
    teacher.goto(hub.url("hub/login?next=%2Fhub%2Fadmin"))
    teacher.fill("input[name=username]", hub.teacher)
    teacher.fill("input[name=password]", hub.password(hub.teacher))
    with teacher.expect_navigation():
        teacher.click("#login_submit")
    teacher.wait_for_url("**/hub/admin**")


def test_each_student_runs_a_lesson_drags_a_widget_and_saves_an_answer(hub, people):
    students = list(hub.students)
    for name in students:
        hubclass.set_lab_settings(people[name], hub, name)
        people[name].goto(hub.notebook_url(name, lesson_path(hub, name)))
    for name in students:
        lab.finish_opening(people[name])
    t0 = time.monotonic()
    for name in students:  # four kernels run the lesson at the same time
        lab.start_run_all(people[name])
    for name in students:
        page = people[name]
        page.bring_to_front()
        assert lab.wait_run_all(page, timeout_ms=200_000) == "done", lab.errors(page)
        assert lab.errors(page) == {"outputs": [], "kernel": []}
    print(f"four students ran lesson 3 at once: {time.monotonic() - t0:.1f} s")
    for name in students:
        page = people[name]
        page.bring_to_front()
        widgets = [w for w in lab.find_widgets(page) if w["controls"]]
        widget = widgets[0]
        slider = next(c for c in widget["controls"] if c["kind"] == "slider")
        lab.wait_canvas_drawn(page, widget["index"])
        before = lab.signature(page, widget["index"])
        values = drag(page, slider["selector"])
        assert values[0] != values[1], f"{name}: the drag did not move {slider}"
        moved = lab.wait_changed(page, widget["index"], before)
        assert moved["ok"], f"{name}: no redraw after a drag {values}: {moved}"
        output = page.evaluate(_JS_ANSWER, ANSWER)
        assert CHECKED in output, f"{name}: {output}"
        assert page.evaluate(_JS_SAVE) is False
    for name in students:  # saved on disk, in the student's own file
        source = "".join(
            "".join(c["source"])
            for c in hubclass.read_notebook(lesson_file(hub, name))["cells"]
        )
        assert "q_rot = torch.tensor([q[0] * math.cos(a)" in source, name


def test_a_user_not_on_the_roster_is_refused(hub, people):
    page = people[hub.intruder]
    # no password was issued to them, and none they choose works
    assert hub.password(hub.intruder) == "no-password-issued"
    hub.start_log_in(page, hub.intruder, password="class-pw-Rope-2026")
    page.wait_for_load_state()
    assert "/hub/login" in page.url and "/user/" not in page.url
    # no page of the hub lets them in: home sends them back to the login page
    page.goto(hub.url("hub/home"))
    assert "/hub/login" in page.url
    response = page.goto(hub.user_url(hub.intruder, "lab"))
    assert "/hub/login" in page.url or response.status in (403, 404)
    assert hub.intruder not in hub.users()  # no Unix account was made for them


def test_a_student_cannot_reach_another_students_work(hub, people):
    a, b = list(hub.students)[:2]
    page_a, page_b = people[a], people[b]
    b_nb = f"api/contents/notebooks/{LESSON}"
    # B reaches their own notebook (so the refusals below are about who asks)
    page_b.goto(hub.user_url(b, "lab"))
    assert hubclass.fetch(page_b, hub.user_url(b, b_nb))["status"] == 200
    # A, logged in, opening B's notebook in JupyterLab or B's REST API: refused (the
    # hub does not give A a login to B's server)
    for path in (f"lab/tree/notebooks/{LESSON}", b_nb, "api/kernels", "api/sessions"):
        response = page_a.goto(hub.user_url(b, path))
        assert response.status == 403, (path, response.status, page_a.url)
        assert "check_rotated_query" not in page_a.content()
    # (the same request for A's own notebook passes)
    page_a.goto(hub.user_url(a, "lab"))
    own = hubclass.fetch(page_a, hub.user_url(a, f"api/contents/notebooks/{LESSON}"))
    assert own["status"] == 200
    # ... and straight at B's server, past the proxy, without B's token
    port = hubclass.server_port(b)
    for path in (f"user/{b}/{b_nb}", f"user/{b}/api/kernels"):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}") as r:
                status = r.status
        except urllib.error.HTTPError as e:
            status = e.code
        assert status == 403, (path, status)
    # A's own server cannot step out of A's folder
    got = hubclass.fetch(
        page_a, hub.user_url(a, f"api/contents/..%2F..%2F{b}%2Frope-notebooks")
    )
    assert got["status"] in (400, 403, 404), got
    # as Unix users: A can neither read nor change B's files (B can)
    b_file = str(lesson_file(hub, b))
    assert hubclass.as_user(b, "cat", b_file).returncode == 0
    for cmd in (
        ["cat", b_file],
        ["ls", f"/home/{b}"],
        ["touch", f"/home/{b}/rope-notebooks/from-{a}"],
        ["ls", f"/home/{b}/.local/share/jupyter/runtime"],  # B's kernels' sockets
    ):
        done = hubclass.as_user(a, *cmd)
        assert done.returncode != 0 and "Permission denied" in done.stderr, cmd


def test_only_the_teacher_reaches_the_admin_page_and_the_api(hub, people):
    teacher, student = people[hub.teacher], people[list(hub.students)[0]]
    other = list(hub.students)[1]
    teacher.goto(hub.url("hub/admin"))
    got = hubclass.fetch(teacher, hub.url("hub/api/users"))
    assert got["status"] == 200
    assert set(hub.students) <= {u["name"] for u in json.loads(got["body"])}
    assert teacher.goto(hub.url("hub/admin")).status == 200
    assert student.goto(hub.url("hub/admin")).status == 403
    student.goto(hub.url("hub/home"))
    for method, path in (
        ("GET", "hub/api/users"),
        ("GET", f"hub/api/users/{other}"),
        ("DELETE", f"hub/api/users/{other}/server"),
        ("POST", "hub/api/users/newcomer/tokens"),
        ("PATCH", f"hub/api/users/{other}"),
    ):
        got = hubclass.fetch(student, hub.url(path), method)
        assert got["status"] in (403, 404), (method, path, got)
    # the other student's server is still up
    people[other].goto(hub.user_url(other, "lab"))
    status = hubclass.fetch(people[other], hub.user_url(other, "api/status"))["status"]
    assert status == 200


def test_a_killed_kernel_loses_no_saved_work(hub, people):
    name = list(hub.students)[0]
    path = lesson_file(hub, name)
    saved = hashlib.sha256(path.read_bytes()).hexdigest()
    kernels = [
        p
        for p in hubclass.user_processes(name)
        if "ipykernel_launcher" in " ".join(p.cmdline())
    ]
    assert kernels, f"{name} has no kernel running"
    for proc in kernels:
        os.kill(proc.pid, signal.SIGKILL)
    psutil.wait_procs(kernels, timeout=10)
    # the server notices and starts a new kernel; the saved notebook is untouched
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        new = [
            p
            for p in hubclass.user_processes(name)
            if "ipykernel_launcher" in " ".join(p.cmdline()) and p not in kernels
        ]
        if new:
            break
        time.sleep(0.5)
    assert new, "no new kernel within 60 s"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == saved
    # the student's server still serves the saved answer
    page = people[name]
    page.goto(hub.user_url(name, "lab/tree/notebooks"))
    got = hubclass.fetch(page, hub.user_url(name, f"api/contents/notebooks/{LESSON}"))
    assert got["status"] == 200 and "q_rot = torch.tensor([q[0]" in got["body"]


# -- nbgrader on the hub: `make assignment` and `make nbgrader` (hub/grading.py) ---------
# The teacher makes lesson 3's assignment (as root: the course folder goes to the grading
# user) and releases it; two students fetch it from the Assignment List, answer exercise
# 1 in their own kernel (one right, one with the checker's first known mistake: a
# clockwise turn) and submit; the grading user collects and autogrades.
RIGHT = (
    "q_rot = torch.stack([q[0] * math.cos(m * theta) - q[1] * math.sin(m * theta),\n"
    "                     q[0] * math.sin(m * theta) + q[1] * math.cos(m * theta)])"
)
CLOCKWISE = (
    "q_rot = torch.stack([q[0] * math.cos(m * theta) + q[1] * math.sin(m * theta),\n"
    "                     -q[0] * math.sin(m * theta) + q[1] * math.cos(m * theta)])"
)


def test_an_assignment_is_fetched_in_jupyterlab_submitted_and_autograded(hub, people):
    from nbgrader.api import Gradebook

    hubclass.assignment_made(hub)
    assert hubclass.grading(hub, "release_assignment", "lesson03").returncode == 0
    answers = dict(zip(list(hub.students)[:2], [RIGHT, CLOCKWISE]))
    zh = next(n for n, lang in hub.students.items() if lang == "zh")
    for name in [*answers, zh]:
        page = people[name]
        # a workspace of its own: no tabs restored
        page.goto(hub.user_url(name, f"lab/workspaces/a{uuid.uuid4().hex[:12]}"))
        hub.wait_lab(page, name)
        # Fetch in the Assignment List panel, then its link: the notebook lands inside
        # what JupyterLab shows and opens there (in the Chinese JupyterLab too)
        fetched = hubclass.open_from_assignment_list(page)
        assert fetched == "lesson03/03_rotation_2d.ipynb", fetched
        if name == zh:
            continue
        answer = answers[name]
        path = f"/home/{name}/rope-notebooks/{fetched}"
        out = hubclass.run_in_kernel(
            page, hubclass.ANSWER_FILE.format(path=path, answer=answer)
        )
        assert f"answered {hubclass.pwd.getpwnam(name).pw_uid}" in out, out
        submitted = hubclass.fetch(
            page,
            hub.user_url(
                name,
                "assignments/submit?course_id=rope-notebooks&assignment_id=lesson03",
            ),
            "POST",
        )
        assert submitted["status"] == 200 and json.loads(submitted["body"])["success"]
    for step in ("collect", "autograde", "generate_feedback"):
        done = hubclass.grading(hub, step, "lesson03")
        assert done.returncode == 0, (step, done.stdout[-3000:], done.stderr[-3000:])
    right, wrong = answers
    with Gradebook(
        f"sqlite:///{hubclass.course_dir(hub) / 'gradebook.db'}"
    ) as gradebook:
        scores = {n: gradebook.find_submission("lesson03", n).score for n in answers}
    # exercise 1 is worth one point; the other exercises were left unanswered
    assert scores == {right: 1, wrong: 0}, scores
    feedback = (
        hubclass.course_dir(hub)
        / "feedback"
        / wrong
        / "lesson03"
        / "03_rotation_2d.html"
    )
    assert "clockwise" in feedback.read_text()


def test_the_teacher_stops_every_server_and_the_hub_stops_cleanly(hub, people):
    teacher = people[hub.teacher]
    teacher.goto(hub.url("hub/admin"))
    for name in hub.students:
        got = hubclass.fetch(teacher, hub.url(f"hub/api/users/{name}/server"), "DELETE")
        assert got["status"] in (202, 204, 400), (name, got)  # 400: was not running
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(
        hubclass.user_processes(n) for n in hub.students
    ):
        time.sleep(0.5)
    left = {n: [p.pid for p in hubclass.user_processes(n)] for n in hub.students}
    assert not any(left.values()), left
    stopped = hub.stop()
    print(f"the hub stopped in {stopped['seconds']:.1f} s")
    assert stopped["returncode"] is not None, "the hub did not stop in 45 s"
    assert stopped["left"] == [], stopped
