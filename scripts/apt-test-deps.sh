#!/usr/bin/env bash
# Debian packages some tests use (idempotent; skipped where they are installed or apt is not usable):
# chromium + chromium-driver (the web app's browser tests), espeak-ng + sox (the speech tests),
# docker-compose (test/test_docker.py validates docker/compose.yaml with `docker-compose config`).
# Tests that need them skip, saying why, where they are missing.
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
command -v espeak-ng >/dev/null || missing+=(espeak-ng)
command -v sox >/dev/null || missing+=(sox)
command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 || missing+=(docker-compose)
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && { command -v sudo >/dev/null && sudo -n true 2>/dev/null && SUDO="sudo -n" || { echo "apt-test-deps: not root: skipping ${missing[*]} (their tests will skip)"; exit 0; }; }
command -v apt-get >/dev/null || { echo "apt-test-deps: no apt-get: skipping ${missing[*]}"; exit 0; }
$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" \
  || echo "apt-test-deps: could not install ${missing[*]} (their tests will skip)"
