// Choosing the kernels under test: the built-in `aten` table, the built-in `cuda` table
// (libtapecheck-cuda.so) or a plugin given by path, each resolved to a kernel ABI v1 table.
#pragma once

#include <memory>
#include <string>

#include "tapecheck/device/kernel_fault.h"
#include "tapecheck/kernels_v1.h"
#include "tapecheck/result.h"

namespace tapecheck::device {

enum class DeviceKind { Cpu, Cuda };

struct KernelTable {
  const tapecheck_kernels_v1* table = nullptr;
  std::shared_ptr<void> library;  // keeps a dlopen'ed library loaded while the table is used
  std::string source;             // "aten", "cuda" or the plugin's path as given
  DeviceKind device = DeviceKind::Cpu;
  KernelCallObserver observer;    // told about every kernel call, when set
};

Result<DeviceKind> parseDevice(const std::string& text);  // "cpu" | "cuda"
const char* deviceName(DeviceKind d);
bool gpuVisible();                           // a CUDA device is usable through LibTorch
DeviceKind defaultDevice();                  // cuda when a GPU is visible, else cpu
std::string defaultKernels(DeviceKind d);    // "cuda" on cuda, "aten" on cpu

// Resolves `spec` (aten | cuda | PATH.so) for `device`. Rejects, with a clear message: a missing
// file or symbol, abi_version != 1, a table whose every function pointer is null (a null entry
// point alone means "not provided": kernel_entries.h), a memory kind that does not match the
// device, and --device cuda when no GPU is visible.
// `cuda` is the built-in libtapecheck-cuda.so; the environment variable TAPECHECK_CUDA_KERNELS
// (a path) overrides it. device/README.md has every message and the stream convention.
Result<KernelTable> loadKernelTable(const std::string& spec, DeviceKind device);

// One line for reports: GPU name, driver/runtime and LibTorch version, or the CPU.
std::string describeDevice(DeviceKind d);

}  // namespace tapecheck::device
