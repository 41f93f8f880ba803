# vramtrace: the preload library, the command, the fake CUDA rig and the tests.
CUDA_HOME ?= /usr/local/cuda
CC ?= cc
BUILD := build
# Quiet by default, as kbuild: a build prints its warnings and errors, not its commands; V=1 shows them.
ifneq ($(V),1)
MAKEFLAGS += --silent
endif

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
# The library in floors, ground first: a file includes from its own floor and those below it, never from
# one above (tests/floors.sh checks it at every build; lib/README.md says what each floor holds). common/,
# what the library and the command share (settings, file names, the dump format's words, the control
# protocol), and analyze/, the reader that runs in both (parser, model, views, Prometheus renderer:
# analyze/README.md), are built into both; tools/, the command.
LIB_DIRS := lib/core lib/table lib/stacks lib/hooks lib/dump lib/bridges lib/roof
INCS := -Iinclude -Icommon -Ianalyze $(addprefix -I,$(LIB_DIRS)) -I$(BUILD)/lib
HDRS := $(wildcard include/*.h common/*.h analyze/*.h $(addsuffix /*.h,$(LIB_DIRS)))
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fno-omit-frame-pointer $(INCS) -Itools -I$(CUDA_HOME)/include
# The shared libraries build/ carries beside the library (libunwind) and the command (libdw), with what
# they need beyond the C and C++ runtimes, so that build/ (or an install) runs on a machine without them.
# Those that need others get the RUNPATH $ORIGIN: a library's own dependencies are looked for through its
# own RUNPATH, not through that of the library or program that loaded it.
CARRIED := libunwind.so.8 liblzma.so.5 libdw.so.1 libelf.so.1 libz.so.1 libbz2.so.1.0
CARRIED_RUNPATH := libunwind.so.8 libdw.so.1 libelf.so.1
# The symbolizer built on its own for the library's metrics file (below), named where the library finds it.
SYMS_SO := $(shell sed -n 's/^\#define VT_SYMBOLIZER_SO "\(.*\)"$$/\1/p' analyze/vt_model.h)

SHARED_SRC := $(wildcard common/*.c)
SHARED_OBJ := $(SHARED_SRC:%.c=$(BUILD)/%.o)
# The reader's parser, model and Prometheus renderer are also the library's: its metrics file
# (VRAMTRACE_METRICS) has the reports' own figures (lib/roof/vt_metrics_file.c).
READER_SRC := $(wildcard analyze/*.c)
READER_OBJ := $(READER_SRC:%.c=$(BUILD)/%.o)
LIB_SRC := $(wildcard $(addsuffix /*.c,$(LIB_DIRS))) $(SHARED_SRC) $(READER_SRC)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
# The library's one C++ unit (lib/hooks/vt_torch_attach.cpp: the std::function torch's trace tracker
# takes), built with no exceptions and no RTTI so that it needs no C++ runtime; not optimized across
# files (its one function runs once), and checked to leave no C++ runtime symbol undefined.
LIB_CXX_SRC := $(wildcard $(addsuffix /*.cpp,$(LIB_DIRS)))
LIB_CXX_OBJ := $(LIB_CXX_SRC:%.cpp=$(BUILD)/%.o)
CXX := $(if $(findstring clang,$(CC)),clang++,g++)
LIB_CXXFLAGS := -std=c++17 -D_GNU_SOURCE $(WARN) -O2 -g -fno-exceptions -fno-rtti -fno-omit-frame-pointer -fPIC $(INCS) \
                -I$(CUDA_HOME)/include
# Only the hooks and the public API leave the library (lib/vramtrace.map says why).
LIB_EXPORTS := -Wl,--version-script=lib/vramtrace.map
TOOL_SRC := $(wildcard tools/*.c)
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/%.o)
PARSER_OBJ := $(BUILD)/analyze/vt_dumpfile.o $(BUILD)/common/vt_text.o
TEST_SRC := $(wildcard tests/t_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
PROG_BIN := $(BUILD)/tests/prog_driver $(BUILD)/tests/prog_rt_shared $(BUILD)/tests/prog_rt_static \
            $(BUILD)/tests/libnext_a.so $(BUILD)/tests/libnext_b.so $(BUILD)/tests/libsig_early.so \
            $(BUILD)/tests/prog_cxx $(BUILD)/tests/libcublas.so.13 $(BUILD)/tests/libnccl.so.2 $(BUILD)/tests/prog_plain \
            $(BUILD)/tests/native_pool $(BUILD)/tests/libpy_helpers.so $(BUILD)/tests/prog_newpy \
            $(BUILD)/tests/prog_safety $(BUILD)/tests/libpy_lines.so $(BUILD)/tests/libcupy_fake.so \
            $(BUILD)/tests/libxla_fake.so $(BUILD)/tests/cuda_leak $(BUILD)/tests/alloc_helper $(BUILD)/tests/c10_prog \
            $(BUILD)/tests/libslow_symbols.so
FAKE := $(BUILD)/fake/libcuda.so.1 $(BUILD)/fake/libcudart.so.13 $(BUILD)/fake/libcudart.so \
        $(BUILD)/fake/libcudart_static.a $(BUILD)/fake/libnvidia-ml.so.1

.PHONY: all deps check-deps test gpu-test demo bench fuzz clean install uninstall floors
all: check-deps $(BUILD)/floors.ok $(BUILD)/libvramtrace.so $(BUILD)/$(SYMS_SO) $(BUILD)/vramtrace $(addprefix $(BUILD)/,$(CARRIED)) $(FAKE)

# Debian packages this build needs: header -> package.
DEPS := /usr/include/x86_64-linux-gnu/libunwind.h:libunwind-dev /usr/include/uthash.h:uthash-dev /usr/bin/clang:clang \
        /usr/include/elfutils/libdwfl.h:libdw-dev /usr/bin/python3:python3 \
        /usr/include/python3.11/Python.h:python3-dev /usr/include/zlib.h:zlib1g-dev \
        /usr/bin/go:golang-go /usr/bin/promtool:prometheus /usr/bin/chromium:chromium /usr/bin/man:man-db \
        /usr/bin/patchelf:patchelf /usr/bin/prometheus-node-exporter:prometheus-node-exporter
define missing_pkgs
$(foreach d,$(DEPS),$(if $(wildcard $(firstword $(subst :, ,$(d)))),,$(lastword $(subst :, ,$(d)))))
endef

deps:
	@pkgs="$(strip $(missing_pkgs))"; \
	if [ -n "$$pkgs" ]; then \
	  echo "installing: $$pkgs"; \
	  if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
	    echo "error: missing Debian packages: $$pkgs (install them as root: apt-get install $$pkgs)" >&2; exit 1; fi; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$pkgs) >/dev/null || \
	    { echo "error: apt-get could not install: $$pkgs" >&2; exit 1; }; \
	fi

check-deps: deps
	@test -f $(CUDA_HOME)/include/cuda.h || { echo "error: no $(CUDA_HOME)/include/cuda.h: install the CUDA toolkit headers or set CUDA_HOME" >&2; exit 1; }
	@command -v prove >/dev/null || { echo "error: prove (Debian package perl) is missing" >&2; exit 1; }

$(BUILD)/lib/%.o: lib/%.cpp $(HDRS) | check-deps
	@mkdir -p $(dir $@)
	$(CXX) $(LIB_CXXFLAGS) -c $< -o $@
	@! nm -u $@ | grep -v ' vt_' | grep . || { echo "error: $< needs a C++ runtime symbol (above)" >&2; rm -f $@; exit 1; }

$(BUILD)/%.o: %.c $(HDRS) $(wildcard tools/*.h tests/*.h) | check-deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(OBJ_FLAGS) -fPIC -c $< -o $@

# An include that runs up a floor of lib/, or from lib/ into tools/, stops the build (lib/README.md).
floors:
	@sh tests/floors.sh $(LIB_DIRS)
$(BUILD)/floors.ok: tests/floors.sh $(LIB_SRC) $(LIB_CXX_SRC) $(HDRS) $(wildcard tools/*.h)
	@mkdir -p $(BUILD)
	@sh tests/floors.sh $(LIB_DIRS) && touch $@

# The bridge's Python code, built into the library as a C string, after the formats of the records it
# writes (lib/bridges/gen/vt_bridge_fmt.c prints them from common/vt_records.h).
$(BUILD)/gen/vt_bridge_fmt: lib/bridges/gen/vt_bridge_fmt.c common/vt_records.h common/vt_format.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -Icommon -o $@ $<
$(BUILD)/lib/vt_bridge_py.h: lib/bridges/vt_bridge.py $(BUILD)/gen/vt_bridge_fmt
	@mkdir -p $(dir $@)
	$(BUILD)/gen/vt_bridge_fmt > $(BUILD)/gen/vt_bridge_full.py && cat $< >> $(BUILD)/gen/vt_bridge_full.py
	{ echo '/* Generated from lib/bridges/vt_bridge.py and common/vt_records.h by the Makefile. */'; \
	  echo 'static const char vt_bridge_py[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $(BUILD)/gen/vt_bridge_full.py; echo ';'; } > $@
$(BUILD)/lib/stacks/vt_python.o: $(BUILD)/lib/vt_bridge_py.h

# The HTML report's page, built into the command as the two strings around its data marker.
$(BUILD)/lib/vt_html_page.h: tools/html/report.html
	@mkdir -p $(dir $@)
	{ echo '/* Generated from tools/html/report.html by the Makefile. */'; echo 'static const char vt_html_head[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $< | \
	  sed -e 's|^    "/\*VT_DATA\*/\\n"$$|;\nstatic const char vt_html_tail[] =|'; echo ';'; } > $@
$(BUILD)/tools/vt_html.o: $(BUILD)/lib/vt_html_page.h
# vramtrace --version names the git revision of a build from a checkout (rebuilt when the index moves).
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null)
$(BUILD)/tools/vt_help.o: ALL_CFLAGS += $(if $(GIT_REV),-DVT_GIT_REVISION='"$(GIT_REV)"')
$(BUILD)/tools/vt_help.o: $(wildcard .git/HEAD .git/index)

# The library is optimized across its files at link time: a hook's path runs through a dozen files
# (hooks, call, table, stacks, Python), and each call between them is code and a jump the next
# allocation fetches again, cold. Measured on a GPT-2 decode loop (docs/performance.md, 2026-12-05):
# 1.4 % and 4.3 % more throughput than the same code without it. The objects are fat, so the command
# and the tests, which link some of them, need no link-time optimization of their own.
# GCC's flags (the compiler the build is made and measured with); another compiler builds without.
LIB_LTO := $(if $(shell $(CC) --version 2>/dev/null | grep -q 'Free Software Foundation' && echo gcc),\
             -flto=auto -ffat-lto-objects -fno-semantic-interposition)
$(LIB_OBJ): private ALL_CFLAGS += $(LIB_LTO)
# And guided by a profile (GCC; PGO=0 builds without): the library is built once instrumented in
# $(BUILD)/pgo, runs the serving-shaped loop on the fake runtime (bench/pgo_train.sh), and is built again
# with what that run counted, so that each function's common path is laid out straight and its rare
# paths moved out of the way: cachegrind (bench/cachegrind.sh) counts 11 % fewer instructions and 10 %
# fewer code lines fetched an allocation. Code the run never reached is compiled as without a profile
# (-fprofile-partial-training). Any change to the library's sources trains it again.
# A static function's profile is known by the name its object's profile file is given, so both builds
# give the same one (-dumpbase), in $(PGO_DIR)/prof.
PGO ?= 1
PGO_DIR := $(BUILD)/pgo
LIB_PGO := $(if $(and $(LIB_LTO),$(filter 1,$(PGO))),-fprofile-use -fprofile-partial-training -Wno-missing-profile)
PGO_NAME = -dumpdir $(abspath $(PGO_DIR))/prof/ -dumpbase $(subst /,_,$<)
PGO_OBJ := $(LIB_SRC:%.c=$(PGO_DIR)/%.o)
$(PGO_DIR)/%.o: %.c $(HDRS) $(wildcard tools/*.h) $(BUILD)/lib/vt_bridge_py.h | check-deps
	@mkdir -p $(dir $@) $(PGO_DIR)/prof
	$(CC) $(ALL_CFLAGS) $(LIB_LTO) -fprofile-generate -fprofile-update=prefer-atomic $(PGO_NAME) -fPIC -c $< -o $@
$(PGO_DIR)/libvramtrace.so: $(PGO_OBJ) $(LIB_CXX_OBJ) lib/vramtrace.map $(BUILD)/libunwind.so.8 $(BUILD)/liblzma.so.5
	$(CC) $(WARN) $(CFLAGS) $(LIB_LTO) -fprofile-generate -fno-omit-frame-pointer -fPIC -shared -o $@ $(filter %.o,$^) \
	  -Wl,-rpath,'$$ORIGIN/..' -Wl,-z,nodelete $(LIB_EXPORTS) -lunwind -ldl -lpthread
$(PGO_DIR)/trained: $(PGO_DIR)/libvramtrace.so $(BUILD)/fake/libcudart.so.13 $(BUILD)/fake/torch/lib/libc10_cuda.so $(BUILD)/fake/torch/version.py bench/py_serving.py bench/turns.py \
  bench/pgo_train.sh bench/python312.sh
	sh bench/pgo_train.sh $(PGO_DIR) $(BUILD)
	@touch $@
ifneq ($(LIB_PGO),)
$(LIB_OBJ): private OBJ_FLAGS = $(LIB_PGO) $(PGO_NAME)
$(LIB_OBJ): $(PGO_DIR)/trained
endif
# The library finds its carried libunwind beside it (RUNPATH $ORIGIN), so that the build directory can
# be copied to a GPU machine that has no libunwind.
$(BUILD)/libvramtrace.so: $(LIB_OBJ) $(LIB_CXX_OBJ) lib/vramtrace.map
	$(CC) $(WARN) $(CFLAGS) $(LIB_LTO) $(LIB_PGO) -fno-omit-frame-pointer -fPIC -shared -o $@ $(filter %.o,$^) -Wl,-soname,libvramtrace.so -Wl,-rpath,'$$ORIGIN' -Wl,-z,nodelete $(LIB_EXPORTS) -lunwind -ldl -lpthread

# The command finds its carried libdw and zlib the same way, also from an install's bin/.
$(BUILD)/vramtrace: $(TOOL_OBJ) $(READER_OBJ) $(SHARED_OBJ)
	$(CC) -o $@ $^ -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib/vramtrace' -ldw -lelf -lz -lstdc++

# The command's symbolizer (tools/vt_symbols.c, libdw) on its own as well, for the library's metrics
# file: the library loads it from beside itself on its dumper thread, and only when it keeps a metrics file
# (lib/roof/vt_metrics_file.c), so that the file names a site by its line as the command's routes do, while
# a process with no metrics file never loads libdw. Only the symbolizer's three functions leave it.
SYMS_SRC := tools/vt_symbols.c tools/vt_symindex.c common/vt_text.c
$(BUILD)/syms/%.o: %.c $(HDRS) $(wildcard tools/*.h) | check-deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -c $< -o $@
$(BUILD)/$(SYMS_SO): $(SYMS_SRC:%.c=$(BUILD)/syms/%.o) tools/vt_symbols.map $(addprefix $(BUILD)/,$(CARRIED))
	$(CC) -shared -o $@ $(filter %.o,$^) -Wl,-soname,$(SYMS_SO) -Wl,-rpath,'$$ORIGIN' -Wl,-z,nodelete \
	  -Wl,--version-script=tools/vt_symbols.map -Wl,--no-undefined -L$(BUILD) -ldw -lelf -lz -lstdc++

$(addprefix $(BUILD)/,$(CARRIED)): | check-deps
	@mkdir -p $(dir $@)
	cp -L $$($(CC) -print-file-name=$(notdir $@)) $@
	chmod u+w $@
	$(if $(filter $(notdir $@),$(CARRIED_RUNPATH)),patchelf --set-rpath '$$ORIGIN' $@)

# Fake CUDA rig.
$(BUILD)/fake/libcuda.so.1: $(BUILD)/tests/fake/fake_cuda.o
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic-functions -lpthread
$(BUILD)/fake/libnvidia-ml.so.1: $(BUILD)/tests/fake/fake_nvml.o
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ -Wl,-soname,libnvidia-ml.so.1 -ldl
$(BUILD)/fake/libcudart.so.13: $(BUILD)/tests/fake/fake_cudart.o
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ -Wl,-soname,libcudart.so.13 -Wl,-Bsymbolic-functions -ldl -lpthread
$(BUILD)/fake/libcudart.so: $(BUILD)/fake/libcudart.so.13
	ln -sf libcudart.so.13 $@
$(BUILD)/fake/libcudart_static.a: $(BUILD)/tests/fake/fake_cudart.o
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The fake torch's CUDA library (tests/fake/c10): libc10_cuda.so under a torch/lib/ whose version.py says
# 2.11, as a torch install lays them out, for the trace tracker's tests (t_tracker.sh).
FAKE_TORCH := $(BUILD)/fake/torch/lib/libc10_cuda.so $(BUILD)/fake/torch/version.py
$(BUILD)/fake/torch/lib/libc10_cuda.so: tests/fake/c10/fake_c10_cuda.cpp $(BUILD)/fake/libcudart.so $(BUILD)/fake/libcuda.so.1
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O1 -g $(WARN) -fPIC -shared -I$(CUDA_HOME)/include -o $@ $< -L$(BUILD)/fake -lcudart \
	  $(BUILD)/fake/libcuda.so.1 -Wl,-rpath,'$$ORIGIN/../..'
$(BUILD)/fake/torch/version.py:
	@mkdir -p $(dir $@)
	printf "__all__ = ['__version__', 'debug']\n__version__ = '2.11.0+fake'\ndebug = False\n" > $@

# Test programs: exported symbols (-rdynamic) so stacks name their functions.
PROG_FLAGS := -rdynamic -Wl,-rpath,'$$ORIGIN/../fake'
$(BUILD)/tests/prog_driver: $(BUILD)/tests/progs/prog_driver.o $(BUILD)/tests/progs/prog_common.o $(BUILD)/fake/libcuda.so.1
	$(CC) -o $@ $(filter %.o,$^) $(PROG_FLAGS) -L$(BUILD)/fake -l:libcuda.so.1 -ldl -lpthread
$(BUILD)/tests/prog_safety: $(BUILD)/tests/progs/prog_safety.o $(BUILD)/tests/progs/prog_common.o $(BUILD)/fake/libcuda.so.1
	$(CC) -o $@ $(filter %.o,$^) $(PROG_FLAGS) -L$(BUILD)/fake -l:libcuda.so.1 -ldl -lpthread
$(BUILD)/tests/prog_rt_shared: $(BUILD)/tests/progs/prog_rt.o $(BUILD)/tests/progs/prog_common.o $(BUILD)/fake/libcudart.so $(BUILD)/fake/libcuda.so.1
	$(CC) -o $@ $(filter %.o,$^) $(PROG_FLAGS) -L$(BUILD)/fake -lcudart $(BUILD)/fake/libcuda.so.1 -ldl -lpthread
$(BUILD)/tests/prog_rt_static: $(BUILD)/tests/progs/prog_rt.o $(BUILD)/tests/progs/prog_common.o $(BUILD)/fake/libcudart_static.a $(BUILD)/fake/libcuda.so.1
	$(CC) -o $@ $(filter %.o,$^) $(PROG_FLAGS) $(BUILD)/fake/libcudart_static.a $(BUILD)/fake/libcuda.so.1 -ldl -lpthread
$(BUILD)/tests/prog_cxx: tests/progs/prog_cxx.cpp $(BUILD)/fake/libcuda.so.1
	$(CXX) -O2 -g $(WARN) -I$(CUDA_HOME)/include -o $@ $< $(PROG_FLAGS) -L$(BUILD)/fake -l:libcuda.so.1
$(BUILD)/tests/native_pool: examples/native_pool.c include/vramtrace.h $(BUILD)/fake/libcudart.so
	$(CC) $(ALL_CFLAGS) -o $@ $< $(PROG_FLAGS) -L$(BUILD)/fake -lcudart
# Every allocation through one wrapper (tests/t_labels.c): -O0 -g, every function a frame with its lines.
$(BUILD)/tests/c10_prog: tests/progs/c10_prog.c include/vramtrace.h $(FAKE_TORCH)
	$(CC) -O0 -g -std=c11 $(WARN) -Iinclude -o $@ $< $(PROG_FLAGS) -L$(BUILD)/fake/torch/lib -lc10_cuda \
	  -Wl,-rpath,'$$ORIGIN/../fake/torch/lib'
$(BUILD)/tests/alloc_helper: tests/progs/alloc_helper.c include/vramtrace.h $(BUILD)/fake/libcuda.so.1
	$(CC) -O0 -g -std=c11 $(WARN) -Iinclude -I$(CUDA_HOME)/include -o $@ $< $(PROG_FLAGS) -L$(BUILD)/fake -l:libcuda.so.1
# The demo's leaking server on the fake runtime, for tests that need a live program (t_metrics.sh).
$(BUILD)/tests/cuda_leak: examples/cuda_leak.cu $(BUILD)/fake/libcudart.so
	$(CC) -O2 -g -std=c11 -D_GNU_SOURCE -I$(CUDA_HOME)/include -o $@ -x c $< -x none $(PROG_FLAGS) -L$(BUILD)/fake -lcudart
# The walk's line-table reader and layouts on their own, for tests/progs/py_lines.py to call with ctypes.
$(BUILD)/tests/libpy_lines.so: $(BUILD)/lib/stacks/vt_pylines.o $(BUILD)/lib/stacks/vt_pylayout.o
	$(CC) -shared -o $@ $^
$(BUILD)/tests/t_pylayout: $(BUILD)/tests/t_pylayout.o $(BUILD)/tests/harness.o $(PARSER_OBJ) $(BUILD)/lib/stacks/vt_pylayout.o \
                           $(BUILD)/lib/stacks/vt_pywalk.o $(BUILD)/lib/stacks/vt_pylines.o
	$(CC) -o $@ $^ -lpthread
# The fake CuPy's native half (tests/fake/cupy): its name says cupy, as CuPy's modules' paths do.
$(BUILD)/tests/libcupy_fake.so: $(BUILD)/tests/progs/cupy_fake.o $(BUILD)/fake/libcudart.so
	$(CC) -shared -o $@ $< -L$(BUILD)/fake -lcudart -Wl,-rpath,'$$ORIGIN/../fake'
# The fake JAX's native half (tests/fake/jax): its name says xla, as jaxlib's and its plugin's do.
$(BUILD)/tests/libxla_fake.so: $(BUILD)/tests/progs/xla_fake.o $(BUILD)/fake/libcudart.so
	$(CC) -shared -o $@ $< -L$(BUILD)/fake -lcudart -Wl,-rpath,'$$ORIGIN/../fake'
$(BUILD)/tests/libpy_helpers.so: $(BUILD)/tests/progs/py_helpers.o $(BUILD)/fake/libcudart.so
	$(CC) -shared -o $@ $< -L$(BUILD)/fake -lcudart -Wl,-rpath,'$$ORIGIN/../fake' -lpthread
$(BUILD)/tests/prog_newpy: $(BUILD)/tests/progs/prog_newpy.o $(BUILD)/fake/libcudart.so
	$(CC) -o $@ $< $(PROG_FLAGS) -L$(BUILD)/fake -lcudart
$(BUILD)/tests/prog_plain: $(BUILD)/tests/progs/prog_plain.o $(BUILD)/tests/progs/prog_common.o
	$(CC) -o $@ $^ -ldl
$(BUILD)/tests/libnext_a.so: $(BUILD)/tests/progs/next_a.o $(BUILD)/tests/libnext_b.so
	$(CC) -shared -o $@ $< -L$(BUILD)/tests -Wl,--no-as-needed -l:libnext_b.so -Wl,--as-needed -Wl,-rpath,'$$ORIGIN' -ldl
$(BUILD)/tests/libnccl.so.2: $(BUILD)/tests/progs/fake_nccl.o $(BUILD)/fake/libcuda.so.1
	$(CC) -shared -o $@ $< -L$(BUILD)/fake -l:libcuda.so.1
$(BUILD)/tests/libcublas.so.13: $(BUILD)/tests/progs/fake_cublas.o $(BUILD)/fake/libcuda.so.1
	$(CC) -shared -o $@ $< -L$(BUILD)/fake -l:libcuda.so.1
$(BUILD)/tests/libnext_b.so: $(BUILD)/tests/progs/next_b.o
	$(CC) -shared -o $@ $^
$(BUILD)/tests/libsig_early.so: $(BUILD)/tests/progs/sig_early.o
	$(CC) -shared -o $@ $^
$(BUILD)/tests/libslow_symbols.so: $(BUILD)/tests/progs/slow_symbols.o
	$(CC) -shared -o $@ $^

$(BUILD)/tests/t_%: $(BUILD)/tests/t_%.o $(BUILD)/tests/harness.o $(PARSER_OBJ)
	$(CC) -o $@ $^ -lpthread
# The table's index on its own, with the slab it reads keys from.
$(BUILD)/tests/t_index: $(BUILD)/tests/t_index.o $(BUILD)/tests/harness.o $(PARSER_OBJ) $(BUILD)/lib/table/vt_index.o $(BUILD)/lib/table/vt_slab.o
	$(CC) -o $@ $^ -lpthread

# The symbol index against libdwfl itself.
$(BUILD)/tests/t_symindex: $(BUILD)/tests/t_symindex.o $(BUILD)/tests/harness.o $(PARSER_OBJ) $(BUILD)/tools/vt_symindex.o
	$(CC) -o $@ $^ -L$(BUILD) -Wl,-rpath,'$$ORIGIN/..' -ldw -lelf -lpthread

# The command once more under AddressSanitizer and UBSan, for the tests that feed it many sites.
$(BUILD)/asan/vramtrace: $(TOOL_SRC) $(READER_SRC) $(SHARED_SRC) $(wildcard tools/*.h) $(HDRS) $(BUILD)/lib/vt_html_page.h | check-deps
	@mkdir -p $(dir $@)
	$(SAN_CC) $(ALL_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -o $@ $(TOOL_SRC) $(READER_SRC) $(SHARED_SRC) \
	  -ldw -lelf -lz -lstdc++

# The library and the command under the sanitizers (always built with gcc, whose runtimes a test preloads
# into the uninstrumented test programs): AddressSanitizer with UBSan, and ThreadSanitizer. The dlsym
# hook and the real-function lookup stay uninstrumented: the sanitizer runtime calls dlsym while it
# starts, before its shadow memory exists.
SAN_CC ?= gcc
SAN_PLAIN := lib/hooks/vt_dlsym.c lib/hooks/vt_real.c
SAN_SRC := $(filter-out $(SAN_PLAIN),$(LIB_SRC))
SAN_FLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -O1 -g -fno-omit-frame-pointer -fPIC $(INCS) -Itools -I$(CUDA_HOME)/include
$(BUILD)/san-plain/%.o: %.c $(HDRS) | check-deps
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SAN_FLAGS) -c $< -o $@
$(BUILD)/asan/%.o: %.c $(HDRS) $(BUILD)/lib/vt_bridge_py.h | check-deps
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SAN_FLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all -c $< -o $@
$(BUILD)/tsan/%.o: %.c $(HDRS) $(BUILD)/lib/vt_bridge_py.h | check-deps
	@mkdir -p $(dir $@)
	$(SAN_CC) $(SAN_FLAGS) -fsanitize=thread -c $< -o $@
$(BUILD)/asan/libvramtrace.so: $(SAN_PLAIN:%.c=$(BUILD)/san-plain/%.o) $(SAN_SRC:%.c=$(BUILD)/asan/%.o)
	$(SAN_CC) -shared -fsanitize=address,undefined -o $@ $^ $(LIB_EXPORTS) -lunwind -ldl -lpthread
$(BUILD)/tsan/libvramtrace.so: $(SAN_PLAIN:%.c=$(BUILD)/san-plain/%.o) $(SAN_SRC:%.c=$(BUILD)/tsan/%.o)
	$(SAN_CC) -shared -fsanitize=thread -o $@ $^ $(LIB_EXPORTS) -lunwind -ldl -lpthread
$(BUILD)/tsan/vramtrace: $(TOOL_SRC) $(READER_SRC) $(SHARED_SRC) $(wildcard tools/*.h) $(HDRS) $(BUILD)/lib/vt_html_page.h | check-deps
	@mkdir -p $(dir $@)
	$(SAN_CC) $(ALL_CFLAGS) -O1 -fsanitize=thread -o $@ $(TOOL_SRC) $(READER_SRC) $(SHARED_SRC) -ldw -lelf -lz -lstdc++
# Where the sanitizers' runtimes are, for the test that preloads them.
$(BUILD)/san.env: | check-deps
	@mkdir -p $(dir $@)
	printf 'asan=%s\ntsan=%s\n' "$$(readlink -f $$($(SAN_CC) -print-file-name=libasan.so))" \
	  "$$(readlink -f $$($(SAN_CC) -print-file-name=libtsan.so))" > $@
SAN_BIN := $(BUILD)/asan/vramtrace $(BUILD)/asan/libvramtrace.so $(BUILD)/tsan/libvramtrace.so $(BUILD)/tsan/vramtrace \
           $(BUILD)/san.env

# Both compilers must build the code warning-free: the library and the command are checked with clang
# too (syntax and warnings only: gcc builds what runs).
$(BUILD)/clang.ok: $(LIB_SRC) $(TOOL_SRC) $(HDRS) $(wildcard tools/*.h) $(BUILD)/lib/vt_bridge_py.h $(BUILD)/lib/vt_html_page.h | check-deps
	clang $(ALL_CFLAGS) -fsyntax-only $(LIB_SRC) $(TOOL_SRC)
	@touch $@

test: all $(BUILD)/clang.ok $(PROG_BIN) $(TEST_BIN) $(SAN_BIN) $(BUILD)/fuzz_dumpfile
	prove -e '' $(TEST_BIN) tests/t_floors.sh tests/t_labels.sh tests/t_tracker.sh tests/t_fuzz.sh tests/t_pprof.sh tests/t_metrics.sh tests/t_attacks.sh tests/t_dumpwait.sh tests/t_html.sh tests/t_cli.sh tests/t_chroot.sh tests/t_install.sh tests/t_readme.sh tests/t_prometheus.sh

# On a GPU machine: the real-GPU suite (tests/gpu). It builds only when build/ is not there, since a GPU
# machine may lack the headers: build/ can be carried over from a CPU machine instead.
gpu-test:
	@[ -f $(BUILD)/libvramtrace.so ] && [ -x $(BUILD)/vramtrace ] || $(MAKE) all
	sh tests/gpu/run.sh

demo: all
	sh examples/demo.sh

bench: all
	sh bench/run.sh

# The reader under libFuzzer (clang), seeded with dumps the rig writes: make fuzz FUZZ_SECONDS=600.
# make test builds it and runs it briefly (tests/t_fuzz.sh), so it cannot stop building unnoticed.
FUZZ_SECONDS ?= 60
# It renders every output through the verbs themselves, so it links the whole command but its main().
FUZZ_SRC := tests/fuzz/fuzz_dumpfile.c tests/fuzz/vt_json_check.c $(filter-out tools/vramtrace.c,$(TOOL_SRC)) $(READER_SRC) \
            $(SHARED_SRC)
$(BUILD)/fuzz_dumpfile: $(FUZZ_SRC) $(wildcard tools/*.h tests/fuzz/*.h) $(HDRS) $(BUILD)/lib/vt_html_page.h | check-deps
	clang -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -Iinclude -Icommon -Ianalyze -Itools -I$(BUILD)/lib \
	  -Itests/fuzz $(FUZZ_SRC) -ldw -lelf -lz -lstdc++ -o $@
fuzz: all $(PROG_BIN) $(BUILD)/fuzz_dumpfile
	sh tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD)

# make install [PREFIX=/usr/local] [DESTDIR=]: the command in bin/; the library with the libraries it
# carries in lib/vramtrace/ (a folder of its own, so that its libdw or libunwind never shadow the system's
# for other programs; the command finds it there, and so does LD_PRELOAD=PREFIX/lib/vramtrace/...);
# the public header; pkg-config's file. make uninstall removes exactly these.
PREFIX ?= /usr/local
INSTALLED := bin/vramtrace lib/vramtrace/libvramtrace.so lib/vramtrace/$(SYMS_SO) $(addprefix lib/vramtrace/,$(CARRIED)) \
             include/vramtrace.h lib/pkgconfig/vramtrace.pc \
             share/man/man1/vramtrace.1 share/man/man3/vramtrace.3 share/bash-completion/completions/vramtrace \
             share/doc/vramtrace/JSON.md share/doc/vramtrace/FORMAT.md share/doc/vramtrace/vramtrace-alerts.yml
# The folders install makes, deepest first: uninstall removes each that it leaves empty (never PREFIX).
INSTALLED_DIRS := share/doc/vramtrace share/doc share/bash-completion/completions share/bash-completion \
                  share/man/man1 share/man/man3 share/man share lib/pkgconfig lib/vramtrace lib include bin
# vramtrace(1) and the bash completion are written by the command itself, from the tables its help comes from.
$(BUILD)/vramtrace.1: $(BUILD)/vramtrace
	$(BUILD)/vramtrace help --man > $@
$(BUILD)/vramtrace.bash: $(BUILD)/vramtrace
	$(BUILD)/vramtrace help --bash-completion > $@
install: all $(BUILD)/vramtrace.1 $(BUILD)/vramtrace.bash
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/vramtrace $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man3
	install -m 644 $(BUILD)/vramtrace.1 $(DESTDIR)$(PREFIX)/share/man/man1/vramtrace.1
	install -m 644 docs/man/vramtrace.3 $(DESTDIR)$(PREFIX)/share/man/man3/vramtrace.3
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 $(BUILD)/vramtrace.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/vramtrace
	install -m 755 $(BUILD)/vramtrace $(DESTDIR)$(PREFIX)/bin/vramtrace
	install -m 755 $(BUILD)/libvramtrace.so $(BUILD)/$(SYMS_SO) $(addprefix $(BUILD)/,$(CARRIED)) $(DESTDIR)$(PREFIX)/lib/vramtrace/
	install -m 644 include/vramtrace.h $(DESTDIR)$(PREFIX)/include/vramtrace.h
	install -d $(DESTDIR)$(PREFIX)/share/doc/vramtrace
	install -m 644 docs/JSON.md docs/FORMAT.md examples/prometheus/vramtrace-alerts.yml $(DESTDIR)$(PREFIX)/share/doc/vramtrace/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e "s|@VERSION@|$$(sed -n 's/^#define VRAMTRACE_VERSION \"\(.*\)\"$$/\1/p' include/vramtrace.h)|" \
	  vramtrace.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/vramtrace.pc
uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))
	@for d in $(INSTALLED_DIRS); do [ ! -d "$(DESTDIR)$(PREFIX)/$$d" ] || rmdir --ignore-fail-on-non-empty "$(DESTDIR)$(PREFIX)/$$d"; done
.SECONDARY:
