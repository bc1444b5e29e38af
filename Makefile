# precprobe — the only entry points a newcomer needs:
#   make          build bin/precprobe          make deps    install build/test dependencies (Debian)
#   make test     deps, build, all tests       make run     deps, build, run the quick-start job
#   make bench    benchmarks (ratios)          make fuzz    build the fuzz targets (clang/libFuzzer)
# Build rule of the project: never -ffast-math; -ffp-contract=off so GCC does not fuse a*b+c into
# an FMA behind our back; nvcc with --fmad=false for the same reason.

CC      := gcc
PKGS    := mpfr gmp hdf5 libcjson nettle
STD     := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
WARN    := -Wall -Wextra -Werror -Wshadow -Wno-format-truncation
FPFLAGS := -ffp-contract=off -fno-fast-math -frounding-math
# Recursively expanded: pkg-config runs when a recipe needs it, after `make deps` has run.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lmpfr -lgmp -lhdf5 -lcjson -lnettle)
# Include roots, lowest layer first (ARCHITECTURE.md): base/ (errors, thread pool), kernels/ (the
# arithmetic), reference/ (the truth), src/ (the program; its headers are named by layer,
# "core/tensor.h"). tools/check-includes.sh checks who may include whom.
INCLUDES := -Ibase -Ikernels -Ireference -Isrc
CPPFLAGS = $(INCLUDES) $(PKG_CFLAGS)
CFLAGS_rel := $(STD) $(WARN) $(FPFLAGS) -O2 -g
CFLAGS_san := $(STD) $(WARN) $(FPFLAGS) -O1 -g -fno-omit-frame-pointer \
              -fsanitize=address,undefined -fno-sanitize-recover=all
LDFLAGS_san := -fsanitize=address,undefined
LIBS = $(PKG_LIBS) -lpthread -lm

# ---- CUDA: built only when nvcc is found (PATH, or /usr/local/cuda/bin) ---------------------
NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
ifneq ($(NVCC),)
CUDA_HOME  := $(patsubst %/bin/nvcc,%,$(NVCC))
NVFLAGS    := -O2 -std=c++17 --fmad=false $(INCLUDES) -Xcompiler -Wall -Xcompiler -ffp-contract=off \
              -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
              -gencode arch=compute_90,code=compute_90
