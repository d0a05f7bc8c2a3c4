"""The class hub attacked as a curious student would (README, "What keeps students apart").

Each test is one row of the hub's review (D1-D18): the attack a student made on the hub
as it was, tried again here from a student's own kernel, files or browser, and refused.
Two students, `a` (the attacker) and `b`, and the teacher share one hub of this module's
own, with small limits (1 GiB, 128 processes) so that the resource attacks are quick.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import hubclass
import psutil
import pytest

sys.path.insert(0, str(hubclass.REPO / "hub"))
import accounts  # noqa: E402

LIMITS = {"ROPE_HUB_MEMORY_GB": "1", "ROPE_HUB_PROCESSES": "128"}


@pytest.fixture(scope="module")
def hub():
    with hubclass.ClassHub({"a": "en", "b": "en"}, env=LIMITS) as hub:
        yield hub


@pytest.fixture(scope="module")
def pages(hub, people):
    """a, b and the teacher logged in: {'a': page, 'b': page, 'teacher': page}."""
    a, b = hub.students
    for name in (a, b):
        hub.start_log_in(people[name], name)
    for name in (a, b):
        hub.wait_lab(people[name], name)
    teacher = people[hub.teacher]
    hub.start_log_in(teacher, hub.teacher)
    teacher.wait_for_url("**/hub/**")
    return {"a": people[a], "b": people[b], "teacher": teacher}


def names(hub) -> tuple[str, str]:
    a, b = hub.students
    return a, b


def run(page, code: str, timeout_s: float = 90) -> str:
    """Run code in the student's kernel. A kernel that JupyterLab reports shut down
    before the code ran (seen once on a loaded machine, just after a new page started
    it) is replaced by a new one, once, and said so."""
    try:
        return hubclass.run_in_kernel(page, code, timeout_s)
    except Exception as e:
        if "Canceled future" not in str(e):
            raise
        print(f"a kernel was shut down before the code ran ({e}); a new one runs it")
        page.evaluate("() => { window._ropeKernel = undefined; }")
        return hubclass.run_in_kernel(page, code, timeout_s)


def restart_server(hub, page_teacher, name: str) -> None:
    """The teacher stops and starts `name`'s server (as Stop / Start at /hub/admin);
    relogin() then waits for it."""
    page_teacher.goto(hub.url("hub/admin"))
    url = hub.url(f"hub/api/users/{name}/server")
    assert hubclass.fetch(page_teacher, url, "DELETE")["status"] in (202, 204)
    deadline = time.monotonic() + 60
    while hubclass.user_processes(name) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert hubclass.fetch(page_teacher, url, "POST")["status"] in (201, 202)


def relogin(hub, page, name: str) -> None:
    """Back to her JupyterLab, starting her server if it is stopped (as her hub home's
    Start button does)."""
    page.goto(hub.url("hub/spawn"))
    hub.wait_lab(page, name)


# -- D1: the course is copied as the student ------------------------------------------
def test_d1_a_symlink_she_plants_leads_no_copy_out_of_her_home(hub, pages):
    a, _ = names(hub)
    # a folder only root may write, and her copy's images/ replaced by a link to it:
    # a copy made as root would fill it with the course's images at her next start
    target = Path(f"/var/tmp/rope-attack-{hub.tag}")
    target.mkdir(mode=0o700)
    try:
        images = Path(f"/home/{a}/rope-notebooks/images")
        run(pages["a"], f"import os, shutil; shutil.rmtree({str(images)!r}); "
                        f"os.symlink({str(target)!r}, {str(images)!r})")  # fmt: skip
        assert images.is_symlink()
        restart_server(hub, pages["teacher"], a)  # the start copies missing files
        relogin(hub, pages["a"], a)  # and her server starts all the same
        assert list(target.iterdir()) == [], "the course was copied through her link"
        assert images.is_symlink()  # her own folder left as she made it
    finally:
        shutil.rmtree(target)


# -- D2, D3, D7, D16, D17: grading ------------------------------------------------------
PROBE = """
import json, os, socket, subprocess
probe = {{"uid": os.getuid(), "limits": open("/proc/self/limits").read()}}
for key, attempt in (
    ("gradebook", lambda: open(os.path.join({course!r}, "gradebook.db"), "rb").read(1)),
    ("network", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2)),
    ("homes", lambda: os.listdir("/home")),
    ("own_folder", lambda: open("planted.ipynb", "w").write("x")),
):
    try:
        attempt()
        probe[key] = "reached"
    except Exception as e:
        probe[key] = type(e).__name__
