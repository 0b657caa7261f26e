#!/usr/bin/env bash
# Set-up and the two entry points, for a fresh Debian machine (as root, for the apt step):
#   ./dev.sh demo   build the fixture firmware, predict each link, check each image on the NPU,
#                   and boot the images QEMU can run (weaklink demo --run)
#   ./dev.sh test   run the test suite (exit status is pytest's)
# Each installs the arm-none-eabi cross toolchain with apt when it is missing, and the
# package with its extras into a virtual environment (.venv, or $WEAKLINK_VENV).
set -euo pipefail
cd "$(dirname "$0")"
VENV=${WEAKLINK_VENV:-.venv}

ensure_toolchain() {
    if ! command -v arm-none-eabi-gcc >/dev/null || ! command -v arm-none-eabi-ld >/dev/null; then
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            gcc-arm-none-eabi binutils-arm-none-eabi libnewlib-arm-none-eabi
    fi
    # ld.lld-16: the oracle of the lld flavor (weaklink link --flavor lld)
    if ! command -v ld.lld-16 >/dev/null; then
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends lld-16
    fi
    # qemu-system-arm: weaklink run boots the firmware on its mps3-an547 (Corstone-300)
    if ! command -v qemu-system-arm >/dev/null; then
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends qemu-system-arm
    fi
    # cmake (and make, its default generator): the CMake post-link gate's tests (docs/cmake.md)
    if ! command -v cmake >/dev/null || ! command -v make >/dev/null; then
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends cmake make
    fi
}

ensure_venv() {
    local stamp="$VENV/.weaklink-installed"
    if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
        python3 -m venv "$VENV"
        local log="$VENV/pip-install.log"
        if ! { "$VENV/bin/python" -m pip install -q --upgrade pip &&
               "$VENV/bin/python" -m pip install -q -e '.[test]'; } >"$log" 2>&1; then
            cat "$log" >&2
            echo "dev.sh: installing the package into $VENV failed (log above)" >&2
            exit 2
        fi
        touch "$stamp"
    fi
}

case "${1:-}" in
    demo) shift; ensure_toolchain; ensure_venv; exec "$VENV/bin/weaklink" demo --run "$@" ;;
    test) shift; ensure_toolchain; ensure_venv; exec "$VENV/bin/python" -m pytest "$@" ;;
    *) echo "usage: ./dev.sh demo|test [args...]" >&2; exit 2 ;;
esac
