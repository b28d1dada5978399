// Error type for untrusted input and runtime failures: thrown inside the library, caught
// at the front ends (CLI, server, C API). Public, since the C++ API throws it.
#pragma once
#include "minnow/error.hpp"
