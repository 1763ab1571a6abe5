# Hourglass: make | make test | make demo | make bench | make asan
#
# Everything builds into $(BUILD); `make asan` uses build/asan with
# AddressSanitizer and UBSan and runs the same tests against it.

BUILD    ?= build
SAN      ?=
CC       ?= cc
PYTHON   ?= python3

DPDK_CFLAGS := $(shell pkg-config --cflags libdpdk 2>/dev/null)
DPDK_LIBS   := $(shell pkg-config --libs libdpdk 2>/dev/null)
EXT_LIBS    := -levent -lprotobuf-c -ljansson -lpthread -lm
BPF_LIBS    := $(shell pkg-config --libs libbpf 2>/dev/null)
# the XDP program is built with clang for the kernel: it needs the
# architecture's asm/ headers
MULTIARCH   := $(shell gcc -print-multiarch 2>/dev/null)
BPF_CFLAGS  := -O2 -g -Wall -Wextra -Werror -target bpf -I/usr/include/$(MULTIARCH)

# the invariants' RTE_ASSERTs: on in the sanitizer build and with DEBUG=1
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
	-DRTE_ENABLE_ASSERT
endif
# ThreadSanitizer (make tsan): the unit tests only; the daemon's DPDK
# libraries are not instrumented, and it does not model fences (-Wno-tsan:
# the doorbells pair a fence with atomics, never with plain data)
# Criterion's runner cannot start under it: the unit tests build against
# tests/unit/tsan's stand-in for its header (a runner of its own) instead
CRITERION := -lcriterion
ifeq ($(SAN),thread)
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer -DRTE_ENABLE_ASSERT -Wno-tsan \
	-Itests/unit/tsan
CRITERION :=
endif
ifeq ($(DEBUG),1)
SANFLAGS += -DRTE_ENABLE_ASSERT
endif

CFLAGS_COMMON := -std=c11 -D_GNU_SOURCE -DALLOW_EXPERIMENTAL_API -O2 -g -Wall -Wextra -Werror \
	-I$(BUILD)/gen -Iproto -Ilibclient $(DPDK_CFLAGS) $(SANFLAGS)
CFLAGS  := $(CFLAGS_COMMON) $(EXTRA_CFLAGS)
LDFLAGS := $(SANFLAGS)

# `make V=1` shows the commands
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-7s %s\n' $(1) $(2)
endif

# the release, from the public header (HG_VERSION): one place to change
VERSION := $(shell sed -n 's/^\#define HG_VERSION "\(.*\)"/\1/p' libclient/hourglass.h)
SONAME  := libhgclient.so.$(firstword $(subst ., ,$(VERSION)))

BIN := $(BUILD)/bin
LIB := $(BUILD)/lib
OBJ := $(BUILD)/obj
GEN := $(BUILD)/gen

PROTO_C := $(GEN)/hgctl.pb-c.c
PROTO_O := $(OBJ)/gen/hgctl.pb-c.o $(OBJ)/proto/ctl_frame.o

