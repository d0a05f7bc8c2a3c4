"""nbgrader in the course's JupyterLab (JUPYTER_CONFIG_PATH=jupyter-config, as make lab
and the class hub start it): the course and the exchange `make assignment` uses by
default, so that a student's Assignment List (menu Nbgrader) finds what the teacher
released. The teacher's course folder has its own nbgrader_config.py (make assignment).
"""

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "rope-notebooks"
c.Exchange.root = "/srv/nbgrader/exchange"
