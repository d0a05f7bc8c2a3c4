# The two commands (README): `make lab` and `make test`. Both create .venv first when it is
# missing or older than pyproject.toml / constraints.txt.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# JupyterLab refuses to run as root unless told to; CI and these machines run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: lab test test-lib test-nbval test-browser execute experiments images benchmark benchmark-browser clean

$(STAMP): pyproject.toml constraints.txt
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $(STAMP)

# jupyter-config/ holds the course's JupyterLab defaults (no "official Jupyter news" prompt);
# a user's own settings still win.
lab: $(STAMP)
	JUPYTER_CONFIG_PATH=$(CURDIR)/jupyter-config $(BIN)/jupyter lab $(ROOT_FLAG) --notebook-dir=notebooks

# Everything: library, reference and property tests, then every notebook under nbval.
# The browser tests run on their own afterwards: they share one JupyterLab and open each lesson
# once, which two xdist workers would each do again.
test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile tests notebooks --ignore=tests/browser --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg
	$(BIN)/python -m pytest tests/browser

# Parts, for teachers and maintainers. The browser tests need Debian's chromium
# (apt-get install -y chromium); without it they are reported as skipped, with that hint.
test-lib: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile tests --ignore=tests/browser

test-browser: $(STAMP)
	$(BIN)/python -m pytest tests/browser

test-nbval: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile notebooks --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg

# Re-execute every notebook in place, in order, each from a fresh kernel (outputs are committed).
execute: $(STAMP)
	$(BIN)/python scripts/execute_notebooks.py

# The extrapolation lab (lesson 8): train every scheme, evaluate past the training length, and
# write notebooks/lab_results/ (results.json + figures), which the lesson reads. About 10 minutes.
experiments: $(STAMP)
	$(BIN)/python -m rope_lib.lab --seed 0 --out notebooks/lab_results

images: $(STAMP)
	$(BIN)/python scripts/make_images.py

benchmark: $(STAMP)
	$(BIN)/python benchmarks/bench_rope.py
	$(BIN)/python benchmarks/bench_widgets.py
	$(BIN)/python benchmarks/bench_notebooks.py
	$(BIN)/python benchmarks/bench_lab.py

benchmark-browser: $(STAMP)
	$(BIN)/python benchmarks/bench_browser.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
