#!/usr/bin/env bash
# The status-page browser test and `npm run bench -- page` load pages in headless Chromium (Debian's
# chromium package). Install it when missing and we are root (CI, the project's machines); otherwise
# say how. A missing browser fails the run: the page is never left untested.
set -euo pipefail
if command -v chromium >/dev/null; then exit 0; fi
if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
  echo "ensure-chromium: no chromium on PATH; install Debian's chromium package (apt-get install chromium)" >&2
  exit 1
fi
echo "ensure-chromium: installing Debian's chromium package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null || { echo "ensure-chromium: chromium installed but not on PATH" >&2; exit 1; }
