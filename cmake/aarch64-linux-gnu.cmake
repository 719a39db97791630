# CMake toolchain file for aarch64 Linux from another Linux host, with Debian's cross compilers
# (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu, libc6-dev-arm64-cross). Used for the top-level
# project (cargo then builds for aarch64-unknown-linux-gnu and links with the C compiler below) and
# for programs built against an aarch64 install with find_package(aclshmem).
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Programs built this way run on aarch64 hosts, or here under qemu-user
# (qemu-aarch64 -L /usr/aarch64-linux-gnu PROGRAM), which CMAKE_CROSSCOMPILING_EMULATOR names.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
# libraries and headers from the aarch64 sysroot; programs and packages (an aclshmem install
# prefix named by CMAKE_PREFIX_PATH) from anywhere
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
