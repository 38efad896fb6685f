#!/usr/bin/env bash
# Installs the Debian 12 packages Pathfinder needs, if any is missing. Idempotent.
set -euo pipefail
packages=(build-essential cmake ninja-build libyaml-cpp-dev libeigen3-dev libnlopt-cxx-dev
          libtbb-dev libspdlog-dev catch2 libcli11-dev libbenchmark-dev nlohmann-json3-dev
          gnuplot-nox python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
