# xdp-ratelimit build. `make` builds everything, `make test` runs the
# tests (installing dependencies first when something is missing),
# `make bench` the benchmarks, `make demo` the sandbox demo. V=1 is verbose.

BUILD     ?= build
PREFIX    ?= /usr/local
SBINDIR   ?= $(PREFIX)/sbin
MANDIR    ?= $(PREFIX)/share/man
UNITDIR   ?= $(PREFIX)/lib/systemd/system
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
CLANG     ?= clang
CC        ?= gcc
BPFTOOL   ?= bpftool
ARCH_INC  := /usr/include/$(shell uname -m)-linux-gnu

CFLAGS    ?= -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration
CPPFLAGS  += -Iinclude -I$(BUILD) -MMD -MP -D_GNU_SOURCE
BPF_CFLAGS := -target bpf -O2 -g -mcpu=v3 -Wall -Iinclude -Ibpf -I$(ARCH_INC)
LDLIBS_CORE := -lyaml -ljansson -lm
# -lxdp: libxdp (pkg-config --libs libxdp says no more on Debian 12).
LDLIBS    += -lxdp -lbpf -lelf -lz -lyaml -ljansson -lhiredis -lmicrohttpd -lpthread -lm -lsystemd

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# user/ is four layers, each its own archive. A layer calls only the ones
# below it, and its objects see only their headers, so a call the wrong
# way fails to compile or to link:
#   core (limits, CIDR, policy model and file; no libbpf)
#   <- datapath (load, pin, attach, apply, stats, map walks; libbpf)
#   <- cli (xdp-ratelimit)   and   <- daemon (xdp-ratelimitd)
LAYERS     := core datapath cli daemon
INC_core     := -Iuser/core
INC_datapath := $(INC_core) -Iuser/datapath
INC_cli      := $(INC_datapath) -Iuser/cli
INC_daemon   := $(INC_datapath) -Iuser/daemon
INC_ALL      := $(INC_datapath) -Iuser/cli -Iuser/daemon
# Link order: a layer before the ones it calls.
LIBS_core     := $(BUILD)/libxrl-core.a
LIBS_datapath := $(BUILD)/libxrl-datapath.a $(LIBS_core)
LIBS_cli      := $(BUILD)/libxrl-cli.a $(LIBS_datapath)
LIBS_daemon   := $(BUILD)/libxrl-daemon.a $(LIBS_datapath)
LIBS_ALL      := $(BUILD)/libxrl-daemon.a $(BUILD)/libxrl-cli.a $(LIBS_datapath)
ENTRIES    := user/cli/xdp-ratelimit.c user/daemon/xdp-ratelimitd.c
PROGS      := $(BUILD)/xdp-ratelimit $(BUILD)/xdp-ratelimitd

