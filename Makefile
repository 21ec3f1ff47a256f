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
CPPFLAGS  += -Iinclude -Iuser/lib -I$(BUILD) -MMD -MP -D_GNU_SOURCE
BPF_CFLAGS := -target bpf -O2 -g -mcpu=v3 -Wall -Iinclude -Ibpf -I$(ARCH_INC)
LDLIBS    += -lbpf -lelf -lz -lyaml -ljansson -lhiredis -lmicrohttpd -lpthread

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS   := $(wildcard bpf/*.bpf.c)
BPF_OBJS   := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
SKELS      := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
LIB_SRCS   := $(wildcard user/lib/*.c)
LIB_OBJS   := $(patsubst user/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS))
LIB        := $(BUILD)/libxrl.a
PROGS      := $(patsubst user/%.c,$(BUILD)/%,$(wildcard user/*.c))
TEST_DIRS  := $(notdir $(filter-out tests/lib tests/fuzz tests/data,$(patsubst %/,%,$(wildcard tests/*/))))
TEST_LIB_OBJS := $(patsubst tests/lib/%.c,$(BUILD)/tests/lib/%.o,$(wildcard tests/lib/*.c))
TEST_BINS  := $(patsubst %,$(BUILD)/tests/test-%,$(TEST_DIRS))

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps test bench demo clean install uninstall fmt

all: $(SKELS) $(LIB) $(PROGS)

deps:
	$(Q)scripts/deps.sh

$(BUILD)/%.bpf.o: bpf/%.bpf.c Makefile | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(BUILD)/lib/%.o: user/lib/%.c $(SKELS) Makefile | $(BUILD)/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

$(BUILD)/%: user/%.c $(LIB) Makefile
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $< $(LIB) $(LDLIBS) -o $@

$(BUILD)/tests/lib/%.o: tests/lib/%.c $(SKELS) Makefile | $(BUILD)/tests/lib
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) -Itests/lib $(CFLAGS) -c $< -o $@

.SECONDEXPANSION:
$(BUILD)/tests/test-%: $$(wildcard tests/$$*/*.c) $(TEST_LIB_OBJS) $(LIB) Makefile | $(BUILD)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(CPPFLAGS) -Itests/lib $(CFLAGS) $(filter %.c,$^) \
		$(TEST_LIB_OBJS) $(LIB) $(LDLIBS) -lcriterion -o $@

# Runs every test binary; installs what is missing first, so that on a
# fresh machine this is the only command needed.
test:
	$(Q)scripts/deps.sh --if-missing
	$(Q)$(MAKE) --no-print-directory all $(TEST_BINS)
	$(Q)$(MAKE) --no-print-directory fuzz-smoke
	$(Q)scripts/run-tests $(TEST_BINS)

# libFuzzer targets: tests/fuzz/fuzz_NAME.c, seeds in tests/fuzz/corpus/NAME/
# (and tests/fuzz/NAME.dict if any), built with clang against the library
# under ASan and UBSan. `make fuzz` runs each for FUZZ_SECONDS, `make test`
# for FUZZ_SMOKE_SECONDS.
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 15
FUZZ_CFLAGS   := -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=all \
		 -fsanitize=fuzzer-no-link,address,undefined
FUZZ_LIB_OBJS := $(patsubst user/lib/%.c,$(BUILD)/fuzz/lib/%.o,$(LIB_SRCS))
FUZZ_BINS     := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

$(BUILD)/fuzz/lib/%.o: user/lib/%.c $(SKELS) Makefile
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(CPPFLAGS) $(FUZZ_CFLAGS) -c $< -o $@

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS) Makefile
	$(call msg,FUZZ-LD,$@)
	$(Q)$(CLANG) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< \
		$(FUZZ_LIB_OBJS) $(LDLIBS) -o $@

.PHONY: fuzz fuzz-smoke
fuzz fuzz-smoke: $(SKELS)
	$(Q)$(MAKE) --no-print-directory $(FUZZ_BINS)
	$(Q)scripts/fuzz-run $(if $(filter fuzz,$@),$(FUZZ_SECONDS),$(FUZZ_SMOKE_SECONDS)) $(FUZZ_BINS)

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

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INST_FILES))
	@if cmp -s examples/policy.yaml $(INST_CONF); then \
		rm -f $(INST_CONF); \
	elif [ -e $(INST_CONF) ]; then \
		echo "uninstall: $(INST_CONF) differs from the example: kept"; \
	fi
	-@rmdir $(dir $(INST_CONF)) 2>/dev/null || true

fmt:
	clang-format -i bpf/*.[ch] include/*.h user/*.c user/lib/*.[ch] tests/*/*.[ch]

clean:
	rm -rf $(BUILD)

$(BUILD) $(BUILD)/lib $(BUILD)/tests $(BUILD)/tests/lib:
	$(Q)mkdir -p $@

-include $(wildcard $(BUILD)/*.d $(BUILD)/lib/*.d $(BUILD)/tests/lib/*.d)
-include $(wildcard $(BUILD)/fuzz/lib/*.d)
