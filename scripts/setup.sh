#!/usr/bin/env bash
# Installs the Debian 12 packages Pathfinder needs, if any is missing. Idempotent.
set -euo pipefail
packages=(build-essential clang cmake ninja-build libyaml-cpp-dev libeigen3-dev libnlopt-cxx-dev
          libtbb-dev libspdlog-dev catch2 libcli11-dev libbenchmark-dev nlohmann-json3-dev
          gnuplot-nox python3 python3-dev pybind11-dev python3-pytest python3-pandas chromium
          libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm by command: a machine may have them from elsewhere (NodeSource's nodejs
# bundles npm, and Debian's npm package conflicts with it).
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The browser test's driver, pinned by tests/browser/package-lock.json (npm registry; it uses
# Debian's chromium and downloads no browser).
browser="$(cd "$(dirname "$0")/../tests/browser" && pwd)"
if [ ! -f "$browser/node_modules/playwright-core/package.json" ]; then
  echo "setup: installing playwright-core into tests/browser/node_modules"
  (cd "$browser" && npm ci --no-audit --no-fund --loglevel=error)
fi