BPF_SRCS   := $(wildcard bpf/*.bpf.c)
SKELS      := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
LIB_SRCS   := $(filter-out $(ENTRIES),$(foreach l,$(LAYERS),$(wildcard user/$(l)/*.c)))
LIB_OBJS   := $(patsubst user/%.c,$(BUILD)/%.o,$(LIB_SRCS))
layer_objs = $(patsubst user/%.c,$(BUILD)/%.o,$(filter-out $(ENTRIES),$(wildcard user/$(1)/*.c)))

# Test-only BPF programs: tests/bpf/progs/NAME.bpf.c, skeletons in
# build/tests/progs/.
TEST_BPF_SRCS := $(wildcard tests/bpf/progs/*.bpf.c)
TEST_SKELS := $(patsubst tests/bpf/progs/%.bpf.c,$(BUILD)/tests/progs/%.skel.h,$(TEST_BPF_SRCS))
TEST_DIRS  := $(notdir $(filter-out tests/lib tests/fuzz tests/data,$(patsubst %/,%,$(wildcard tests/*/))))
TEST_LIB_OBJS := $(patsubst tests/lib/%.c,$(BUILD)/tests/lib/%.o,$(wildcard tests/lib/*.c))
TEST_BINS  := $(patsubst %,$(BUILD)/tests/test-%,$(TEST_DIRS))
test_objs = $(patsubst tests/%.c,$(BUILD)/tests/%.o,$(wildcard tests/$(1)/*.c))
# tests/unit needs nothing but the core: no libbpf, no servers, no root.
TEST_INC_unit    := $(INC_core)
TEST_LIBS_unit   := $(LIBS_core)
# What of tests/lib the unit tests use: only what needs the core layer.
TEST_LIB_OBJS_unit := $(BUILD)/tests/lib/policy_text.o
TEST_LDLIBS_unit := $(LDLIBS_CORE)
# tests/unit needs nothing but the core: no libbpf, no servers, no root.

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test bench demo docs clean install uninstall fmt

all: $(SKELS) $(foreach l,$(LAYERS),$(BUILD)/libxrl-$(l).a) $(PROGS)

deps:
	$(Q)scripts/deps.sh

$(BUILD)/%.bpf.o: bpf/%.bpf.c Makefile | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/progs/%.bpf.o: tests/bpf/progs/%.bpf.c Makefile
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

define layer_rules
$(BUILD)/$(1)/%.o: user/$(1)/%.c $(SKELS) Makefile
	$$(call msg,CC,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(INC_$(1)) $$(CFLAGS) -c $$< -o $$@

$(BUILD)/libxrl-$(1).a: $(call layer_objs,$(1))
	$$(call msg,AR,$$@)
	$$(Q)rm -f $$@
	$$(Q)$$(AR) rcs $$@ $$^
endef
$(foreach l,$(LAYERS),$(eval $(call layer_rules,$(l))))

$(BUILD)/xdp-ratelimit: $(BUILD)/cli/xdp-ratelimit.o $(LIBS_cli) Makefile
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIBS_cli) $(LDLIBS) -o $@

$(BUILD)/xdp-ratelimitd: $(BUILD)/daemon/xdp-ratelimitd.o $(LIBS_daemon) Makefile
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $< $(LIBS_daemon) $(LDLIBS) -o $@

# Test objects one by one, each with its dependency file.
$(BUILD)/tests/lib/%.o: tests/lib/%.c $(SKELS) Makefile
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(INC_ALL) -Itests/lib $(CFLAGS) -c $< -o $@

.SECONDEXPANSION:
$(BUILD)/tests/%.o: tests/%.c $(SKELS) $(TEST_SKELS) Makefile
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(or $(TEST_INC_$(patsubst %/,%,$(dir $*))),$(INC_ALL)) \
		-Itests/lib -I$(BUILD)/tests/progs $(CFLAGS) -c $< -o $@

$(BUILD)/tests/test-%: $$(call test_objs,$$*) $$(if $$(TEST_LIBS_$$*),$$(TEST_LIB_OBJS_$$*),$(TEST_LIB_OBJS)) \
		$$(or $$(TEST_LIBS_$$*),$(LIBS_ALL)) Makefile
	$(call msg,TEST-LD,$@)
	$(Q)$(CC) $(CFLAGS) $(filter %.o,$^) $(or $(TEST_LIBS_$*),$(LIBS_ALL)) \
		$(or $(TEST_LDLIBS_$*),$(LDLIBS)) -lcriterion -o $@

# Runs every test binary; installs what is missing first, so that on a
# fresh machine this is the only command needed.
test:
	$(Q)scripts/deps.sh --if-missing
	$(Q)$(MAKE) --no-print-directory all $(TEST_BINS)
	$(Q)$(MAKE) --no-print-directory fuzz-smoke
	$(Q)scripts/run-tests $(TEST_BINS)

# Boots Debian's own kernels under qemu (6.1 and 6.12 must pass; 5.10,
# below the floor, must refuse) with the build inside: the BPF suite, an
# end-to-end run on virtio_net in native mode, xdp-filter beside it.
# Needs root; KERNELS="6.12:bpf,e2e ..." picks (scripts/kernels/run).
.PHONY: test-kernels
test-kernels:
	$(Q)scripts/deps.sh --if-missing
	$(Q)$(MAKE) --no-print-directory all $(BUILD)/tests/test-bpf
	$(Q)BUILD=$(BUILD) scripts/kernels/run $(KERNELS)

# libFuzzer targets: tests/fuzz/fuzz_NAME.c, seeds in tests/fuzz/corpus/NAME/
# (and tests/fuzz/NAME.dict if any), built with clang against the library
# under ASan and UBSan. `make fuzz` runs each for FUZZ_SECONDS, `make test`
# for FUZZ_SMOKE_SECONDS.
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 15
FUZZ_CFLAGS   := -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=all \
		 -fsanitize=fuzzer-no-link,address,undefined
FUZZ_LIB_OBJS := $(patsubst user/%.c,$(BUILD)/fuzz/%.o,$(LIB_SRCS))
FUZZ_BINS     := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

$(BUILD)/fuzz/%.o: user/%.c $(SKELS) Makefile
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) $(INC_ALL) $(FUZZ_CFLAGS) -c $< -o $@

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS) Makefile
	$(call msg,FUZZ-LD,$@)
	$(Q)$(CLANG) $(CPPFLAGS) $(INC_ALL) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< \
		$(FUZZ_LIB_OBJS) $(LDLIBS) -o $@

.PHONY: fuzz fuzz-smoke
fuzz fuzz-smoke: $(SKELS)
	$(Q)$(MAKE) --no-print-directory $(FUZZ_BINS)
	$(Q)scripts/fuzz-run $(if $(filter fuzz,$@),$(FUZZ_SECONDS),$(FUZZ_SMOKE_SECONDS)) $(FUZZ_BINS)

# The parts of the docs the code's tables make (tests/docs/docgen.c):
# key lists, option lists, verdicts, pins, the completion's words.
# tests/docs (in make test) fails until they are written.
docs: all $(BUILD)/tests/test-docs
	$(Q)XRL_DOCS_WRITE=1 $(BUILD)/tests/test-docs \
		--filter 'docs/every_generated_part*' >/dev/null

bench:
	$(Q)scripts/deps.sh --if-missing
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/bench/run

demo:
	$(Q)scripts/deps.sh --if-missing
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo

# Installs the tools, man pages, systemd unit, bash completion and, when
# none is there, the example policy as $(SYSCONFDIR)/xdp-ratelimit/policy.yaml
# (an operator's file is never overwritten). uninstall removes all of it
# but a policy that differs from the example.
INST_CONF := $(DESTDIR)$(SYSCONFDIR)/xdp-ratelimit/policy.yaml
INST_FILES := $(addprefix $(SBINDIR)/,$(notdir $(PROGS))) \
	$(addprefix $(MANDIR)/man8/,$(notdir $(wildcard docs/man/*.8))) \
	$(addprefix $(MANDIR)/man5/,$(notdir $(wildcard docs/man/*.5))) \
	$(UNITDIR)/xdp-ratelimitd.service $(BASHCOMPDIR)/xdp-ratelimit

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(BASHCOMPDIR) $(dir $(INST_CONF))
	install -m 0755 $(PROGS) $(DESTDIR)$(SBINDIR)/
	install -m 0644 docs/man/*.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 docs/man/*.5 $(DESTDIR)$(MANDIR)/man5/
	sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		user/dist/xdp-ratelimitd.service >$(BUILD)/xdp-ratelimitd.service
	install -m 0644 $(BUILD)/xdp-ratelimitd.service $(DESTDIR)$(UNITDIR)/
	install -m 0644 user/dist/xdp-ratelimit.bash $(DESTDIR)$(BASHCOMPDIR)/xdp-ratelimit
	@if [ -e $(INST_CONF) ]; then \
		echo "install: $(INST_CONF) is there: kept"; \
	else \
		install -m 0644 examples/policy.yaml $(INST_CONF); \
	fi

# uninstall refuses while the program is pinned (attached, or pins left):
# the tools it removes are what detach it and remove them. It asks the
# xdp-ratelimit it removes (cleanup --check) about PIN_DIR: by default the
# tool's own pin directory, when DESTDIR is empty (a DESTDIR tree is asked
# only when PIN_DIR is given). FORCE=1 uninstalls anyway, warning.
UNINSTALL_TOOL = $(firstword $(wildcard $(DESTDIR)$(SBINDIR)/xdp-ratelimit \
	$(BUILD)/xdp-ratelimit))

uninstall:
	@if [ -n "$(UNINSTALL_TOOL)" ] && \
	    { [ -z "$(DESTDIR)" ] || [ -n "$(PIN_DIR)" ]; } && \
	    ! why=$$($(UNINSTALL_TOOL) $(if $(PIN_DIR),-P $(PIN_DIR)) \
		     cleanup --check 2>&1 >/dev/null); then \
		if [ -n "$(FORCE)" ]; then \
			echo "uninstall: warning: $$why; uninstalling anyway" \
			     "(FORCE=1): no tool will be left to undo it" >&2; \
		else \
			echo "uninstall: refused: $$why (FORCE=1 uninstalls" \
			     "anyway)" >&2; \
			exit 1; \
		fi; \
	fi
	rm -f $(addprefix $(DESTDIR),$(INST_FILES))
	@if cmp -s examples/policy.yaml $(INST_CONF); then \
		rm -f $(INST_CONF); \
	elif [ -e $(INST_CONF) ]; then \
		echo "uninstall: $(INST_CONF) differs from the example: kept"; \
	fi
	-@rmdir $(dir $(INST_CONF)) 2>/dev/null || true

fmt:
	clang-format -i bpf/*.[ch] include/*.h user/*/*.[ch] tests/*/*.[ch]

clean:
	rm -rf $(BUILD)

$(BUILD):
	$(Q)mkdir -p $@

# Dependency files are made by the compiler, never by a rule: without this
# a stale one (an older build's test-NAME.d) would match test-% and be
# overwritten with a binary.
%.d: ;
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
