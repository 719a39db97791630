#!/usr/bin/env bash
# aarch64 cross build and emulated test run of libaclshmem (called by scripts/test-all.sh; runs on
# its own too):
#   1. installs, when missing, the Rust target aarch64-unknown-linux-gnu, Debian's cross compilers
#      (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu), the aarch64 C library (libc6-dev-arm64-cross)
#      and qemu-user
#   2. cross-builds every crate of the workspace but xtask (a host tool) through the top-level CMake
#      project with the toolchain file cmake/aarch64-linux-gnu.cmake (cargo profile `aarch64-check`: a
#      debug build without debug info; CMake hands cargo the cross linker for that build only, so x86
#      builds are untouched), installs it into a temporary prefix, and builds three c_examples (C, C++
#      and a kernel library) against that prefix with find_package(aclshmem) and the same toolchain file
#   3. ABI: compiles tests/c/abi_layout.c as C11 and C++14 and the header compile tests with the
#      cross compilers (the layout assertions are static: compiling is the check) and runs the layout
#      probe under qemu-aarch64; compares the aarch64 library's exported symbols with the host build's
#   4. compiles the C test programs with aarch64-linux-gnu-gcc (the kernel program with
#      scripts/aclshmem-cxx over aarch64-linux-gnu-g++) and runs a subset of their scenarios
#      under qemu-aarch64: the cross-built launcher itself runs under qemu and starts each PE as
#      `qemu-aarch64 -L /usr/aarch64-linux-gnu <program>` (no binfmt registration needed)
#
# qemu-user on an x86 host keeps x86's strong memory ordering, so this run checks the build, the C
# ABI and the code paths, not weak-memory behaviour (the loom models of crates/protocol do that).
# Environment: ACLSHMEM_AARCH64_JOBS (parallel PE jobs, default 2), ACLSHMEM_AARCH64_CASES (a regular
# expression selecting jobs by name), ACLSHMEM_AARCH64_TIMEOUT (each job's launcher --timeout, default
# 300 s), CARGO_TARGET_DIR.
# `--build-only`: the cross build, install and compilations only (scripts/test-all.sh runs that in the
# background while the x86 tests run, then this script again: its builds are then up to date).
# ACLSHMEM_AARCH64_TARGET_DIR: the cargo target directory of the cross build (default: the host's,
# CARGO_TARGET_DIR); a separate one lets it build while the host's is in use.
# Exits non-zero on the first failure.
set -euo pipefail
BUILD_ONLY=0
if [[ "${1:-}" == --build-only ]]; then
    BUILD_ONLY=1
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [[ -d "$HOME/.cargo/bin" && ":$PATH:" != *":$HOME/.cargo/bin:"* ]]; then
    PATH="$HOME/.cargo/bin:$PATH"
fi
step() { printf '\n==> [aarch64] %s\n' "$*"; }
T0=$SECONDS

TRIPLE=aarch64-unknown-linux-gnu
SYSROOT=/usr/aarch64-linux-gnu
CC_A64=aarch64-linux-gnu-gcc
CXX_A64=aarch64-linux-gnu-g++

