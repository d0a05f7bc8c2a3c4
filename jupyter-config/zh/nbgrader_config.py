# The Chinese edition's JupyterLab (jupyter-config/zh): the same nbgrader course and exchange.
load_subconfig("../nbgrader_config.py")  # noqa: F821
