#include "kernels/bench/device_info.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <ctime>

#include "kernels/common/cuda_util.cuh"

// The commit this binary was built from, written at every build (kernels/CMakeLists.txt).
#if __has_include("servesim_kernels_build_commit.h")
#include "servesim_kernels_build_commit.h"
#endif
#ifndef SERVESIM_KERNELS_BUILD_COMMIT
#define SERVESIM_KERNELS_BUILD_COMMIT "unknown"
#endif

namespace servesim::kernels {

namespace {

std::string version_string(int v) {  // 12040 -> "12.4"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string run_command(const char* cmd) {
  std::string out;
  FILE* pipe = popen(cmd, "r");
  if (!pipe) return out;
  std::array<char, 256> buf{};
  while (fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) out.pop_back();
  return out;
}

int device_attribute(cudaDeviceAttr attr, int dev) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, dev) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return v;
}

}  // namespace

bool cuda_device_available(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    *why = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    cudaGetLastError();
    return false;
  }
  if (count == 0) {
    *why = "no CUDA device";
    return false;
  }
  return true;
}

int current_device_sm_count() {
  int dev = 0;
  SERVESIM_CUDA_CHECK(cudaGetDevice(&dev));
  return device_attribute(cudaDevAttrMultiProcessorCount, dev);
}

std::string device_summary() {
  int dev = 0;
  SERVESIM_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  SERVESIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  char buf[256];
  std::snprintf(buf, sizeof(buf), "%s, %d SMs, %.1f GiB, cc %d.%d", prop.name, prop.multiProcessorCount,
                prop.totalGlobalMem / double(1 << 30), prop.major, prop.minor);
  return buf;
}

Provenance collect_provenance(const ProvenanceInput& in) {
  int dev = 0;
  SERVESIM_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  SERVESIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  char uuid[40];
  std::snprintf(uuid, sizeof(uuid), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                (unsigned char)prop.uuid.bytes[0], (unsigned char)prop.uuid.bytes[1], (unsigned char)prop.uuid.bytes[2],
                (unsigned char)prop.uuid.bytes[3], (unsigned char)prop.uuid.bytes[4], (unsigned char)prop.uuid.bytes[5],
                (unsigned char)prop.uuid.bytes[6], (unsigned char)prop.uuid.bytes[7], (unsigned char)prop.uuid.bytes[8],
                (unsigned char)prop.uuid.bytes[9], (unsigned char)prop.uuid.bytes[10], (unsigned char)prop.uuid.bytes[11],
                (unsigned char)prop.uuid.bytes[12], (unsigned char)prop.uuid.bytes[13], (unsigned char)prop.uuid.bytes[14],
                (unsigned char)prop.uuid.bytes[15]);

  std::string commit = in.git_commit;
  if (commit.empty()) {
    commit = run_command("git rev-parse HEAD 2>/dev/null");
    if (!commit.empty() && !run_command("git status --porcelain --untracked-files=no 2>/dev/null").empty())
      commit += "-dirty";
  }
  if (commit.empty()) commit = std::string(SERVESIM_KERNELS_BUILD_COMMIT) + " (build)";

  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  char mem[32];
  std::snprintf(mem, sizeof(mem), "%.2f", prop.totalGlobalMem / double(1 << 30));

  const int clock_khz = device_attribute(cudaDevAttrClockRate, dev);
  const int mem_clock_khz = device_attribute(cudaDevAttrMemoryClockRate, dev);
  const int bus_width = device_attribute(cudaDevAttrGlobalMemoryBusWidth, dev);
  const size_t lt_version = cublasLtGetVersion();
  std::string nvidia_driver = run_command("nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1");

  return {
      {"format", "servesim-kernel-profile"},
      {"schema_version", std::to_string(kProfileSchemaVersion)},
      {"gpu", prop.name},
      {"gpu_uuid", uuid},
      {"gpu_cc", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
      {"gpu_sms", std::to_string(prop.multiProcessorCount)},
      {"gpu_mem_gib", mem},
      {"gpu_l2_bytes", std::to_string(prop.l2CacheSize)},
      {"gpu_smem_per_sm_bytes", std::to_string(prop.sharedMemPerMultiprocessor)},
      {"gpu_clock_mhz", std::to_string(clock_khz / 1000)},
      {"gpu_mem_clock_mhz", std::to_string(mem_clock_khz / 1000)},
      {"gpu_mem_bus_bits", std::to_string(bus_width)},
      {"nvidia_driver", nvidia_driver.empty() ? "unknown" : nvidia_driver},
      {"driver_cuda_version", version_string(driver)},
      {"runtime_cuda_version", version_string(runtime)},
      {"build_cuda_version", version_string(CUDART_VERSION)},
      {"cublaslt_version", std::to_string(lt_version)},
      {"git_commit", commit},
      {"build_commit", SERVESIM_KERNELS_BUILD_COMMIT},
      {"date_utc", date},
      {"host", host},
      {"mode", in.mode},
      {"families", in.families.empty() ? "all" : in.families},
      {"command", in.command_line},
  };
}

}  // namespace servesim::kernels
