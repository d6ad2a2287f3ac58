# np build. Conventions (so adding a module never needs a Makefile edit):
#   common/*.c             -> build/libnpcommon.a      (used by all three binaries)
#   record/nprec.c         -> main of nprec; record/*.c (others) -> build/libnprec.a
#   analyze/npanalyze.c    -> main of npanalyze; analyze/*.c (others) -> build/libnpanalyze.a
#   report/npreport.c      -> main of npreport; report/*.c (others) -> build/libnpreport.a
#   bpf/NAME.bpf.c         -> build/bpf/NAME.bpf.o + build/NAME.skel.h (needs clang+bpftool+libbpf)
#   tests/unit/test_*.c    -> unit test linked with analyze+report+common libs (no libbpf)
#   tests/unit/rtest_*.c   -> unit test that also links libnprec.a + libbpf (built only with BPF)
#   tests/fuzz/fuzz_*.c    -> libFuzzer target (clang -fsanitize=fuzzer)
#   tests/tools/*.c        -> helper programs for tests/benches (fixture generators ...)
#   tests/e2e/*.sh         -> end-to-end tests (root, namespaces); each ends with "N passed, N failed"

CC        ?= gcc
CLANG     ?= clang
BPFTOOL   ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
O         := build
VERSION   := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
# Scripts (tests, benches, demo) find the binaries through NP_BUILD.
export NP_BUILD ?= $(abspath $(O))
export O
GITREV    := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

WARN      := -Wall -Wextra -Werror
BASECFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -Icommon -Irecord -Ianalyze -Ireport -Ibpf -I$(O) \
             -DNP_VERSION='"$(VERSION) ($(GITREV))"'
CFLAGS    ?= -O2 -g
ALL_CFLAGS := $(BASECFLAGS) $(CFLAGS)
LDLIBS_COMMON := -lzstd -lmsgpackc -lcsv -ljansson -lz -lm -lpthread

# BPF toolchain present? The analyzer binaries never need it.
HAVE_BPF := $(shell command -v $(CLANG) >/dev/null 2>&1 && test -x $(BPFTOOL) && \
              pkg-config --exists libbpf 2>/dev/null && test -r /sys/kernel/btf/vmlinux && echo 1)
ifeq ($(NO_BPF),1)
HAVE_BPF :=
endif

