#!/usr/bin/env bash
# Installs BUILD (default build/) into BUILD/install, builds
# examples/host_app against the installed package alone (find_package) twice,
# against libhetsched.so and against libhetsched.a, and runs both on the
# bundled RFC model. ctest runs it as HostApp.BuildsAgainstTheInstalledPackageAndRuns.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
prefix=$build/install
cmake --install "$build" --prefix "$prefix" >/dev/null
for variant in shared static; do
  dir=$build/host_app_$variant
  cmake -S examples/host_app -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DHOST_APP_STATIC=$([ $variant = static ] && echo ON || echo OFF) >/dev/null
  cmake --build "$dir" >/dev/null
  # The static build must not load the shared library, the shared one must.
  # (ldd's output taken whole first: grep -q closing the pipe early fails it under pipefail)
  libs=$(ldd "$dir/host_app")
  if [[ $libs == *libhetsched.so* ]]; then linked=shared; else linked=static; fi
  if [ "$linked" != "$variant" ]; then
    echo "host_app.sh: the $variant build of host_app links hetsched $linked" >&2
    exit 1
  fi
  echo "host_app.sh: host_app linked against libhetsched ($variant)"
  "$dir/host_app" "$build/examples/rfc_model.hsg"
done
# The pkg-config file names the same library and headers.
PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs --cflags hetsched
