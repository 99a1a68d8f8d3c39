#!/usr/bin/env bash
# Installs BUILD (default build/) into BUILD/install, builds
# examples/host_app against the installed package alone (find_package), and
# runs it on the bundled RFC model. ctest runs it as HostApp.InstalledPackage.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
prefix=$build/install
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S examples/host_app -B "$build/host_app" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$build/host_app" >/dev/null
"$build/host_app/host_app" "$build/examples/rfc_model.hsg"
# The pkg-config file names the same library and headers.
PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs --cflags hetsched