subprocess.Popen(["setsid", "sleep", "7777"])  # left behind on purpose
print("PROBE" + json.dumps(probe))
"""


def test_d2_d3_d7_grading_keeps_each_submission_and_the_gradebook_safe(hub, pages):
    a, b = names(hub)
    hubclass.assignment_made(hub)
    course = hubclass.course_dir(hub)
    # D16: the exchange's course folder exists before any release, is the grader's, and
    # the exchange's sticky bit keeps a student from moving it away
    top, course_folder = hub.exchange, hub.exchange / "rope-notebooks"
    assert top.stat().st_uid == 0 and top.stat().st_mode & 0o7777 == 0o1777
    assert course_folder.stat().st_uid == pwd.getpwnam(hub.grader).pw_uid
    for cmd in (
        ["mv", str(course_folder), str(top / "mine")],
        ["mkdir", str(course_folder / "outbound")],
    ):
        done = hubclass.as_user(a, *cmd)
        assert done.returncode != 0, (cmd, done)
    assert hubclass.grading(hub, "release_assignment", "lesson03").returncode == 0
    # D2: before and after the release, nothing of the course folder reaches a student
    for path in (
        course / "source/lesson03/03_rotation_2d.ipynb",
        course / "gradebook.db",
    ):
        done = hubclass.as_user(a, "cat", str(path))
        assert done.returncode != 0 and "Permission denied" in done.stderr, path
    assert course.stat().st_mode & 0o777 == 0o700
    # b answers right; a answers right too, with a probe in her answer
    answers = {
        b: "q_rot = rope_lib.rotation_2d(m * theta) @ q  # b's own",
        a: PROBE.format(course=str(course), port=hub.port)
        + "q_rot = rope_lib.rotation_2d(m * theta) @ q",
    }
    page_of = {a: pages["a"], b: pages["b"]}
    for name in (b, a):
        fetched = hubclass.fetch_assignment(hub, page_of[name], name)
        path = f"/home/{name}/rope-notebooks/{fetched}"
        out = run(
            page_of[name], hubclass.ANSWER_FILE.format(path=path, answer=answers[name])
        )
        assert "answered" in out, out
        query = "course_id=rope-notebooks&assignment_id=lesson03"
        url = hub.user_url(name, f"assignments/submit?{query}")
        assert hubclass.fetch(page_of[name], url, "POST")["status"] == 200
    # D7: a submits an empty copy in b's name, after b's own
    forged = run(
        pages["a"],
        "import subprocess, sys\n"
        "r = subprocess.run([sys.executable, '-m', 'nbgrader', 'submit', 'lesson03',"
        f" '--course', 'rope-notebooks', '--student', {b!r}],"
        " capture_output=True, text=True)\n"
        "print('forged', r.returncode, r.stderr[-300:])",
    )
    assert "forged 0" in forged, (
        forged
    )  # nbgrader took it: the exchange's job to refuse
    # a submits again and puts links in that submission, her own folder: one to the
    # gradebook, and her notebook swapped for a link to the solutions
    url = hub.user_url(
        a, "assignments/submit?course_id=rope-notebooks&assignment_id=lesson03"
    )
    assert hubclass.fetch(pages["a"], url, "POST")["status"] == 200
    inbound = hub.exchange / "rope-notebooks" / "inbound"
    newest = max(inbound.glob(f"{a}+lesson03+*"), key=lambda p: p.name.split("+")[2])
    solutions = course / "source" / "lesson03" / "03_rotation_2d.ipynb"
    for cmd in (
        ["ln", "-s", str(course / "gradebook.db"), str(newest / "gb.db")],
        ["ln", "-sf", str(solutions), str(newest / "03_rotation_2d.ipynb")],
    ):
        done = hubclass.as_user(a, *cmd)
        assert done.returncode == 0, (cmd, done.stderr)
    for step in ("collect", "autograde", "generate_feedback", "export"):
        done = hubclass.grading(hub, step, *(["lesson03"] if step != "export" else []))
        assert done.returncode == 0, (step, done.stdout[-2000:], done.stderr[-2000:])
    collected = (
        course / "submitted" / b / "lesson03" / "03_rotation_2d.ipynb"
    ).read_text()
    assert "b's own" in collected, "b's submission was replaced by a's forgery"
    # the linked submission was refused: her first one was collected, with no link
    mine = course / "submitted" / a / "lesson03"
    assert not [p for p in mine.rglob("*") if p.is_symlink()], list(mine.iterdir())
    assert "BEGIN SOLUTION" not in (mine / "03_rotation_2d.ipynb").read_text()
    assert "PROBE" in (mine / "03_rotation_2d.ipynb").read_text()
    # D3: a's code ran as the grading user, with neither the gradebook nor a network
    graded = hubclass.read_notebook(
        course / "autograded" / a / "lesson03" / "03_rotation_2d.ipynb"
    )
    printed = "".join(
        "".join(out.get("text", ""))
        for cell in graded["cells"]
        for out in cell.get("outputs", [])
    )
    probe = json.loads(printed.split("PROBE", 1)[1].splitlines()[0])
    grader = pwd.getpwnam(hub.grader).pw_uid
    assert probe["uid"] == grader != 0, probe
    assert probe["gradebook"] != "reached" and probe["network"] != "reached", probe
    assert probe["homes"] == "FileNotFoundError", probe  # no student's home in sight
    # the folder nbgrader writes the graded notebook into is read-only to her code
    assert probe["own_folder"] != "reached", probe
    # the run's limits held her code, and nothing she started outlived the run
    assert "Max processes             256" in probe["limits"], probe["limits"]
    assert not hubclass.user_processes(hub.grader)
    # D2 after grading: grades, others' submissions and feedback stay closed to a
    for path in (
        course / "grades.csv",
        course / "submitted" / b / "lesson03" / "03_rotation_2d.ipynb",
        course / "feedback" / b / "lesson03" / "03_rotation_2d.html",
    ):
        assert path.exists(), path
        done = hubclass.as_user(a, "cat", str(path))
        assert done.returncode != 0 and "Permission denied" in done.stderr, path


# -- D4, D15: another student's kernel, processes and /tmp --------------------------------
EAVESDROP = """
import zmq, time
ports = []
for line in open("/proc/net/tcp").read().splitlines()[1:]:
    f = line.split()
    if f[3] == "0A" and int(f[7]) == {uid}:  # listening, b's uid
        ports.append(int(f[1].split(":")[1], 16))
