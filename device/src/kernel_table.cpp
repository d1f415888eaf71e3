// Resolving `--kernels aten|cuda|PATH.so` for `--device cpu|cuda` to a validated kernel ABI v1
// table, and describing the device for reports.
#include "tapecheck/device/kernel_table.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <ATen/ops/empty.h>
#include <torch/version.h>

#include "aten_kernels.h"
#include "tapecheck/device/kernel_entries.h"

namespace tapecheck::device {
namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string dlerrorText() {
  const char* e = dlerror();
  return e ? e : "unknown dynamic loader error";
}

// Every field of the table checked, in field order, so that the first problem is named.
Status validate(const tapecheck_kernels_v1* t, const std::string& what, DeviceKind device) {
  if (t->abi_version != 1)
    return Error{"tapecheck: " + what + " has abi_version " + std::to_string(t->abi_version) +
                 "; this tapecheck supports kernel ABI version 1"};
  if (!t->name) return Error{"tapecheck: " + what + " has a null name"};
  if (!t->version) return Error{"tapecheck: " + what + " has a null version"};
  const std::string named = what + " (" + t->name + " " + t->version + ")";
  if (t->memory != 0 && t->memory != 1)
    return Error{"tapecheck: " + named + " has memory = " + std::to_string(t->memory) +
                 " (expected 0 = host memory or 1 = CUDA device memory)"};
  if (!providesAny(*t))
    return Error{"tapecheck: " + named +
                 " provides no kernel entry point (every function pointer is null)"};
  const DeviceKind wants = t->memory == 1 ? DeviceKind::Cuda : DeviceKind::Cpu;
  if (wants != device)
    return Error{"tapecheck: " + named + " works on " +
                 (t->memory == 1 ? "CUDA device memory (memory = 1)" : "host memory (memory = 0)") +
                 " but the requested device is " + deviceName(device) + " (use --device " +
                 deviceName(wants) + ")"};
  return okStatus();
}

bool fileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Result<KernelTable> loadPlugin(const std::string& path, const std::string& source,
                               DeviceKind device) {
  const std::string what = "kernel plugin " + quoted(path);
  if (!fileExists(path)) return Error{"tapecheck: " + what + " does not exist"};
  // dlopen searches the library path for a bare name; a plugin is always a file, so a name
  // without a slash means the file in the current directory.
  const std::string openPath = path.find('/') == std::string::npos ? "./" + path : path;
  dlerror();
  void* handle = ::dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return Error{"tapecheck: cannot load " + what + ": " + dlerrorText()};
  // A library holding CUDA kernels is never unloaded: unloading code that registered CUDA fat
  // binaries while the runtime lives on is fragile. Host plugins are closed normally.
  auto closeLater = std::make_shared<bool>(true);
  std::shared_ptr<void> library(handle, [closeLater](void* h) {
    if (*closeLater) ::dlclose(h);
  });

  dlerror();
  void* symbol = ::dlsym(handle, "tapecheck_kernels_v1_get");
  if (!symbol)
    return Error{"tapecheck: " + what + " does not export tapecheck_kernels_v1_get: " +
                 dlerrorText()};
  using GetTable = const tapecheck_kernels_v1* (*)();
  const tapecheck_kernels_v1* table = nullptr;
  try {
    table = reinterpret_cast<GetTable>(symbol)();
  } catch (...) {
    return Error{"tapecheck: " + what + ": tapecheck_kernels_v1_get threw an exception"};
  }
  if (!table) return Error{"tapecheck: " + what + ": tapecheck_kernels_v1_get() returned NULL"};
  if (table->memory == 1) *closeLater = false;
  TAPECHECK_TRY_STATUS(validate(table, what, device));

  KernelTable out;
  out.table = table;
  out.library = std::move(library);
  out.source = source;
  out.device = device;
  return out;
}

// The built-in CUDA kernels: TAPECHECK_CUDA_KERNELS overrides the path compiled in at configure
// time (the tapecheck_cuda_kernels target, when a CUDA compiler was found).
Result<std::string> builtinCudaKernelsPath() {
  const char* env = std::getenv("TAPECHECK_CUDA_KERNELS");
  if (env && *env) return std::string(env);
#ifdef TAPECHECK_CUDA_KERNELS_PATH
  return std::string(TAPECHECK_CUDA_KERNELS_PATH);
#else
  return Error{
      "tapecheck: the built-in cuda kernels were not built (no CUDA compiler at configure time)"};
#endif
}

// The CUDA driver API through dlopen, so that a CPU-only build needs no CUDA headers. The
// signatures used have been stable since CUDA 2.x; CUdevice is an int.
std::string cudaDriverDescription(int ordinal) {
  void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return "";
  using Init = int (*)(unsigned);
  using DriverVersion = int (*)(int*);
  using DeviceGet = int (*)(int*, int);
  using DeviceName = int (*)(char*, int, int);
  auto init = reinterpret_cast<Init>(::dlsym(h, "cuInit"));
  auto driverVersion = reinterpret_cast<DriverVersion>(::dlsym(h, "cuDriverGetVersion"));
  auto deviceGet = reinterpret_cast<DeviceGet>(::dlsym(h, "cuDeviceGet"));
  auto deviceName = reinterpret_cast<DeviceName>(::dlsym(h, "cuDeviceGetName"));
  std::string text;
  int device = 0;
  char name[256] = {};
  if (init && deviceGet && deviceName && init(0) == 0 && deviceGet(&device, ordinal) == 0 &&
      deviceName(name, sizeof name - 1, device) == 0)
    text = name;
  int version = 0;
  if (driverVersion && driverVersion(&version) == 0 && version > 0)
    text += std::string(text.empty() ? "" : ", ") + "driver " + std::to_string(version / 1000) +
            "." + std::to_string(version % 1000 / 10);
  ::dlclose(h);
  return text;
}

}  // namespace