# --- tools ----------------------------------------------------------------------------------------
missing_pkgs=()
command -v "$CC_A64" >/dev/null 2>&1 || missing_pkgs+=(gcc-aarch64-linux-gnu)
command -v "$CXX_A64" >/dev/null 2>&1 || missing_pkgs+=(g++-aarch64-linux-gnu)
[[ -e "$SYSROOT/include/stdio.h" ]] || missing_pkgs+=(libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null 2>&1 || missing_pkgs+=(qemu-user)
command -v cmake >/dev/null 2>&1 || missing_pkgs+=(cmake)
command -v python3 >/dev/null 2>&1 || missing_pkgs+=(python3)
if ((${#missing_pkgs[@]})); then
    step "installing ${missing_pkgs[*]}"
    SUDO=()
    [[ "$(id -u)" -ne 0 ]] && SUDO=(sudo)
    "${SUDO[@]}" apt-get update
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing_pkgs[@]}"
fi
if ! rustup target list --installed 2>/dev/null | grep -qx "$TRIPLE"; then
    step "rustup target add $TRIPLE"
    rustup target add "$TRIPLE"
fi

# the host build (its exports are compared below) and the cross build's own target directory
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
A64_DIR="${ACLSHMEM_AARCH64_TARGET_DIR:-$TARGET_DIR}"
case "$A64_DIR" in /*) ;; *) A64_DIR="$ROOT/$A64_DIR" ;; esac
export CARGO_TARGET_DIR="$A64_DIR"
OUT="$A64_DIR/$TRIPLE/aarch64-check"
CT="$OUT/ctests"
mkdir -p "$CT"

# --- cross build through CMake, install, find_package consumer ---------------------------------------
PREFIX="$(mktemp -d "${TMPDIR:-/tmp}/aclshmem-aarch64.XXXXXX")"
trap 'rm -rf "$PREFIX"' EXIT
TOOLCHAIN="$ROOT/cmake/aarch64-linux-gnu.cmake"
step "cmake (toolchain cmake/aarch64-linux-gnu.cmake, cargo profile aarch64-check): build, install into $PREFIX"
cmake -S "$ROOT" -B "$A64_DIR/cmake-aarch64" -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" \
    -DACLSHMEM_CARGO_PROFILE=aarch64-check -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
cmake --build "$A64_DIR/cmake-aarch64"
cmake --install "$A64_DIR/cmake-aarch64" >/dev/null
for f in lib/libaclshmem.so lib/libascendcl.so bin/aclshmrun; do
    readelf -h "$PREFIX/$f" | grep -q 'Machine: *AArch64' || { echo "error: $f is not an aarch64 ELF file" >&2; exit 1; }
done
echo "cross build and install: $((SECONDS - T0)) s"
step "c_examples (hello, cpp_defaults, kernel_signal_ring) against $PREFIX with the toolchain file"
EXAMPLES="$A64_DIR/cmake-aarch64-examples"
rm -f "$EXAMPLES/CMakeCache.txt"  # the prefix is new on every run
cmake -S "$ROOT/c_examples" -B "$EXAMPLES" -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$EXAMPLES" --parallel "$(nproc 2>/dev/null || echo 2)" --target hello cpp_defaults kernel_signal_ring

QEMU=(qemu-aarch64 -L "$SYSROOT")
CFLAGS=(-std=c11 -O1 -Wall -Wextra -Werror -I"$ROOT/include")
LINK=(-L"$OUT" -laclshmem -Wl,-rpath,"$OUT")

# --- ABI ------------------------------------------------------------------------------------------
step "ABI: layouts, header compile tests and exported symbols with $CC_A64"
"$CC_A64" -std=c11 -Wall -Wextra -Werror -pedantic -I"$ROOT/include" tests/c/abi_layout.c "${LINK[@]}" \
    -o "$CT/abi_layout_c"
"$CXX_A64" -std=c++14 -Wall -Wextra -Werror -pedantic -I"$ROOT/include" -x c++ tests/c/abi_layout.c -x none \
    "${LINK[@]}" -o "$CT/abi_layout_cxx"
"${QEMU[@]}" "$CT/abi_layout_c"
"${QEMU[@]}" "$CT/abi_layout_cxx"
# the header compile tests of tests/header.rs, as C and C++, compiled only
for src in tests/c/header_compile.c tests/c/acl_header_compile.c; do
    "$CC_A64" -std=c11 -Wall -Wextra -Werror -pedantic -I"$ROOT/include" -c "$src" -o "$CT/hdr.o"
    "$CXX_A64" -std=c++14 -Wall -Wextra -Werror -pedantic -I"$ROOT/include" -x c++ -c "$src" -o "$CT/hdr.o"
done
"$CXX_A64" -std=c++14 -Wall -Wextra -Werror -pedantic -I"$ROOT/include/openshmem" \
    -c tests/c/openshmem/cxx_header.cpp -o "$CT/hdr.o"
# the same exported symbols as the host library (when this tree has built one)
exports() { nm -D --defined-only "$1" | awk '$2 == "T" {print $3}' | sort; }
for host_lib in "$TARGET_DIR/debug/libaclshmem.so" "$TARGET_DIR/release/libaclshmem.so"; do
    if [[ -e "$host_lib" && "$host_lib" -nt "$ROOT/include/shmem.h" ]]; then
        if ! diff <(exports "$host_lib") <(exports "$OUT/libaclshmem.so") >"$CT/exports.diff"; then
            echo "error: exports differ between $host_lib and the aarch64 library:" >&2
            head -n 40 "$CT/exports.diff" >&2
            exit 1
        fi
        echo "exports equal to $host_lib ($(exports "$host_lib" | wc -l) functions)"
        break
    fi
done

# --- C test programs ------------------------------------------------------------------------------
step "compiling the C test programs with $CC_A64"
for p in rma_tests sync_tests team_tests pe_tests init_modes platform_char; do
    "$CC_A64" "${CFLAGS[@]}" "tests/c/$p.c" "${LINK[@]}" -o "$CT/$p" &
done
"$CC_A64" "${CFLAGS[@]}" tests/c/stream_tests.c "${LINK[@]}" -lascendcl -o "$CT/stream_tests" &
for p in rma_amo coll_teams platform_longdouble; do
    OSHCC_CC="$CC_A64" ACLSHMEM_LIB_DIR="$OUT" scripts/osh/oshcc -std=c11 -O1 -Wall -Wextra -Werror -pedantic \
        "tests/c/openshmem/$p.c" -o "$CT/osh_$p" &
done
# the CPU device mode: kernels built by scripts/aclshmem-cxx with the cross compiler
ACLSHMEM_CXX="$CXX_A64" ACLSHMEM_INCLUDE_DIR="$ROOT/include" ACLSHMEM_LIB_DIR="$OUT" scripts/aclshmem-cxx \
    -std=c++17 -O1 -Wall -Wextra -Werror tests/c/kernel_tests.cpp -o "$CT/kernel_tests" &
for job in $(jobs -p); do wait "$job"; done
if ((BUILD_ONLY)); then
    step "built (--build-only): $((SECONDS - T0)) s"
    exit 0
fi

# One case per line: name, PEs, environment (comma-separated VAR=value, or -), the line the job must
# print (`OK <scenario>` unless given as `=<text>`, `~` for a space), program (in $CT, or $EX/<example>) and arguments.
# Every run has the launcher's --timeout and an outer `timeout` on top; it passes when the job exits
# 0, prints the expected line and no `FAIL:` line. Chosen to cover each area once (RMA, signals and
# waits, atomics, teams and collectives, streams, init modes, the OpenSHMEM surface, the platform
# types, kernels) at the PE counts that exercise it; the x86 run covers the rest.
LOGS="$CT/logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"
EX="$EXAMPLES"
CASES=()
add() { CASES+=("$*"); }
add "rma_typed           4 - - rma_tests typed"
add "rma_strided         2 - - rma_tests strided"
add "rma_scalar          2 - - rma_tests scalar"
add "rma_heaps           2 - - rma_tests heaps"
add "rma_typed_nodirect  2 ACLSHMEM_DIRECT_ACCESS=0 - rma_tests typed"
add "producer_consumer   4 - - sync_tests producer_consumer"
add "wait_families       2 - - sync_tests wait_families"
add "atomics             4 - - sync_tests atomics"
add "cas_lock            4 - - sync_tests cas_lock"
add "ring_waits          4 - - sync_tests ring_waits"
add "splits              8 - - team_tests splits"
add "collectives         4 - - team_tests collectives"
add "team_barrier_phases 4 - - team_tests team_barrier_phases"
add "stream_ring         2 - - stream_tests ring"
add "stream_phases       4 - - stream_tests phases"
add "pe_init_finalize    2 - - pe_tests init_finalize"
add "pe_barrier          4 - - pe_tests barrier"
add "pe_threads          2 - - pe_tests threads"
add "uid_cycles          2 SHMEM_UID_SESSION_ID=127.0.0.1:0 - init_modes uid_cycles @DIR"
add "multi_instance      2 SHMEM_INSTANCE_PORT_RANGE=@PORTS - init_modes multi_instance @DIR"
add "platform_char       2 - =OK~platform_char platform_char"
add "osh_rma_amo         4 - =OK~rma_amo osh_rma_amo"
add "osh_coll_teams      4 - =OK~coll_teams osh_coll_teams"
add "osh_longdouble      4 - =OK~platform_longdouble osh_platform_longdouble"
add "kernel_families     2 - - kernel_tests families"
add "kernel_fault        2 - - kernel_tests fault"
add "example_hello       4 - =hello:~OK $EX/hello"
add "example_cpp_defaults 2 - =cpp_defaults:~OK $EX/cpp_defaults"
add "example_kernel_signal_ring 2 - =lanes~OK $EX/kernel_signal_ring"

LAUNCHER=("${QEMU[@]}" "$PREFIX/bin/aclshmrun")  # the installed aarch64 launcher
# the launcher's --timeout of each job: a guard against hangs, not a time limit (emulated, the
# collectives job takes about 20 s alone and over 2 minutes on a 2-core machine busy with other work)
TIMEOUT="${ACLSHMEM_AARCH64_TIMEOUT:-300}"

# a free loopback port range base..base+3 for SHMEM_INSTANCE_PORT_RANGE
free_ports() {
    python3 - <<'EOF'
import socket
for _ in range(50):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); base = s.getsockname()[1]; s.close()
    if base >= 60000:
        continue
    ok = True
    for k in range(1, 4):
        t = socket.socket()
        try:
            t.bind(("127.0.0.1", base + k))
        except OSError:
            ok = False
        t.close()
    if ok:
        print(f"{base}:{base + 3}")
        break
EOF
}

run_case() {
    local name=$1 pes=$2 envs=$3 expect=$4 prog=$5
    shift 5
    local args=() a dir="$LOGS/$name.dir" mem=32M
    [[ "$prog" == kernel_tests ]] && mem=64M
    [[ "$prog" == /* ]] || prog="$CT/$prog"
    for a in "$@"; do
        [[ "$a" == @DIR ]] && { mkdir -p "$dir"; a=$dir; }
        args+=("$a")
    done
    if [[ "$expect" == - ]]; then
        expect="OK ${args[0]}"
    else
        expect="${expect#=}"
        expect="${expect//\~/ }"
    fi
    local envv=(env -u ACLSHMEM_MY_PE -u ACLSHMEM_N_PES -u ACLSHMEM_IP_PORT -u ACLSHMEM_JOB_TOKEN
        -u ACLSHMEM_JOB_ID -u SHMEM_LOG_LEVEL -u SHMEM_LOG_PATH SHMEM_LOG_TO_STDOUT=1
        ACLSHMEM_LOCAL_MEM_SIZE=$mem)
    if [[ "$envs" != - ]]; then
        local kv kvs
        IFS=, read -r -a kvs <<<"$envs"
        for kv in "${kvs[@]}"; do
            [[ "$kv" == *=@PORTS ]] && kv="${kv%@PORTS}$(free_ports)"
            envv+=("$kv")
        done
    fi
    local start=$SECONDS rc=0
    "${envv[@]}" timeout -k 5 $((TIMEOUT + 30)) "${LAUNCHER[@]}" -n "$pes" --timeout "$TIMEOUT" \
        "${QEMU[@]}" "$prog" "${args[@]}" >"$LOGS/$name.log" 2>&1 || rc=$?
    if [[ $rc -ne 0 ]] || grep -q 'FAIL: ' "$LOGS/$name.log" || ! grep -qF "$expect" "$LOGS/$name.log"; then
        echo "FAILED: $name ($pes PEs, exit $rc, $((SECONDS - start)) s, expected \"$expect\"); output:"
        tail -n 60 "$LOGS/$name.log"
        return 1
    fi
    echo "ok: $name ($pes PEs, $((SECONDS - start)) s)"
}

step "running ${#CASES[@]} multi-PE cases under qemu-aarch64 (${ACLSHMEM_AARCH64_JOBS:-2} at a time)"
T1=$SECONDS
failed=0
running=0
for c in "${CASES[@]}"; do
    # ACLSHMEM_AARCH64_CASES: an extended regular expression selecting cases by name (default: all)
    [[ "${c%% *}" =~ ${ACLSHMEM_AARCH64_CASES:-.} ]] || continue
    # shellcheck disable=SC2086
    run_case $c >"$LOGS/${c%% *}.result" 2>&1 &
    running=$((running + 1))
    if ((running >= ${ACLSHMEM_AARCH64_JOBS:-2})); then
        wait -n || failed=1
        running=$((running - 1))
    fi
done
while ((running > 0)); do
    wait -n || failed=1
    running=$((running - 1))
done
cat "$LOGS"/*.result
echo "cases: $((SECONDS - T1)) s; aarch64 check total: $((SECONDS - T0)) s"
if ((failed)); then
    echo "error: aarch64 cases failed (logs in $LOGS)" >&2
    exit 1
fi
step "aarch64: all passed"