ctx = zmq.Context()
subs = []
for port in ports:
    s = ctx.socket(zmq.SUB)
    s.setsockopt(zmq.SUBSCRIBE, b"")
    s.connect(f"tcp://127.0.0.1:{{port}}")
    subs.append(s)
time.sleep({seconds})
heard = 0
for s in subs:
    while s.poll(0):
        s.recv_multipart()
        heard += 1
print("ports", len(ports), "heard", heard)
"""


def test_d4_no_student_can_listen_to_another_students_kernel(hub, pages):
    a, b = names(hub)
    relogin(hub, pages["b"], b)
    run(pages["b"], "x = 1")  # b has a kernel
    runtime = Path(f"/home/{b}/.local/share/jupyter/runtime")
    connections = [json.loads(f.read_text()) for f in runtime.glob("kernel-*.json")]
    assert connections
    # it talks to b's server over Unix sockets in b's home, not TCP ports (its one TCP
    # port is ipykernel's inbox for a forked child's output: write-only, each message
    # signed with a 128-bit secret)
    assert {c["transport"] for c in connections} == {"ipc"}, connections
    # a listens on every port of b's while b's kernel prints a secret
    uid = pwd.getpwnam(b).pw_uid
    pages["a"].evaluate(
        "([code, ms]) => { window._eavesdrop = ("
        + hubclass.JS_RUN
        + ")([code, ms]); }",
        [EAVESDROP.format(uid=uid, seconds=4), 60_000],
    )
    time.sleep(1.5)
    run(pages["b"], "for _ in range(20): print('b secret answer')")
    heard = pages["a"].evaluate("() => window._eavesdrop")
    ports = int(heard.split("ports")[1].split()[0])
    assert ports >= 1 and "heard 0" in heard, heard  # it listened, and heard nothing


def test_d15_her_processes_and_tmp_are_her_own(hub, pages):
    a, b = names(hub)
    seen = run(pages["a"], "import os\n"
               "pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
               "print(len(pids), sorted({os.stat(f'/proc/{p}').st_uid for p in pids}))\n"
               "open('/tmp/a-was-here', 'w').write('x')")  # fmt: skip
    count, uids = seen.split(" ", 1)
    # her server, her kernel and the sandbox's own init (root's, uid 0): no one else's
    assert uids.strip() == f"[0, {pwd.getpwnam(a).pw_uid}]" and int(count) < 20, seen
    other = run(pages["b"], "import os; print(os.path.exists('/tmp/a-was-here'))")
    assert other.strip() == "False"
    assert not Path("/tmp/a-was-here").exists()


# -- D5, D6: pages on the hub's origin ---------------------------------------------------
# What a page on a's address can do in another person's browser: read b's notebooks, run
# code in b's kernel, or act on the hub as that person. The page is served by the test in
# place of a's server (the worst case: a serves whatever she wants at her address).
EVIL_PAGE = """<!doctype html><title>evil</title><script>
window.result = (async () => {
  const out = {};
  for (const [key, url, options] of [
    ["b_contents", "%(b_api)s", {credentials: "include"}],
    ["hub_user", "%(hub_api)s", {credentials: "include"}],
    ["hub_patch", "%(hub_patch)s", {method: "PATCH", credentials: "include",
      body: JSON.stringify({admin: true}), headers: {"Content-Type": "application/json"}}],
  ]) {
    try { const r = await fetch(url, options); out[key] = r.status + " " +
            (await r.text()).slice(0, 80); }
    catch (e) { out[key] = "blocked: " + e.name; }
  }
  const w = window.open("%(b_lab)s");
  await new Promise(r => setTimeout(r, 4000));
  try { out.popup = "read: " + w.document.cookie.length + " " + w.location.href; }
  catch (e) { out.popup = "blocked: " + e.name; }
  w.close();
  return out;
})();
</script>"""


def test_d5_a_page_at_her_address_cannot_reach_another_students_server(hub, pages):
    a, b = names(hub)
    page = pages["b"]
    relogin(hub, page, b)
    evil = hub.user_url(a, "files/evil.html")
    html = EVIL_PAGE % {
        "b_api": hub.user_url(b, "api/contents/notebooks"),
        "b_lab": hub.user_url(b, "lab"),
        "hub_api": hub.url("hub/api/user"),
        "hub_patch": hub.url(f"hub/api/users/{b}"),
    }
    page.route(evil, lambda route: route.fulfill(body=html, content_type="text/html"))
    try:
        page.goto(evil)
        result = page.evaluate("window.result")
    finally:
        page.unroute(evil)
    assert all(v.startswith("blocked") for v in result.values()), result


def test_d5_her_own_server_configuration_is_ignored(hub, pages):
    a, _ = names(hub)
    marker = Path(f"/home/{a}/config-was-read")
    run(pages["a"], "import os, pathlib\n"
        "d = pathlib.Path.home() / '.jupyter'; d.mkdir(exist_ok=True)\n"
        f"(d / 'jupyter_server_config.py').write_text('open({str(marker)!r}, \"w\")')")  # fmt: skip
    restart_server(hub, pages["teacher"], a)
    relogin(hub, pages["a"], a)
    assert not marker.exists(), "her ~/.jupyter configuration ran in her server"


SCRIPT_NOTEBOOK = """
import nbformat, pathlib
from nbformat.sign import NotebookNotary
html = '''<div id="rope-attack">waiting</div><script>
(async () => {
  const el = document.getElementById("rope-attack");
  el.dataset.ran = "1";
  try {
    const r = await fetch("%(hub_patch)s", {method: "PATCH", credentials: "include",
      headers: {"Content-Type": "application/json"}, body: JSON.stringify({admin: true})});
    el.dataset.result = "status " + r.status;
  } catch (e) { el.dataset.result = "blocked: " + e.name; }
})();
</script>'''
cell = nbformat.v4.new_code_cell("help me", execution_count=1, outputs=[
    nbformat.v4.new_output("display_data", data={"text/html": html})])
