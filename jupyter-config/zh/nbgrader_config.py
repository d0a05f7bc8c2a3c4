# The Chinese edition's JupyterLab (jupyter-config/zh): the same course and exchange.
load_subconfig("../nbgrader_config.py")  # noqa: F821
