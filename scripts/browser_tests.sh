#!/bin/sh
# cmc's pages in a real browser: the browser tests (browser-tests/, not a
# default member of the workspace) in headless Chromium. Installs Chromium
# and a font for it when missing, as the other gates install their tools
# (.ci/run does it too).
#
#   scripts/browser_tests.sh
set -eu
cd "$(dirname "$0")/.."
if [ -z "${CMC_CHROMIUM:-}" ] && [ ! -x /usr/lib/chromium/chromium ]; then
    echo "browser_tests: installing chromium"
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-liberation
fi
cargo test -p cmc-browser-tests