nb = nbformat.v4.new_notebook(cells=[cell])
NotebookNotary().sign(nb)
path = pathlib.Path.home() / "rope-notebooks" / "help-me.ipynb"
nbformat.write(nb, path)
print("trusted", NotebookNotary().check_signature(nbformat.read(path, 4)))
"""


def test_d6_the_teacher_opens_her_notebook_and_its_script_gains_nothing(hub, pages):
    a, _ = names(hub)
    patch = hub.url(f"hub/api/users/{a}")
    out = run(pages["a"], SCRIPT_NOTEBOOK % {"hub_patch": patch})
    assert "trusted True" in out, out
    teacher = pages["teacher"]
    teacher.goto(hub.user_url(a, "lab/tree/help-me.ipynb"))
    if "/hub/api/oauth2/authorize" in teacher.url:  # JupyterHub asks the teacher first
        teacher.click("input[type=submit], button[type=submit]")
    node = teacher.locator("#rope-attack")
    node.wait_for(state="attached", timeout=120_000)
    teacher.wait_for_function(
        "() => document.querySelector('#rope-attack')?.dataset.result", timeout=60_000
    )
    assert node.get_attribute("data-ran") == "1"  # the script did run, as the teacher
    teacher.goto(hub.url("hub/admin"))
    user = json.loads(hubclass.fetch(teacher, hub.url(f"hub/api/users/{a}"))["body"])
    assert user["admin"] is False, node.get_attribute("data-result")


# -- D8, D14: her share of the machine -----------------------------------------------------
FORK_BOMB = """
import subprocess, sys
bomb = '''
import os, signal, time
os.setpgrp()
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            time.sleep(20)
            os._exit(0)
        n += 1
except OSError:
    pass
print(n, flush=True)
os.killpg(0, signal.SIGKILL)
'''
r = subprocess.run([sys.executable, "-c", bomb], capture_output=True, text=True)
print("forked", r.stdout.strip())
"""
MEMORY_HOG = """
import subprocess, sys
r = subprocess.run([sys.executable, "-c", "b = bytearray(3 << 30); print('held')"],
                   capture_output=True, text=True)
