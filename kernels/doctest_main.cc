// The one translation unit of servesim_kernels_ref_test that defines doctest's main.
// (Every other test file only includes <doctest/doctest.h>.)
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
