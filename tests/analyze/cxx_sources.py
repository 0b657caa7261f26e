"""C++ firmware sources with the traits of real ExecuTorch and TFLM images, for the findings
tests: a class hierarchy whose virtual methods are defined in the class body, overridden in a
runner; unrelated classes with same-named methods; an inline function with static data; an
explicit template instantiation; and the override patterns that do miss (a C override of a
C++ weak default, a namespaced override of an extern "C" default, a namespace mismatch of a
free function) beside ones that are no override at all (a different signature, a C default
against a method). Built without libstdc++: -fno-exceptions, our own __cxa_pure_virtual,
operator delete and __cxxabiv1 vtables (RTTI on, so that typeinfo is emitted)."""
from __future__ import annotations

from pathlib import Path

from weaklink import toolchain

ALLOC_H = r"""
#include <stddef.h>
namespace executorch { namespace runtime {
class MemoryAllocator {
 public:
  MemoryAllocator(unsigned char* base, size_t size) : base_(base), size_(size), cur_(base) {}
  virtual ~MemoryAllocator() = default;
  virtual void* allocate(size_t n) { void* p = cur_; cur_ += n; return p; }
  virtual void reset() { cur_ = base_; }
  size_t size() const { return size_; }
 protected:
  unsigned char* base_; size_t size_; unsigned char* cur_;
};
class Method { public: int init(int n); ~Method(); };
class BackendInterface {
 public:
  virtual ~BackendInterface() {}
  virtual int init(const char* blob, size_t size) = 0;
};
inline int& counter() { static int c = int(size_t(&c) & 7); return c; }
template <typename T> T clamp_to(T v, T lo, T hi) { return v < lo ? lo : v > hi ? hi : v; }
}}
struct Board {
  int v;
  __attribute__((noinline)) void init() { v = 1; }
  void out();
  __attribute__((noinline)) static int twice(int x) { return 2 * x; }
};
"""

BACKEND_CPP = r"""
#include "alloc.h"
namespace executorch { namespace backends { namespace arm {
class EthosUBackend : public runtime::BackendInterface {
 public:
  int init(const char* blob, size_t size) override {
    return int(size) + blob[0] + runtime::counter();
  }
};
EthosUBackend backend;
runtime::BackendInterface* get_backend() { return &backend; }
}}}
extern "C" {
__attribute__((weak)) unsigned char* ethosu_fast_scratch = nullptr;
__attribute__((weak)) size_t ethosu_fast_scratch_size = 0;
}
__attribute__((weak)) void board_init() {}
namespace drv {
__attribute__((weak)) int level(int x) { return x; }
__attribute__((weak)) int mode(int x) { return x; }
}
__attribute__((weak)) void Board::out() { v = 0; }
template int executorch::runtime::clamp_to<int>(int, int, int);
// The shape of libstdc++'s copy-on-write std::string (mangled `Ss`), whose empty
// representation is template static data: weak in every image that uses std::string.
namespace std {
template <class C> struct char_traits {};
template <class T> struct allocator {};
template <class C, class T, class A> struct basic_string {
  struct _Rep { static unsigned _S_empty_rep_storage[4]; };
  static unsigned* empty() { return _Rep::_S_empty_rep_storage; }
};
template <class C, class T, class A>
unsigned basic_string<C, T, A>::_Rep::_S_empty_rep_storage[4] = {};
}
extern "C" unsigned* empty_string() {
  return std::basic_string<char, std::char_traits<char>, std::allocator<char> >::empty();
}
int use_backend(Board& b) {
  b.init(); b.out(); return Board::twice(b.v) + drv::level(1) + drv::mode(2);
}
"""

RUNNER_CPP = r"""
#include "alloc.h"
class ArmMemoryAllocator : public executorch::runtime::MemoryAllocator {
 public:
  ArmMemoryAllocator(unsigned char* b, size_t s) : MemoryAllocator(b, s) {}
  void* allocate(size_t n) override;
  void reset() override;
};
void* ArmMemoryAllocator::allocate(size_t n) { return MemoryAllocator::allocate(n + 4); }
void ArmMemoryAllocator::reset() { MemoryAllocator::reset(); }
namespace executorch { namespace runtime {
int Method::init(int n) { return n + counter(); }
Method::~Method() {}
}}
namespace executorch { namespace backends { namespace arm {
unsigned char scratch[64];
unsigned char* ethosu_fast_scratch = scratch;      // namespaced: overrides nothing
}}}
namespace app {
int level(int x) { return x + 1; }                 // drv::level's namespace mismatch
int mode(char x) { return x + 1; }                 // another signature than drv::mode(int)
}
static unsigned char pool[256];
executorch::runtime::MemoryAllocator* make(int which) {
  static ArmMemoryAllocator a(pool, 128);
  static executorch::runtime::MemoryAllocator b(pool + 128, 128);
  return which ? &a : &b;
}
int use_runner(Board& b) { b.init(); return Board::twice(3) + app::level(1) + app::mode('a'); }
"""

BOARD_C = r"""
void board_init(void) {}     /* C linkage: the C++ default board_init() stays */
__attribute__((weak)) void reset(void) {}   /* a C default; ArmMemoryAllocator::reset is a method */
const void *_ZTVN10__cxxabiv117__class_type_infoE[4];
const void *_ZTVN10__cxxabiv120__si_class_type_infoE[4];
void _ZdlPvj(void *p, unsigned n) { (void)p; (void)n; }
void __cxa_pure_virtual(void) { for (;;) {} }
int atexit(void (*f)(void)) { (void)f; return 0; }
unsigned *empty_string(void);
int _start(void) { reset(); return (int)*empty_string(); }
"""

LINKER_SCRIPT = """
MEMORY {
  ITCM (rx) : ORIGIN = 0x10000000, LENGTH = 256K
  DTCM (rw) : ORIGIN = 0x30000000, LENGTH = 64K
}
ENTRY(_start)
SECTIONS {
  .text : { *(.text*) *(.rodata*) } > ITCM
  .data : { *(.data*) } > DTCM AT > ITCM
  .bss : { *(.bss*) *(COMMON) } > DTCM
}
"""

CXX_FLAGS = ("-fno-exceptions", "-fno-threadsafe-statics", "-fno-use-cxa-atexit",
             "-ffunction-sections", "-fdata-sections")
BUILDS = {"release": ("-O2",), "debug": ("-O0", "-g")}


def build(where: Path, kind: str) -> Path:
    """Compile and link one image ("release": -O2 without DWARF; "debug": -O0 -g)."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "alloc.h").write_text(ALLOC_H)
    sources = {"backend.cpp": BACKEND_CPP, "runner.cpp": RUNNER_CPP, "board.c": BOARD_C}
    flags = BUILDS[kind]
    objects = []
    for name, text in sources.items():
        (where / name).write_text(text)
        obj = name.rsplit(".", 1)[0] + ".o"
        cc, extra = ("g++", CXX_FLAGS) if name.endswith(".cpp") else ("gcc", ())
        done = toolchain.run(cc, [*toolchain.CPU_FLAGS, *flags, *extra, "-c", name, "-o", obj],
                             cwd=where)
        assert done.returncode == 0, done.stderr
        objects.append(obj)
    (where / "t.ld").write_text(LINKER_SCRIPT)
    done = toolchain.run("ld", ["-T", "t.ld", *objects, "-o", "t.elf", "-Map", "t.map"],
                         cwd=where)
    assert done.returncode == 0, done.stderr
    return where / "t.elf"
