# Build rules of the benchmarks (make -f scripts/bench/bench.mk, from the
# top directory, after the main `make all`). The limiter itself comes from
# the main build: its skeleton and the layer archives build/libxrl-*.a.

BUILD     ?= build
BENCH     := $(BUILD)/bench
CLANG     ?= clang
CC        ?= gcc
BPFTOOL   ?= bpftool
ARCH_INC  := /usr/include/$(shell uname -m)-linux-gnu

CFLAGS    ?= -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration
CPPFLAGS  += -Iinclude -Iuser/core -Iuser/datapath -Iuser/daemon -I$(BUILD) -I$(BENCH) -Iscripts/bench -Itests/lib \
	     -MMD -MP -D_GNU_SOURCE
BPF_CFLAGS := -target bpf -O2 -g -mcpu=v3 -Wall -Iinclude -Iscripts/bench -I$(ARCH_INC)
LDLIBS    += -lxdp -lbpf -lelf -lz -lyaml -ljansson -lhiredis -lmicrohttpd -lpthread -lm

XRL_LIBS   := $(BUILD)/libxrl-daemon.a $(BUILD)/libxrl-datapath.a $(BUILD)/libxrl-core.a
BENCH_BPF  := $(wildcard scripts/bench/*.bpf.c)
BENCH_SKELS := $(patsubst scripts/bench/%.bpf.c,$(BENCH)/%.skel.h,$(BENCH_BPF))
# What the tests share with the benchmarks: frames, and the Redis launcher.
BENCH_TEST_LIB := tests/lib/packet.c tests/lib/redis_server.c
BENCH_SRCS := $(filter-out %.bpf.c scripts/bench/prevhost.c,$(wildcard scripts/bench/*.c)) $(BENCH_TEST_LIB)
BENCH_OBJS := $(patsubst %.c,$(BENCH)/obj/%.o,$(notdir $(BENCH_SRCS)))

.DELETE_ON_ERROR:
.SECONDARY:

$(BENCH)/xrl-bench: $(BENCH_OBJS) $(wildcard $(BUILD)/libxrl-*.a) scripts/bench/bench.mk
	@printf '  %-8s %s\n' LINK $@
	@$(CC) $(CFLAGS) $(BENCH_OBJS) $(XRL_LIBS) $(LDLIBS) -o $@

$(BENCH)/%.bpf.o: scripts/bench/%.bpf.c scripts/bench/bench.mk | $(BENCH)
	@printf '  %-8s %s\n' BPF $@
	@$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(BENCH)/%.skel.h: $(BENCH)/%.bpf.o
	@printf '  %-8s %s\n' GEN-SKEL $@
	@$(BPFTOOL) gen skeleton $< > $@

$(BENCH)/obj/%.o: scripts/bench/%.c $(BENCH_SKELS) scripts/bench/bench.mk | $(BENCH)/obj
	@printf '  %-8s %s\n' CC $@
	@$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BENCH)/obj/%.o: tests/lib/%.c scripts/bench/bench.mk | $(BENCH)/obj
	@printf '  %-8s %s\n' CC $@
	@$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BENCH) $(BENCH)/obj:
	@mkdir -p $@

-include $(wildcard $(BENCH)/*.d $(BENCH)/obj/*.d)