CU_SRCS    := $(wildcard kernels/cuda/*.cu)
CU_OBJS    := $(patsubst %.cu,build/rel/%.o,$(CU_SRCS))
CUDA_DEF   := -DPP_HAVE_CUDA=1
# tools/probe_wgmma_fp8.cu: a stand-alone measurement of Hopper's wgmma (sm_90a only), built with
# the tests so that it keeps compiling; run by hand on an H100/H200 (README "FP8 accumulation probe")
CUDA_TOOLS := build/rel/tools/probe_wgmma_fp8
CUDA_LIBS  := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart -lstdc++
endif

LIB_SRCS  := $(wildcard base/*.c) $(filter-out src/cli/main.c,$(wildcard src/*/*.c)) $(wildcard kernels/*.c) $(wildcard kernels/cpu/*.c) \
             $(wildcard reference/*.c)
TEST_SRCS := $(wildcard tests/test_*.c)
# The CUDA tests (tests/test_*_cuda.c) need the CUDA objects: built only when nvcc is found; with
# a GPU absent at run time they skip with a message.
ifeq ($(NVCC),)
TEST_SRCS := $(filter-out %_cuda.c,$(TEST_SRCS))
endif
TESTS_rel := $(patsubst tests/%.c,build/rel/tests/%,$(TEST_SRCS))
# The sanitizer build is CPU-only: ASan and the CUDA runtime do not share an address space well.
TESTS_san := $(patsubst tests/%.c,build/san/tests/%,$(filter-out %_cuda.c,$(TEST_SRCS)))
BENCH_SRCS := $(wildcard tools/bench_*.c)
ifeq ($(NVCC),)
BENCH_SRCS := $(filter-out %_cuda.c,$(BENCH_SRCS))
endif

.PHONY: all deps deps-slurm test unit unit-san e2e run bench fuzz clean test-browser check-full check-includes
all: bin/precprobe

deps:
	@bash tools/install-deps.sh

# Optional: a one-node Slurm (slurmctld, slurmd, munge) for tests/e2e/slurm.sh, which skips without it.
deps-slurm:
	@bash tools/install-deps.sh --slurm

# ---- objects ---------------------------------------------------------------------------------
# The release objects rebuild when their flags change (a build with nvcc, then `make NVCC=`):
# the stamp is rewritten only when the flags differ from the last build's.
FLAGS_STAMP := build/rel/flags.stamp
FLAGS_NOW   := $(CFLAGS_rel) $(CUDA_DEF) $(NVFLAGS)
$(shell mkdir -p build/rel && (echo '$(FLAGS_NOW)' | cmp -s - $(FLAGS_STAMP) || echo '$(FLAGS_NOW)' > $(FLAGS_STAMP)))

build/rel/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CUDA_DEF) $(CFLAGS_rel) -MMD -MP -c $< -o $@
build/san/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_san) -MMD -MP -c $< -o $@
build/rel/%.o: %.cu $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(NVFLAGS) -MMD -MP -c $< -o $@

# The CPU AdamW lane loops (kernels/cpu/adamw_lanes.c) vectorise only with: -O3 (the vectoriser's
# full cost model); -fno-math-errno (sqrtf is the instruction, no errno call; the same value);
# -fno-trapping-math (branches on uniform knobs if-convert: both sides computed, one selected;
# no value changes, FP exception flags are never read); -fno-rounding-math (fmaf and sqrtf become
# pure: nothing in precprobe leaves round-to-nearest); more PHI arguments for if-conversion (the
# fp16 rounding's merge points have more than GCC 12's default 4). Still -ffp-contract=off, no
# -ffast-math.
LANES_FLAGS := -O3 -fno-math-errno -fno-trapping-math -fno-rounding-math --param max-tree-if-conversion-phi-args=16
build/rel/kernels/cpu/adamw_lanes.o: CFLAGS_rel += $(LANES_FLAGS)
build/san/kernels/cpu/adamw_lanes.o: CFLAGS_san += -fno-math-errno -fno-trapping-math -fno-rounding-math
# The AdamW reference's sign-keeping error sets (reference/adamw_ref_lohner.c, adamw_ref_coupled.c):
# -O3 so their dot products (four fixed partial sums) and column updates vectorise; still
# -ffp-contract=off, no -ffast-math (same values at -O2).
build/rel/reference/adamw_ref_lohner.o build/rel/reference/adamw_ref_coupled.o: CFLAGS_rel += -O3
# The double-double reference's lanes (reference/adamw_ref_dd_lanes.c): the lane loops' flags above.
build/rel/reference/adamw_ref_dd_lanes.o: CFLAGS_rel += $(LANES_FLAGS)
build/san/reference/adamw_ref_dd_lanes.o: CFLAGS_san += -fno-math-errno -fno-trapping-math -fno-rounding-math

build/rel/libprecprobe.a: $(patsubst %.c,build/rel/%.o,$(LIB_SRCS)) $(CU_OBJS)
	@rm -f $@; ar rcs $@ $^
build/san/libprecprobe.a: $(patsubst %.c,build/san/%.o,$(LIB_SRCS))
	@rm -f $@; ar rcs $@ $^

bin/precprobe: build/rel/src/cli/main.o build/rel/libprecprobe.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_rel) $^ -o $@ $(LIBS) $(CUDA_LIBS)

build/rel/tests/%: build/rel/tests/%.o build/rel/libprecprobe.a
	$(CC) $(CFLAGS_rel) $^ -o $@ $(LIBS) -lcmocka $(CUDA_LIBS)
build/san/tests/%: build/san/tests/%.o build/san/libprecprobe.a
	$(CC) $(CFLAGS_san) $(LDFLAGS_san) $^ -o $@ $(LIBS) -lcmocka
# The fuzz targets' seed corpora replayed through their harnesses in the sanitizer build, without
# libFuzzer (tests/fuzz/replay_main.c): run by `make test` with the sanitizer tests.
FUZZ_REPLAY := $(patsubst tests/fuzz/fuzz_%.c,build/san/fuzz/replay_%,$(wildcard tests/fuzz/fuzz_*.c))
build/san/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay_main.c build/san/libprecprobe.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_san) $(LDFLAGS_san) -DPP_FUZZ_CORPUS='"tests/fuzz/$*"' $^ -o $@ $(LIBS)
build/rel/tools/probe_wgmma_fp8: tools/probe_wgmma_fp8.cu
	@mkdir -p $(@D)
	$(NVCC) -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a $< -o $@
build/rel/tools/%: build/rel/tools/%.o build/rel/libprecprobe.a
	$(CC) $(CFLAGS_rel) $^ -o $@ $(LIBS) $(CUDA_LIBS)

# ---- the README's commands -------------------------------------------------------------------
# The benchmarks are built (not run) too, so a change that breaks `make bench` fails here.
test: deps
	@$(MAKE) --no-print-directory check-includes
	@$(MAKE) --no-print-directory -j2 bin/precprobe build/rel/tools/adamw_emulate $(TESTS_rel) $(TESTS_san) \
	  $(patsubst tools/%.c,build/rel/tools/%,$(BENCH_SRCS)) $(CUDA_TOOLS) $(FUZZ_REPLAY)
	@bash tools/run-tests.sh $(TESTS_rel) -- $(TESTS_san) $(FUZZ_REPLAY)

# The layers' include rules (tools/check-includes.sh), after its self-test shows it can fail.
check-includes:
	@bash tools/check-includes.sh --self-test
	@bash tools/check-includes.sh

unit: deps
	@$(MAKE) --no-print-directory -j2 $(TESTS_rel)
	@bash tools/run-tests.sh --no-e2e $(TESTS_rel)

run: deps
	@$(MAKE) --no-print-directory -j2 bin/precprobe
	@bash tools/run-example.sh

bench: deps
	@$(MAKE) --no-print-directory -j2 bin/precprobe $(patsubst tools/%.c,build/rel/tools/%,$(BENCH_SRCS))
	@for b in $(patsubst tools/%.c,build/rel/tools/%,$(BENCH_SRCS)); do $$b || exit $$?; done

# The full-size cases against their baselines (minutes: te-cp-821 is TE PR 821's own size);
# make test checks the small versions of the same experiments.
FULL_CASES := te-cp-821 anyprecision-adamw bf16-training
check-full: deps
	@$(MAKE) --no-print-directory -j2 bin/precprobe
	@for c in $(FULL_CASES); do echo "check $$c"; \
	  bin/precprobe check cases/$$c.toml --baseline reports/baselines/$$c.h5 || exit $$?; done

# The HTML report in a real browser (Chromium headless, screenshot checked); skips without one.
test-browser: deps
	@$(MAKE) --no-print-directory -j2 bin/precprobe
	@bash tools/test-browser.sh

# ---- fuzzing (clang + libFuzzer): make fuzz builds; tools/fuzz.sh TARGET SECONDS runs -------
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
fuzz: deps
	@mkdir -p build/fuzz
	@for f in $(FUZZ_SRCS); do n=$$(basename $$f .c); \
	  echo "clang $$f -> build/fuzz/$$n"; \
	  clang $(STD) $(CPPFLAGS) -g -O1 -ffp-contract=off -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    $$f $(LIB_SRCS) -o build/fuzz/$$n $(LIBS) || exit 1; done

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' 2>/dev/null)