print("hog", r.returncode, r.stdout.strip())
"""


def test_d8_a_fork_bomb_and_a_memory_hog_stay_inside_her_share(hub, pages):
    a, b = names(hub)
    relogin(hub, pages["a"], a)
    relogin(hub, pages["b"], b)
    tasks = Path("/sys/fs/cgroup/pids", hub.group, a, "pids.current")
    if tasks.exists():  # cgroup v1 here; v2 machines have no such file
        print(f"{a}'s server and kernel: {tasks.read_text().strip()} tasks")
    forked = run(pages["a"], FORK_BOMB, timeout_s=120)
    count = int(forked.split("forked")[1].split()[0])
    print(f"the fork bomb stopped at {count} processes")
    assert count < int(LIMITS["ROPE_HUB_PROCESSES"]), forked
    hog = run(pages["a"], MEMORY_HOG, timeout_s=120)
    assert "held" not in hog and "hog -9" in hog, hog  # killed by her memory limit
    # her kernel, the hub and b are all still there
    assert run(pages["a"], "print(6 * 7)").strip() == "42"
    assert hub.get("hub/api/")[0] == 200
    assert run(pages["b"], "print('b fine')").strip() == "b fine"


def test_d14_a_process_she_detaches_ends_with_her_server(hub, pages):
    a, _ = names(hub)
    run(pages["a"], "import subprocess; subprocess.Popen(['setsid', 'sleep', '7777'])")
    assert any("7777" in " ".join(p.cmdline()) for p in hubclass.user_processes(a))
    teacher = pages["teacher"]
    teacher.goto(hub.url("hub/admin"))
    got = hubclass.fetch(teacher, hub.url(f"hub/api/users/{a}/server"), "DELETE")
    assert got["status"] in (202, 204)
    deadline = time.monotonic() + 60
    while hubclass.user_processes(a) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert not hubclass.user_processes(a)
    relogin(hub, pages["a"], a)


# -- D10, D11: names and passwords -----------------------------------------------------------
def test_d10_nobody_can_take_a_roster_name_first(hub, people):
    page = people[hub.intruder]
    response = page.goto(hub.url("hub/signup"))
    assert response.status == 404
    assert hub.get("hub/signup")[0] == 404
    # b's name with a password the intruder chose: refused
    _, b = names(hub)
    hub.start_log_in(page, b, password="my-own-choice-2026")
    page.wait_for_load_state()
    assert "/user/" not in page.url


FLOOD = """([name, n]) => {
  const xsrf = decodeURIComponent((document.cookie.match(/_xsrf=([^;]*)/) || [])[1] || '');
  window._flood = Promise.all([...Array(n)].map((_, k) => fetch('/hub/login', {
    method: 'POST',
    body: new URLSearchParams({username: name, password: 'wrong-' + k, _xsrf: xsrf}),
  }).then(r => r.status)));
}"""


def test_d11_wrong_passwords_cannot_lock_the_teacher_out(hub, people):
    page = people[hub.intruder]
    for k in range(7):
        hub.start_log_in(page, hub.teacher, password=f"guess-{k}-wrong")
        page.wait_for_load_state()
        assert "/hub/login" in page.url
    # and while 20 more wrong tries are in flight, the teacher logs in
    page.goto(hub.url("hub/login"))
    page.evaluate(FLOOD, [hub.teacher, 20])
    context = page.context.browser.new_context()
    try:
        own = context.new_page()
        t0 = time.monotonic()
        hub.start_log_in(own, hub.teacher)
        own.wait_for_url(lambda url: "/hub/login" not in url, timeout=60_000)
        seconds = time.monotonic() - t0
    finally:
        context.close()
    statuses = page.evaluate("() => window._flood")
    print(f"the teacher got in {seconds:.1f} s, 7 wrong tries before and 20 in flight")
    assert len(statuses) == 20, statuses  # the flood was answered, all of it
    # each wrong try waits 2 s: had hers queued behind the 20 (as it did: 48 s), it
    # would have waited 40 s at least; what is left is the hub's bcrypt checks
    assert seconds < 20 * accounts.TEACHER_WAIT, seconds


def test_d11_a_locked_student_is_let_in_by_the_teacher(hub, people, pages):
    _, b = names(hub)
    page = people[hub.intruder]
    for k in range(6):
        hub.start_log_in(page, b, password=f"guess-{k}-wrong")
        page.wait_for_load_state()
    context = page.context.browser.new_context()
    try:
        own = context.new_page()
        hub.start_log_in(own, b)  # her right password: locked for now
        own.wait_for_load_state()
        assert "/user/" not in own.url
        teacher = pages["teacher"]  # the teacher gives her a new one, which unlocks
        teacher.goto(hub.url(f"hub/change-password/{b}"))
        teacher.fill("input[name=new_password]", "fresh-start-7391")
        teacher.fill("input[name=new_password_confirmation]", "fresh-start-7391")
        teacher.click("input[type=submit], button[type=submit]")
        teacher.wait_for_load_state()
        hub.start_log_in(own, b, password="fresh-start-7391")
        own.wait_for_url(f"**/user/{b}/**", timeout=120_000)
    finally:
        context.close()


# -- D12, D13: the machine's own accounts and folders --------------------------------------
def acl_groups(path: str) -> set[int]:
    """The groups that a POSIX ACL on `path` names (its system.posix_acl_access xattr:
    a 4-byte header, then 8-byte entries: tag, permissions, id; tag 8 is a group)."""
    try:
        raw = os.getxattr(path, "system.posix_acl_access")
    except OSError:  # no ACL at all
        return set()
    entries = [struct.unpack("<HHI", raw[k : k + 8]) for k in range(4, len(raw), 8)]
    return {ident for tag, _perm, ident in entries if tag == 8}


def test_d12_the_hub_opens_nothing_under_root(hub, pages):
    a, _ = names(hub)
    assert acl_groups("/root").isdisjoint({grp.getgrnam(hub.group).gr_gid})
    done = hubclass.as_user(a, "cat", "/root/.profile")
    assert done.returncode != 0 and "Permission denied" in done.stderr


def test_d13_a_system_account_approved_by_the_teacher_gets_no_server(hub, pages):
    name = f"svc-{hub.tag}"
    home = Path(f"/var/tmp/{name}-home")
    home.mkdir(mode=0o755)
    subprocess.run(["useradd", "--system", "--home-dir", str(home), name], check=True)
    try:
        teacher = pages["teacher"]
        teacher.goto(hub.url("hub/admin"))
        made = hubclass.fetch(teacher, hub.url(f"hub/api/users/{name}"), "POST")
        assert made["status"] == 201, made
        started = hubclass.fetch(
            teacher, hub.url(f"hub/api/users/{name}/server"), "POST"
        )
        deadline = time.monotonic() + 30
        while (
            time.monotonic() < deadline
        ):  # the spawn fails (at once or in the background)
            user = json.loads(
                hubclass.fetch(teacher, hub.url(f"hub/api/users/{name}"))["body"]
            )
            if not user["pending"]:
                break
            time.sleep(0.5)
        assert not user["servers"], (started, user)
        assert home.stat().st_mode & 0o777 == 0o755  # never chmodded
        assert not hubclass.user_processes(name)
    finally:
        subprocess.run(["userdel", name], capture_output=True)
        home.rmdir()


# -- D18: a restart of the hub ----------------------------------------------------------------
def test_d18_a_restart_of_the_hub_keeps_every_kernel(hub, pages):
    a, _ = names(hub)
    relogin(hub, pages["a"], a)
    run(pages["a"], "kept = 'still here'")
    kernel = pages["a"].evaluate("() => window._ropeKernel.id")
    kernels = {
        p.pid
        for p in hubclass.user_processes(a)
        if "ipykernel" in " ".join(p.cmdline())
    }
    assert kernels
    stopped = hub.stop()
    assert stopped["returncode"] is not None and stopped["left"] == [], stopped
    hub.start()
    assert kernels <= {p.pid for p in psutil.process_iter() if p.is_running()}
    relogin(hub, pages["a"], a)
    pages["a"].evaluate(  # the page is new: connect it to the kernel of before
        "id => { window._ropeKernel = window.jupyterapp.serviceManager.kernels"
        ".connectTo({model: {id, name: 'python3'}}); }",
        kernel,
    )
    assert "still here" in run(pages["a"], "print(kept)")
    assert os.path.isdir(f"/home/{a}")
