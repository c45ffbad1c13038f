# Kernels II: Quest, MInference and AnDPro (kernels/sparse/). Included by
# kernels/CMakeLists.txt, which turns these lists into servesim_kernels_ref (CPU
# references), servesim_kernels_ref_test (doctest, CI) and servesim-kernels (GPU
# kernels and their check/bench families). Paths are relative to kernels/.
list(APPEND SERVESIM_KERNELS_REF_SOURCES
  sparse/sparse_ref_util.cc
  sparse/quest_ref.cc
  sparse/minference_ref.cc
  sparse/minference_attention_ref.cc
  sparse/minference_plan.cc
  sparse/andpro_ref.cc
)
list(APPEND SERVESIM_KERNELS_TEST_SOURCES
  sparse/sparse_ref_util_test.cc
  sparse/quest_ref_test.cc
  sparse/minference_ref_test.cc
  sparse/andpro_ref_test.cc
)
# GPU kernels and their check/bench families (registrars: compiled into the binary).
list(APPEND SERVESIM_KERNELS_CUDA_SOURCES
  sparse/quest_kernels.cu
  sparse/quest_family.cu
  sparse/minference_estimate.cu
  sparse/minference_index.cu
  sparse/minference_attention.cu
  sparse/minference_attention_mma.cu
  sparse/minference_buffers.cu
  sparse/minference_family.cu
  sparse/andpro_kernels.cu
  sparse/andpro_family.cu
)
