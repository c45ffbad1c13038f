// spin_kernel: one thread waits until `ns` nanoseconds of the GPU's global timer have
// passed. Placed first in a timed sample, it holds the GPU while the host enqueues the
// launches behind it, so that they run as a queued stream (as in an engine's forward pass)
// and not at the host's launch rate: (time with the launches - time of the spin alone) /
// launches is each launch's cost in such a stream (families `ceilings`, `elementwise_queued`).
// Internal linkage: every .cu file that includes it gets its own copy (no -rdc).
#pragma once

namespace servesim::kernels {
namespace {

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0 = 0, t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

constexpr unsigned long long kSpinNs = 3'000'000;

}  // namespace
}  // namespace servesim::kernels
