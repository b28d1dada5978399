# Cross build for aarch64 Linux with Debian's cross compiler (g++-aarch64-linux-gnu) and
# the arm64 libraries of Debian's multiarch (libpcre2-dev:arm64, libgtest-dev:arm64);
# scripts/setup --aarch64 installs them. Binaries run here under qemu-aarch64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# pkg-config must see the arm64 .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
# Header-only and arch-independent packages (nlohmann-json, CLI11) live under /usr/share;
# libraries come only from the aarch64 directories.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