COMMON_SRC  := $(wildcard common/*.c)
RECORD_SRC  := $(filter-out record/nprec.c,$(wildcard record/*.c))
ANALYZE_SRC := $(filter-out analyze/npanalyze.c,$(wildcard analyze/*.c))
REPORT_SRC  := $(filter-out report/npreport.c,$(wildcard report/*.c))
BPF_SRC     := $(wildcard bpf/*.bpf.c)
SKELS       := $(patsubst bpf/%.bpf.c,$(O)/%.skel.h,$(BPF_SRC))
UNIT_SRC    := $(wildcard tests/unit/test_*.c)
RUNIT_SRC   := $(wildcard tests/unit/rtest_*.c)
FUZZ_SRC    := $(wildcard tests/fuzz/fuzz_*.c)
TOOL_SRC    := $(wildcard tests/tools/*.c)

objs = $(patsubst %.c,$(O)/$(1)/%.o,$(2))

.PHONY: all analyze record deps test unit unit-asan fuzz fuzz-short e2e bench bench-record bench-hookfloor bench-tpdispatch \
        bench-analyze bench-patterns demo clean fixtures tools check-deps

ifeq ($(HAVE_BPF),1)
all: analyze record tools
else
all: analyze tools
	@echo "np: nprec skipped: clang, bpftool, libbpf-dev or /sys/kernel/btf/vmlinux missing (run 'make deps' as root); npanalyze and npreport built" >&2
endif

analyze: $(O)/npanalyze $(O)/npreport npanalyze npreport
record: $(O)/nprec nprec

# Top-level symlinks so './nprec' works from the checkout.
nprec npanalyze npreport: %: $(O)/%
	@ln -sf $(O)/$@ $@

# ---------- objects ----------
$(O)/n/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(O)/libnpcommon.a: $(call objs,n,$(COMMON_SRC))
	@rm -f $@; ar rcs $@ $^
$(O)/libnpanalyze.a: $(call objs,n,$(ANALYZE_SRC)) | $(O)/dummy.o
	@rm -f $@; ar rcs $@ $^ $(O)/dummy.o
$(O)/libnpreport.a: $(call objs,n,$(REPORT_SRC)) | $(O)/dummy.o
	@rm -f $@; ar rcs $@ $^ $(O)/dummy.o
$(O)/dummy.o:
	@mkdir -p $(O); echo 'typedef int np_dummy_t;' > $(O)/dummy.c; $(CC) -c $(O)/dummy.c -o $@

ANALYZE_LIBS := $(O)/libnpanalyze.a $(O)/libnpreport.a $(O)/libnpcommon.a

$(O)/npanalyze: $(O)/n/analyze/npanalyze.o $(ANALYZE_LIBS)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_COMMON)
$(O)/npreport: $(O)/n/report/npreport.o $(ANALYZE_LIBS)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_COMMON)

# ---------- BPF ----------
$(O)/vmlinux.h:
	@mkdir -p $(O)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(O)/vmlinux.h $(wildcard bpf/*.h) $(wildcard common/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -mcpu=v3 $(WARN) -Wno-unused-function \
	    -I$(O) -Ibpf -Icommon -c $< -o $@

$(O)/%.skel.h: $(O)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

RECORD_OBJS := $(call objs,n,$(RECORD_SRC))
$(RECORD_OBJS) $(O)/n/record/nprec.o $(call objs,n,$(RUNIT_SRC)): $(SKELS)
$(O)/libnprec.a: $(RECORD_OBJS) | $(O)/dummy.o
	@rm -f $@; ar rcs $@ $^ $(O)/dummy.o

$(O)/nprec: $(O)/n/record/nprec.o $(O)/libnprec.a $(O)/libnpcommon.a
	$(CC) $(ALL_CFLAGS) -o $@ $^ -lbpf -lelf -lsodium $(LDLIBS_COMMON)

# ---------- tools for tests and benches ----------
TOOLS := $(patsubst tests/tools/%.c,$(O)/tools/%,$(TOOL_SRC))
tools: $(TOOLS)
$(O)/tools/%: $(O)/n/tests/tools/%.o $(ANALYZE_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_COMMON)
# hookfloor (hook cost floor, bench/hookfloor.sh) needs libbpf and its skeleton;
# without BPF the rule above builds its stub instead.
ifeq ($(HAVE_BPF),1)
$(O)/tools/hookfloor: tests/tools/hookfloor.c $(O)/hookfloor.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DNP_HAVE_BPF -o $@ $< -lbpf -lelf
$(O)/tools/tpdispatch: tests/tools/tpdispatch.c $(O)/tpdispatch.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DNP_HAVE_BPF -o $@ $< -lbpf -lelf
endif

# ---------- unit tests (plain and ASan+UBSan) ----------
UNITS      := $(patsubst tests/unit/%.c,$(O)/unit/%,$(UNIT_SRC))
UNITS_ASAN := $(patsubst tests/unit/%.c,$(O)/unit-asan/%,$(UNIT_SRC))
RUNITS     := $(patsubst tests/unit/%.c,$(O)/unit/%,$(RUNIT_SRC))
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

$(O)/unit/test_%: $(O)/n/tests/unit/test_%.o $(ANALYZE_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS_COMMON)
$(O)/unit/rtest_%: $(O)/n/tests/unit/rtest_%.o $(O)/libnprec.a $(ANALYZE_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ -lbpf -lelf -lsodium $(LDLIBS_COMMON)

# Sanitized build: every object again under build/a/.
$(O)/a/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O1 $(ASAN_FLAGS) -MMD -MP -c $< -o $@
ASAN_LIBOBJS := $(call objs,a,$(COMMON_SRC) $(ANALYZE_SRC) $(REPORT_SRC))
$(O)/unit-asan/%: $(O)/a/tests/unit/%.o $(ASAN_LIBOBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS_COMMON)
# the recorder's unit tests (libbpf, root) under the sanitizers too
RUNITS_ASAN := $(patsubst tests/unit/%.c,$(O)/unit-asan/%,$(RUNIT_SRC))
ASAN_RECOBJS := $(call objs,a,$(RECORD_SRC))
$(ASAN_RECOBJS) $(call objs,a,$(RUNIT_SRC)): $(SKELS)
$(O)/unit-asan/rtest_%: $(O)/a/tests/unit/rtest_%.o $(ASAN_RECOBJS) $(ASAN_LIBOBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o $@ $^ -lbpf -lelf -lsodium $(LDLIBS_COMMON)

ifeq ($(HAVE_BPF),1)
unit: $(UNITS) $(RUNITS) tools
	@tests/run_units.sh plain $(UNITS) $(RUNITS)
else
unit: $(UNITS) tools
	@tests/run_units.sh plain $(UNITS)
endif
ifeq ($(HAVE_BPF),1)
unit-asan: $(UNITS_ASAN) $(RUNITS_ASAN) tools
	@tests/run_units.sh asan $(UNITS_ASAN) $(RUNITS_ASAN)
else
unit-asan: $(UNITS_ASAN) tools
	@tests/run_units.sh asan $(UNITS_ASAN)
endif

# ---------- fuzzing (libFuzzer) ----------
FUZZERS := $(patsubst tests/fuzz/%.c,$(O)/fuzz/%,$(FUZZ_SRC))
FUZZ_CFLAGS := $(BASECFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
$(O)/fuzz/%: tests/fuzz/%.c $(COMMON_SRC) $(ANALYZE_SRC) $(REPORT_SRC) $(wildcard common/*.h analyze/*.h report/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(COMMON_SRC) $(ANALYZE_SRC) $(REPORT_SRC) $(LDLIBS_COMMON)
# process-level fuzz (tests/fuzz/procfuzz.sh): npanalyze and npreport built
# with ASan+UBSan, fed structure-aware mutants from build/tools/npmutate
ASAN_BINS := $(O)/asan/npanalyze $(O)/asan/npreport
$(O)/asan/npanalyze: $(O)/a/analyze/npanalyze.o $(ASAN_LIBOBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS_COMMON)
$(O)/asan/npreport: $(O)/a/report/npreport.o $(ASAN_LIBOBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS_COMMON)
# the clock-sync parser (record/csmsg.c) verifies MACs with libsodium
$(O)/fuzz/fuzz_csmsg: LDLIBS_COMMON += -lsodium
$(O)/fuzz/fuzz_csmsg: $(wildcard record/csmsg.* record/csguard.*)
FUZZ_SECONDS ?= 300
fuzz: $(FUZZERS) $(ASAN_BINS) $(O)/tools/npmutate
	@PROCFUZZ_BUILD=$(O) tests/run_fuzz.sh $(FUZZ_SECONDS) $(FUZZERS)
fuzz-short: $(FUZZERS) $(ASAN_BINS) $(O)/tools/npmutate
	@PROCFUZZ_BUILD=$(O) tests/run_fuzz.sh $${FUZZ_SHORT_SECONDS:-60} $(FUZZERS)

# ---------- fixtures ----------
fixtures: tools
	@NP_BUILD=$(O) tests/make_fixtures.sh

# ---------- top-level jobs ----------
deps:
	@.ci/deps.sh

check-deps:
	@.ci/deps.sh --check

# make test installs what it needs (idempotent), builds, then runs every suite and
# ends with one aggregate "N passed, N failed" line.
test: check-deps
	@$(MAKE) --no-print-directory all
	@O=$(O) NP_BUILD=$(abspath $(O)) tests/run_all.sh

e2e: all
	@NP_BUILD=$(abspath $(O)) tests/run_e2e.sh

bench: all
	@bench/run_all.sh
bench-record: all
	@bench/record.sh
# the cost of empty programs on nprec's default hooks (the floor; ~20 min)
bench-hookfloor: all
	@NP_BUILD=$(abspath $(O)) bench/hookfloor.sh
bench-tpdispatch: all
	@NP_BUILD=$(abspath $(O)) bench/tpdispatch.sh
bench-analyze: all
	@bench/analyze.sh
bench-patterns: all
	@bench/patterns.sh
.PHONY: bench-patterns-real
bench-patterns-real: all
	@bench/patterns_real.sh
# npreport compare as a CI gate: A/A and A/B pairs of real reruns (~25 min)
bench-compare: all
	@NP_BUILD=$(abspath $(O)) bench/compare.sh

demo: check-deps
	@$(MAKE) --no-print-directory all
	@tests/demo.sh

clean:
	rm -rf $(O) nprec npanalyze npreport

# Keep intermediate objects and BPF objects (no rebuild on every make).
.SECONDARY:

-include $(shell find $(O) -name '*.d' 2>/dev/null)
