// A stand-in for the Lean runtime header, for compiling TorchLean's CUDA sources into a tapecheck
// plugin without a Lean toolchain.
//
// TorchLean's native files include <lean/lean.h> for the Lean objects their exported functions
// take and return (boxing buffers, arrays, IO results) and for `lean_internal_panic`. The plugin
// calls none of those exported functions: it launches TorchLean's kernels directly, through the
// same launch configurations. So every Lean object here is opaque and every function that would
// touch one reports that the plugin reached code it never meant to run.
//
// `lean_internal_panic` is the exception: TorchLean's helpers (launch checks, size checks, its
// scratch allocator) call it on a CUDA error or an impossible size. Lean would abort the process;
// here it throws, and the plugin's entry points turn the exception into a nonzero return code, the
// only failure the kernel ABI has.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdexcept>
#include <string>

#define LEAN_EXPORT

typedef struct lean_object lean_object;
typedef lean_object* lean_obj_arg;
typedef lean_object* b_lean_obj_arg;
typedef lean_object* u_lean_obj_arg;
typedef lean_object* lean_obj_res;
typedef lean_object* b_lean_obj_res;

typedef void (*lean_external_finalize_proc)(void*);
typedef void (*lean_external_foreach_proc)(void*, b_lean_obj_arg);
typedef struct {
  lean_external_finalize_proc m_finalize;
  lean_external_foreach_proc m_foreach;
} lean_external_class;

// What lean_internal_panic throws.
struct lean_panic_error : std::runtime_error {
  explicit lean_panic_error(const std::string& message) : std::runtime_error(message) {}
};

[[noreturn]] inline void lean_internal_panic(const char* msg) {
  throw lean_panic_error(msg ? msg : "TorchLean panicked without a message");
}

[[noreturn]] inline void lean_internal_panic_out_of_memory(void) {
  lean_internal_panic("TorchLean ran out of host memory");
}

[[noreturn]] inline void lean_standin_unreachable(const char* what) {
  lean_internal_panic((std::string("the plugin reached Lean runtime code it never calls: ") + what)
                          .c_str());
}

// Scalars are tagged pointers in Lean's object model; these three are pure arithmetic.
inline bool lean_is_scalar(lean_object* o) { return (reinterpret_cast<size_t>(o) & 1) == 1; }
inline lean_object* lean_box(size_t n) { return reinterpret_cast<lean_object*>((n << 1) | 1); }
inline size_t lean_unbox(b_lean_obj_arg o) { return reinterpret_cast<size_t>(o) >> 1; }

inline void lean_inc(lean_object*) { lean_standin_unreachable("lean_inc"); }

inline lean_object* lean_alloc_ctor(unsigned, unsigned, unsigned) {
  lean_standin_unreachable("lean_alloc_ctor");
}
inline void lean_ctor_set(b_lean_obj_arg, unsigned, lean_obj_arg) {
  lean_standin_unreachable("lean_ctor_set");
}

inline bool lean_is_array(lean_object*) { lean_standin_unreachable("lean_is_array"); }
inline size_t lean_array_size(b_lean_obj_arg) { lean_standin_unreachable("lean_array_size"); }
inline lean_object* lean_array_get_core(b_lean_obj_arg, size_t) {
  lean_standin_unreachable("lean_array_get_core");
}

inline lean_obj_res lean_alloc_sarray(unsigned, size_t, size_t) {
  lean_standin_unreachable("lean_alloc_sarray");
}
inline uint8_t* lean_sarray_cptr(lean_object*) { lean_standin_unreachable("lean_sarray_cptr"); }
inline size_t lean_sarray_size(b_lean_obj_arg) { lean_standin_unreachable("lean_sarray_size"); }
inline void lean_sarray_set_size(u_lean_obj_arg, size_t) {
  lean_standin_unreachable("lean_sarray_set_size");
}
inline double* lean_float_array_cptr(b_lean_obj_arg) {
  lean_standin_unreachable("lean_float_array_cptr");
}
inline lean_obj_res lean_mk_empty_float_array(b_lean_obj_arg) {
  lean_standin_unreachable("lean_mk_empty_float_array");
}

inline lean_external_class* lean_register_external_class(lean_external_finalize_proc,
                                                         lean_external_foreach_proc) {
  lean_standin_unreachable("lean_register_external_class");
}
inline lean_object* lean_alloc_external(lean_external_class*, void*) {
  lean_standin_unreachable("lean_alloc_external");
}
inline bool lean_is_external(lean_object*) { lean_standin_unreachable("lean_is_external"); }
inline void* lean_get_external_data(lean_object*) {
  lean_standin_unreachable("lean_get_external_data");
}

inline lean_obj_res lean_io_result_mk_ok(lean_obj_arg) {
  lean_standin_unreachable("lean_io_result_mk_ok");
}
