"""nbgrader in the course's JupyterLab (JUPYTER_CONFIG_PATH=jupyter-config, as make lab
and the class hub start it): the course and the exchange `make assignment` uses by
default, so that a student's Assignment List (menu Nbgrader) finds what the teacher
released. The teacher's course folder has its own nbgrader_config.py (make assignment).
"""

import os

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "rope-notebooks"
# the class hub names its exchange (ROPE_NBGRADER_EXCHANGE); make lab uses the default
c.Exchange.root = os.environ.get("ROPE_NBGRADER_EXCHANGE", "/srv/nbgrader/exchange")