Result<DeviceKind> parseDevice(const std::string& text) {
  if (text == "cpu") return DeviceKind::Cpu;
  if (text == "cuda") return DeviceKind::Cuda;
  return Error{"tapecheck: unknown device " + quoted(text) + " (expected cpu or cuda)"};
}

const char* deviceName(DeviceKind d) { return d == DeviceKind::Cuda ? "cuda" : "cpu"; }

bool gpuVisible() {
  try {
    return at::hasCUDA() && at::getNumGPUs() > 0;
  } catch (...) {
    return false;
  }
}

DeviceKind defaultDevice() { return gpuVisible() ? DeviceKind::Cuda : DeviceKind::Cpu; }

std::string defaultKernels(DeviceKind d) { return d == DeviceKind::Cuda ? "cuda" : "aten"; }

Result<KernelTable> loadKernelTable(const std::string& spec, DeviceKind device) {
  if (device == DeviceKind::Cuda && !gpuVisible())
    return Error{"tapecheck: --device cuda was requested but LibTorch sees no CUDA GPU"};
  if (spec.empty()) return Error{"tapecheck: empty --kernels (expected aten, cuda or PATH.so)"};
  if (spec == "aten") {
    KernelTable out;
    out.table = detail::atenKernels(device);
    out.source = spec;
    out.device = device;
    return out;
  }
  if (spec == "cuda") {
    TAPECHECK_TRY(path, builtinCudaKernelsPath());
    return loadPlugin(path, spec, device);
  }
  return loadPlugin(spec, spec, device);
}

std::string describeDevice(DeviceKind d) {
  const std::string libtorch = std::string("LibTorch ") + TORCH_VERSION;
  if (d == DeviceKind::Cpu) return "cpu (" + libtorch + ")";
  if (!gpuVisible()) return "cuda (no GPU visible; " + libtorch + ")";
  std::string text = "cuda";
  int ordinal = 0;
  try {
    ordinal = at::empty({1}, at::TensorOptions().device(at::kCUDA)).device().index();
    text += ":" + std::to_string(ordinal);
  } catch (const std::exception&) {
  }
  std::string details = cudaDriverDescription(ordinal);
  try {
    const long runtime = at::detail::getCUDAHooks().versionCUDART();
    details += std::string(details.empty() ? "" : ", ") + "CUDA runtime " +
               std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  } catch (const std::exception&) {
  }
  details += (details.empty() ? "" : ", ") + libtorch + ", " + std::to_string(at::getNumGPUs()) +
             " GPU(s) visible";
  return text + " (" + details + ")";
}

}  // namespace tapecheck::device