FASTPATH_SRC := $(wildcard fastpath/*.c)
SLOWPATH_SRC := $(wildcard slowpath/*.c)
CLIENT_SRC   := $(wildcard libclient/*.c) $(wildcard policy/*.c) libclient/gt_switch.S

FASTPATH_O := $(FASTPATH_SRC:%.c=$(OBJ)/%.o)
SLOWPATH_O := $(SLOWPATH_SRC:%.c=$(OBJ)/%.o)
CLIENT_CORE_O := $(patsubst %.S,$(OBJ)/pic/%.o,$(CLIENT_SRC:%.c=$(OBJ)/pic/%.o))
CLIENT_O   := $(CLIENT_CORE_O) $(OBJ)/pic/gen/hgctl.pb-c.o \
	      $(OBJ)/pic/proto/ctl_frame.o

POLICY_O := $(patsubst %.c,$(OBJ)/%.o,$(wildcard policy/*.c))

TARGETS := $(BIN)/hourglassd $(BIN)/hgctl $(BIN)/hgload $(BIN)/hg-memif-bridge \
	   $(BIN)/hg-echo $(BIN)/hg-idle \
	   $(BIN)/udp-echo $(BIN)/be-sqrt $(BIN)/hg-policy-sim $(BIN)/hg-kv $(BIN)/wake-probe \
	   $(LIB)/libhgclient.so.$(VERSION) $(LIB)/$(SONAME) $(LIB)/libhgclient.so \
	   $(LIB)/libhgclient.a

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

# A fresh machine: say in one line what installs what is missing, rather
# than fail deep in the build. The goals that install it first skip this.
ifeq ($(filter deps clean test demo bench asan tsan fuzz,$(MAKECMDGOALS)),)
HAVE_DEPS := $(shell command -v protoc-c >/dev/null && \
	pkg-config --exists libdpdk libevent libprotobuf-c jansson libbpf && \
	command -v clang >/dev/null && \
	test -f /usr/include/leveldb/c.h && echo yes)
ifneq ($(HAVE_DEPS),yes)
$(error build dependencies missing: run `make deps` (tools/install-deps.sh) as root)
endif
endif

.PHONY: all deps test unit integration demo bench asan tsan clean fuzz fuzz-build \
	fuzz-short fuzz-targets install
.SECONDARY:

all: $(TARGETS)

deps:
	@tools/install-deps.sh

$(GEN)/hgctl.pb-c.c $(GEN)/hgctl.pb-c.h: proto/hgctl.proto
	@mkdir -p $(GEN)
	$(call say,PROTOC,$<)
	$(Q)protoc-c --c_out=$(GEN) -Iproto $<

# generated code is not ours to lint
$(OBJ)/gen/%.o: $(GEN)/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) -Wno-unused-parameter -c $< -o $@
$(OBJ)/pic/gen/%.o: $(GEN)/%.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -Wno-unused-parameter -c $< -o $@

$(OBJ)/%.o: %.c $(GEN)/hgctl.pb-c.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@
$(OBJ)/pic/%.o: %.c $(GEN)/hgctl.pb-c.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -c $< -o $@

$(OBJ)/pic/%.o: %.S
	@mkdir -p $(dir $@)
	$(call say,AS,$<)
	$(Q)$(CC) -fPIC -c $< -o $@

# the XDP programs (bpf/), built with clang for the kernel, then built
# into the binary that loads them as bytes (xdp_obj.S): the daemon's, for
# net_af_xdp links, and hgload's link replay (--replay) and bounce (--bounce)
XDP_OBJ := $(BUILD)/bpf/xdp_shed.o
XDP_REPLAY_OBJ := $(BUILD)/bpf/xdp_replay.o
XDP_BOUNCE_OBJ := $(BUILD)/bpf/xdp_bounce.o
$(XDP_OBJ): bpf/xdp_shed.c bpf/xdp_parse.h proto/hg_xdp.h
$(XDP_REPLAY_OBJ): bpf/xdp_replay.c bpf/xdp_parse.h proto/hg_xdp_replay.h
$(XDP_BOUNCE_OBJ): bpf/xdp_bounce.c bpf/xdp_parse.h proto/hg_xdp_bounce.h
$(XDP_OBJ) $(XDP_REPLAY_OBJ) $(XDP_BOUNCE_OBJ): $(BUILD)/bpf/%.o:
	@mkdir -p $(dir $@)
	$(call say,BPF,bpf/$*.c)
	$(Q)clang $(BPF_CFLAGS) -c bpf/$*.c -o $@
$(OBJ)/bpf/xdp_shed_obj.o: bpf/xdp_obj.S $(XDP_OBJ)
	@mkdir -p $(dir $@)
	$(call say,AS,$@)
	$(Q)$(CC) -c -DHG_XDP_OBJ='"$(XDP_OBJ)"' -DHG_XDP_SYM=hg_xdp_obj $< -o $@
$(OBJ)/bpf/xdp_replay_obj.o: bpf/xdp_obj.S $(XDP_REPLAY_OBJ)
	@mkdir -p $(dir $@)
	$(call say,AS,$@)
	$(Q)$(CC) -c -DHG_XDP_OBJ='"$(XDP_REPLAY_OBJ)"' -DHG_XDP_SYM=hgr_obj $< -o $@
$(OBJ)/bpf/xdp_bounce_obj.o: bpf/xdp_obj.S $(XDP_BOUNCE_OBJ)
	@mkdir -p $(dir $@)
	$(call say,AS,$@)
	$(Q)$(CC) -c -DHG_XDP_OBJ='"$(XDP_BOUNCE_OBJ)"' -DHG_XDP_SYM=hgb_obj $< -o $@

$(BIN)/hourglassd: $(FASTPATH_O) $(SLOWPATH_O) $(PROTO_O) $(OBJ)/policy/coresync.o \
		$(OBJ)/bpf/xdp_shed_obj.o
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(DPDK_LIBS) $(BPF_LIBS) $(EXT_LIBS)

$(LIB)/libhgclient.a: $(CLIENT_O)
	@mkdir -p $(dir $@)
	$(call say,AR,$@)
	@rm -f $@	# ar adds: a renamed object would stay in the archive
	$(Q)$(AR) rcs $@ $^

# only the functions of hourglass.h are exported; the file carries the
# release, the soname the major version, libhgclient.so is for the linker
$(LIB)/libhgclient.so.$(VERSION): $(CLIENT_O)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) $^ -o $@ \
		-lprotobuf-c -lpthread
$(LIB)/$(SONAME): $(LIB)/libhgclient.so.$(VERSION)
	$(Q)ln -sf $(notdir $<) $@
$(LIB)/libhgclient.so: $(LIB)/$(SONAME)
	$(Q)rm -f $@ && ln -s $(notdir $<) $@

$(BIN)/hgctl: $(OBJ)/tools/hgctl.o $(PROTO_O)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lprotobuf-c -ljansson

# hgload: kernel sockets (a link replay or bounce through an XDP program:
# --replay, --bounce), or its own memif client (--memif), no EAL
$(BIN)/hgload: $(OBJ)/tools/hgload.o $(OBJ)/tools/hgload_memif.o $(OBJ)/tools/memif_client.o \
		$(OBJ)/tools/hgload_xdp.o $(OBJ)/bpf/xdp_replay_obj.o \
		$(OBJ)/bpf/xdp_bounce_obj.o \
		$(OBJ)/tools/tool_eal.o \
		$(OBJ)/tools/rx_map.o
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(DPDK_LIBS) $(BPF_LIBS) -ljansson -lpthread -lm

# the tests' memif cable: kernel sockets to a net_memif daemon
$(BIN)/hg-memif-bridge: $(OBJ)/tools/hg_memif_bridge.o $(OBJ)/tools/tool_eal.o \
		$(OBJ)/tools/rx_map.o
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ $(DPDK_LIBS) -ljansson

$(BIN)/hg-echo: $(OBJ)/tools/hg_echo.o $(LIB)/libhgclient.a
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lprotobuf-c -lpthread

$(BIN)/hg-idle: $(OBJ)/tools/hg_idle.o $(LIB)/libhgclient.a
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lprotobuf-c -lpthread

# the LevelDB server, hg-kv (Debian's libleveldb-dev)
$(BIN)/hg-kv: $(OBJ)/tools/hg_kv.o $(LIB)/libhgclient.a
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lleveldb -lprotobuf-c -lpthread

# the kernel baseline of bench/versus-kernel: plain sockets, no DPDK
$(BIN)/udp-echo: $(OBJ)/tools/udp_echo.o
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lpthread

# bench/coresync's best-effort program: square roots per second
$(BIN)/be-sqrt: $(OBJ)/tools/be_sqrt.o
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lm -lpthread

# bench/wake_cost's probe: a cross-CPU eventfd wake-up, timed
$(BIN)/wake-probe: $(OBJ)/tools/wake_probe.o
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lpthread

# bench/policies' simulator: the dispatch policies of policy/, simulated
$(BIN)/hg-policy-sim: $(OBJ)/bench/sim/policies.o $(POLICY_O)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lm

# ---- tests ----

# the pure-logic pieces, linked without EAL
UNIT_LINK := $(OBJ)/fastpath/parse.o $(OBJ)/fastpath/bufpart.o $(OBJ)/fastpath/dp.o $(OBJ)/fastpath/tx.o \
	$(OBJ)/fastpath/memif.o $(OBJ)/fastpath/xdp_slots.o \
	$(OBJ)/fastpath/drops.o $(OBJ)/fastpath/offcpu.o \
	$(OBJ)/slowpath/config.o $(OBJ)/slowpath/settings.o $(OBJ)/slowpath/config_file.o $(OBJ)/slowpath/refill.o $(OBJ)/slowpath/publish.o $(OBJ)/slowpath/credit_pool.o \
	$(OBJ)/slowpath/arena.o $(OBJ)/slowpath/region.o $(OBJ)/slowpath/uid_conns.o \
	$(OBJ)/slowpath/xdp_link.o $(OBJ)/bpf/xdp_shed_obj.o $(OBJ)/slowpath/log.o \
	$(OBJ)/slowpath/preempt_timer.o $(OBJ)/slowpath/tenant_cfg.o $(POLICY_O) $(PROTO_O)

# the memif peers' map is a tool's, read with jansson
$(BUILD)/tests/test_rx_map: UNIT_EXTRA = $(OBJ)/tools/rx_map.o $(POLICY_O)
$(BUILD)/tests/test_rx_map: $(OBJ)/tools/rx_map.o

# the NIC send's billing, over a memif link of the test's own
$(BUILD)/tests/test_xmit: UNIT_EXTRA = $(OBJ)/fastpath/xmit.o $(POLICY_O)
$(BUILD)/tests/test_xmit: $(OBJ)/fastpath/xmit.o

# the library's tests link its objects (without its copy of the protocol),
# and its own (PIC) copy of policy/
$(BUILD)/tests/test_green $(BUILD)/tests/test_worker_sched $(BUILD)/tests/test_rpc: UNIT_EXTRA = $(CLIENT_CORE_O)
$(BUILD)/tests/test_green $(BUILD)/tests/test_worker_sched $(BUILD)/tests/test_rpc: $(CLIENT_CORE_O)

$(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(UNIT_LINK)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $(filter-out $(UNIT_EXTRA) $(if $(UNIT_EXTRA),$(POLICY_O)),$^) \
		$(UNIT_EXTRA) -o $@ \
		$(CRITERION) $(DPDK_LIBS) $(BPF_LIBS) $(EXT_LIBS)

# an app that scribbles over its own region, for the isolation tests
HOSTILE := $(BUILD)/tests/hg-hostile
$(HOSTILE): $(OBJ)/tests/hostile/hg_hostile.o $(LIB)/libhgclient.a
	@mkdir -p $(dir $@)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $^ -o $@ -lprotobuf-c -lpthread

# LeakSanitizer: Criterion's own runner keeps an allocation past exit
# (tests/unit/lsan.supp); ours are all checked
unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; \
		LSAN_OPTIONS=suppressions=$(CURDIR)/tests/unit/lsan.supp:print_suppressions=0 \
		TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$(CURDIR)/tests/unit/tsan.supp" \
		$$t --jobs 2; done

# the unit tests under ThreadSanitizer, test_shared's two-thread ones
# among them: an access of a shared record that is not atomic fails
tsan: deps
	@$(MAKE) --no-print-directory BUILD=build/tsan SAN=thread unit

integration: all $(HOSTILE)
	HG_BUILD=$(BUILD) $(PYTHON) -m pytest -q tests/integration

# ---- fuzz targets (libFuzzer, clang, ASan + UBSan) ----
#
# The whole tree is built again with clang into build/fuzz; each target
# runs on its seed corpus (tests/fuzz/seeds/NAME, kept small, in the tree)
# and writes what it finds into build/fuzz/corpus/NAME, never the tree.
FUZZ_NAMES   := parse desc rpc ctl_frame ctl_conn tenant_cfg conf_file rx_map memif xdp
FUZZ_FLAGS   := -fsanitize=fuzzer-no-link,address,undefined \
		-fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_LINK    := $(FASTPATH_O) $(filter-out $(OBJ)/slowpath/main.o,$(SLOWPATH_O)) \
		$(PROTO_O) $(OBJ)/policy/coresync.o $(OBJ)/tests/fuzz/fuzz_env.o \
		$(OBJ)/bpf/xdp_shed_obj.o
FUZZ_BIN     := $(FUZZ_NAMES:%=$(BUILD)/fuzz_%)
FUZZ_SECONDS ?= 300
FUZZ_SHORT   ?= 20

$(BUILD)/fuzz_%: $(OBJ)/tests/fuzz/fuzz_%.o $(FUZZ_LINK)
	$(call say,LD,$@)
	$(Q)$(CC) -fsanitize=fuzzer,address,undefined $^ -o $@ $(DPDK_LIBS) $(BPF_LIBS) $(EXT_LIBS)

# the memif peers' map (tools/rx_map.c)
$(BUILD)/fuzz_rx_map: $(OBJ)/tools/rx_map.o

fuzz-targets: $(FUZZ_BIN)

fuzz-build:
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang \
		EXTRA_CFLAGS="$(FUZZ_FLAGS)" fuzz-targets

# FUZZ_TIME seconds per target; prints each target's executions
define run_fuzz
	@set -e; for t in $(FUZZ_NAMES); do \
		mkdir -p build/fuzz/corpus/$$t build/fuzz/crashes; \
		printf '  FUZZ    %-10s %ss ... ' $$t $(1); \
		if ! build/fuzz/fuzz_$$t -max_total_time=$(1) -print_final_stats=1 \
			-rss_limit_mb=4096 -timeout=10 \
			-artifact_prefix=build/fuzz/crashes/$$t- \
			build/fuzz/corpus/$$t tests/fuzz/seeds/$$t \
			>build/fuzz/$$t.log 2>&1; then \
			echo FAILED; tail -40 build/fuzz/$$t.log; exit 1; fi; \
		grep -h 'stat::number_of_executed_units' build/fuzz/$$t.log | \
			awk '{print $$2 " executions, 0 crashes"}'; \
	done
endef

fuzz: deps
	@$(MAKE) --no-print-directory fuzz-build
	$(call run_fuzz,$(FUZZ_SECONDS))

fuzz-short: fuzz-build
	$(call run_fuzz,$(FUZZ_SHORT))

test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory tsan
	@$(MAKE) --no-print-directory integration
	@$(MAKE) --no-print-directory fuzz-short

# Python cannot dlopen an ASan library unless libasan comes first: the
# ctypes tests run apart, with it preloaded (and without leak checks, which
# would report the interpreter's own allocations).
ASAN_RT := $(shell $(CC) -print-file-name=libasan.so)
asan: deps
	@$(MAKE) --no-print-directory BUILD=build/asan SAN=1 all unit \
		build/asan/tests/hg-hostile
	HG_BUILD=build/asan $(PYTHON) -m pytest -q tests/integration \
		--deselect tests/integration/test_client.py
	HG_BUILD=build/asan LD_PRELOAD=$(ASAN_RT) ASAN_OPTIONS=detect_leaks=0 \
		$(PYTHON) -m pytest -q tests/integration/test_client.py

demo: deps
	@$(MAKE) --no-print-directory all
	@HG_BUILD=$(BUILD) $(PYTHON) tools/demo.py

# every bench, in turn; BENCHES="isolation kv" runs some (bench/NAME)
BENCHES ?= fastpath_cost overhead isolation steering overload scale weights wakeup wake_cost \
	   versus-kernel policies coresync kv feedback scheduling
bench: deps
	@$(MAKE) --no-print-directory all
	@set -e; for b in $(BENCHES); do echo "== bench/$$b"; \
		HG_BUILD=$(BUILD) bench/$$b; \
		case $$b in fastpath_cost|isolation) echo "== bench/$$b --pmd memif"; \
			HG_BUILD=$(BUILD) bench/$$b --pmd memif;; esac; done

# make install [PREFIX=/usr/local] [DESTDIR=]: the binaries, the library
# (static, shared with its soname links), its header and pkg-config file,
# an example config and environment file, and a systemd unit. The example
# files never overwrite ones already there.
PREFIX     ?= /usr/local
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system
D          := $(DESTDIR)
SUBST      := sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
		  -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'
install: all
	install -d $(D)$(PREFIX)/bin $(D)$(PREFIX)/lib/pkgconfig $(D)$(PREFIX)/include \
		$(D)$(SYSCONFDIR)/hourglass $(D)$(SYSTEMDDIR)
	install -m 755 $(filter $(BIN)/%,$(TARGETS)) $(D)$(PREFIX)/bin
	install -m 644 $(LIB)/libhgclient.a $(D)$(PREFIX)/lib
	install -m 644 libclient/hourglass.h $(D)$(PREFIX)/include
	install -m 755 $(LIB)/libhgclient.so.$(VERSION) $(D)$(PREFIX)/lib
	ln -sf libhgclient.so.$(VERSION) $(D)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(D)$(PREFIX)/lib/libhgclient.so
	$(SUBST) packaging/hgclient.pc.in > $(D)$(PREFIX)/lib/pkgconfig/hgclient.pc
	$(SUBST) packaging/hourglassd.service.in > $(D)$(SYSTEMDDIR)/hourglassd.service
	@for f in hourglass.conf hourglassd.env; do \
		test -e $(D)$(SYSCONFDIR)/hourglass/$$f || \
		install -m 644 packaging/$$f $(D)$(SYSCONFDIR)/hourglass/$$f; done
	@echo "installed Hourglass $(VERSION) under $(D)$(PREFIX)"

clean:
	rm -rf build bench/out

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
