# attnscope build.  `make run` and `make check` set up what is missing first
# (scripts/install-deps.sh), so two commands work on a fresh Debian machine.
#
# Layers (includes point down only):  src/app -> src/tui -> src/common -> src/core,
# src/app -> src/common.  src/common holds what the screen and batch mode share and what
# needs no terminal: export, JSON, the lane runner.
# Each layer becomes a static library; tests link against the libraries, so a test
# exercises exactly the code the program runs.

VERSION := 0.1.0
PREFIX  ?= /usr/local
BUILD   ?= build
# SAN=address,undefined or SAN=thread builds an instrumented tree (use with BUILD=...).
SAN     ?=

CC      ?= cc
OPT     ?= -O2
CFLAGS_BASE := -std=c11 $(OPT) -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
               -D_XOPEN_SOURCE=700 -D_DEFAULT_SOURCE -DATTNSCOPE_VERSION='"$(VERSION)"' \
               -Iinclude
ifneq ($(SAN),)
CFLAGS_BASE += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_SAN := -fsanitize=$(SAN)
endif

# OpenBLAS's own cblas.h (not GSL's) and LAPACKE.  GSL links against OpenBLAS's CBLAS
# rather than -lgslcblas, so exactly one BLAS is in the binary.
PKG_BLAS_CFLAGS := $(shell pkg-config --cflags openblas lapacke 2>/dev/null)
PKG_GSL_CFLAGS  := $(filter-out -D%,$(shell pkg-config --cflags gsl 2>/dev/null))
PKG_CURSES_CFLAGS := $(filter-out -D%,$(shell pkg-config --cflags ncursesw 2>/dev/null))
PKG_CURSES_LIBS := $(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw)
PKG_BLAS_LIBS   := $(shell pkg-config --libs openblas lapacke 2>/dev/null || echo -lopenblas -llapacke)
PKG_CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
# OpenSSL's libcrypto: the SHA-256 of a --weights checkpoint's contents.
PKG_CRYPTO_LIBS := $(shell pkg-config --libs libcrypto 2>/dev/null || echo -lcrypto)

CFLAGS  := $(CFLAGS_BASE) $(PKG_BLAS_CFLAGS) $(PKG_GSL_CFLAGS) $(PKG_CURSES_CFLAGS) $(CFLAGS_EXTRA)
LDLIBS  := $(PKG_CURSES_LIBS) -lgsl $(PKG_BLAS_LIBS) $(PKG_CRYPTO_LIBS) -lpthread -lm
LDFLAGS := $(LDFLAGS_SAN) $(LDFLAGS_EXTRA)

CORE_SRC := $(wildcard src/core/*.c)
COMMON_SRC := $(wildcard src/common/*.c)
TUI_SRC  := $(wildcard src/tui/*.c)
APP_SRC  := $(filter-out src/app/main.c,$(wildcard src/app/*.c))
TEST_SRC := $(wildcard tests/test_*.c)

CORE_OBJ := $(CORE_SRC:src/%.c=$(BUILD)/%.o)
COMMON_OBJ := $(COMMON_SRC:src/%.c=$(BUILD)/%.o)
TUI_OBJ  := $(TUI_SRC:src/%.c=$(BUILD)/%.o)
APP_OBJ  := $(APP_SRC:src/%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/app/main.o
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
LIBS_A   := $(BUILD)/libattnscope_app.a $(BUILD)/libattnscope_tui.a \
            $(BUILD)/libattnscope_common.a $(BUILD)/libattnscope_core.a

BIN := $(BUILD)/attnscope

.PHONY: FORCE all run check test tests deps deps-run clean install uninstall bench format \
        check-layers fuzz fuzz-build golden-update
.DEFAULT_GOAL := all
.SECONDARY:

all: $(BIN)

# V=1 shows the full commands.
Q := $(if $(V),,@)

$(BUILD)/%.o: src/%.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS) -Itests -Isrc/app -Isrc/tui -Isrc/common -MMD -MP -c $< -o $@

# Each layer sees the headers of the layers below it; the core sees only include/.  The app
# layer reaches the screen through its one entry point, tui.h.
$(COMMON_OBJ): CFLAGS += -Isrc/common
$(TUI_OBJ): CFLAGS += -Isrc/common
$(APP_OBJ) $(MAIN_OBJ): CFLAGS += -Isrc/common -Isrc/tui
# Dot2's error-free transformations need each product rounded on its own: a contracted
# fma (GCC's -ffp-contract=fast, its default outside ISO modes such as -std=gnu11) fused into
# the TwoSum after it breaks TwoProduct (tests/cli/dot2-contraction.sh).  Last, so it wins
# over CFLAGS_EXTRA.
$(BUILD)/core/dot2.o: CFLAGS += -ffp-contract=off

# The installed presets' directory is compiled into presets.o; the file below changes only
# when PREFIX does, so `make install PREFIX=...` rebuilds presets.o exactly then.
PRESETS_DIR_FLAG := -DATTNSCOPE_PRESETS_DIR='"$(PREFIX)/share/attnscope/presets"'
$(BUILD)/common/presets.o: CFLAGS += $(PRESETS_DIR_FLAG)
$(BUILD)/common/presets.o: $(BUILD)/prefix.txt
$(BUILD)/prefix.txt: FORCE
	@mkdir -p $(BUILD)
	@echo '$(PREFIX)' | cmp -s - $@ || echo '$(PREFIX)' >$@
FORCE:

$(BUILD)/libattnscope_core.a: $(CORE_OBJ)
	@rm -f $@; $(AR) rcs $@ $^
$(BUILD)/libattnscope_common.a: $(COMMON_OBJ)
	@rm -f $@; $(AR) rcs $@ $^
$(BUILD)/libattnscope_tui.a: $(TUI_OBJ)
	@rm -f $@; $(AR) rcs $@ $^
$(BUILD)/libattnscope_app.a: $(APP_OBJ)
	@rm -f $@; $(AR) rcs $@ $^

$(BIN): $(MAIN_OBJ) $(LIBS_A)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(MAIN_OBJ) $(LIBS_A) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIBS_A)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIBS_A) $(PKG_CMOCKA_LIBS) $(LDLIBS)

tests: $(BIN) $(TEST_BIN)

-include $(CORE_OBJ:.o=.d) $(COMMON_OBJ:.o=.d) $(TUI_OBJ:.o=.d) $(APP_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) \
         $(TEST_BIN:=.d)

deps:
	@scripts/install-deps.sh check
deps-run:
	@scripts/install-deps.sh run

# A sensible default that already shows the gap: T = d = 256, softmax, one layer shown.
run: deps-run
	@$(MAKE) --no-print-directory -j2 all
	./$(BIN) $(ARGS)

# Every test: unit tests, batch contract, terminal tests, then the same unit and batch
# tests under ASan+UBSan, the worker under TSan, and valgrind on batch runs.
check: deps
	@$(MAKE) --no-print-directory -j2 tests
	@$(MAKE) --no-print-directory check-layers
	@$(MAKE) --no-print-directory BUILD=build-asan SAN=address,undefined OPT=-O1 -j2 tests
	@$(MAKE) --no-print-directory BUILD=build-tsan SAN=thread OPT=-O1 -j2 tests
	@$(MAKE) --no-print-directory -j2 fuzz-build
	@tests/run-all.sh $(BUILD) build-asan build-tsan $(FUZZ_DIR)

test: tests
	@tests/run-all.sh $(BUILD)

# The architecture is a rule: core includes no curses, threads or files; tui calls no LAPACK.
check-layers:
	@tests/check-layers.sh

# Fuzzing (clang's libFuzzer) of the preset, option, JSON, safetensors, token-id and config.json parsers.  `make fuzz` explores, each
# harness FUZZ_SECONDS (FUZZ_KEEP=1 merges what adds coverage into tests/fuzz/corpus/);
# `make check` replays the committed corpus and regressions only, so it is deterministic.
FUZZ_SECONDS ?= 60
FUZZ_DIR := build-fuzz
# The options read --hf-config's config.json (src/common/hf_config*.c, on the JSON reader and
# writer), which fuzz_hf_config drives alone.
FUZZ_SRC := src/app/options.c src/app/memory_limits.c src/common/presets.c src/common/setting_line.c src/common/line_reader.c \
            src/common/conditioning_path.c \
            $(wildcard src/common/hf_config*.c) src/common/json_read.c src/common/json.c $(CORE_SRC)
FUZZ_CFLAGS := -std=c11 -O1 -g -Iinclude -Isrc/app -Isrc/common -D_XOPEN_SOURCE=700 -D_DEFAULT_SOURCE \
               -DATTNSCOPE_VERSION='"$(VERSION)"' $(PRESETS_DIR_FLAG) $(PKG_BLAS_CFLAGS) $(PKG_GSL_CFLAGS) \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_SRC)
	@mkdir -p $(FUZZ_DIR)
	@echo "  FUZZ    $@"
	$(Q)clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRC) -lgsl $(PKG_BLAS_LIBS) -lm

# The JSON reader of --jsonl and merge, alone: it needs only the core's text helpers.
$(FUZZ_DIR)/fuzz_json: tests/fuzz/fuzz_json.c src/common/json_read.c src/core/format.c
	@mkdir -p $(FUZZ_DIR)
	@echo "  FUZZ    $@"
	$(Q)clang $(FUZZ_CFLAGS) -Isrc/common -o $@ $^ -lm

# The safetensors header reader of --weights and the names it reads (weights_names.c): the
# JSON reader below it and the core (its text helpers, and the sizes the names' shapes read).
$(FUZZ_DIR)/fuzz_safetensors: tests/fuzz/fuzz_safetensors.c src/common/safetensors.c \
                              src/common/weights_names.c src/common/json_read.c $(CORE_SRC)
	@mkdir -p $(FUZZ_DIR)
	@echo "  FUZZ    $@"
	$(Q)clang $(FUZZ_CFLAGS) -Isrc/common -o $@ $^ -lgsl $(PKG_BLAS_LIBS) -lm

# The token-id file reader of --token-ids: the JSON reader below it, the line reader's file
# opener and the core (its text helpers, and the ids' check against V the run shares).
$(FUZZ_DIR)/fuzz_token_ids: tests/fuzz/fuzz_token_ids.c src/common/token_ids.c \
                            src/common/json_read.c src/common/line_reader.c $(CORE_SRC)
	@mkdir -p $(FUZZ_DIR)
	@echo "  FUZZ    $@"
	$(Q)clang $(FUZZ_CFLAGS) -Isrc/common -o $@ $^ -lgsl $(PKG_BLAS_LIBS) -lm

fuzz-build: $(FUZZ_DIR)/fuzz_options $(FUZZ_DIR)/fuzz_preset $(FUZZ_DIR)/fuzz_json \
            $(FUZZ_DIR)/fuzz_safetensors $(FUZZ_DIR)/fuzz_token_ids \
            $(FUZZ_DIR)/fuzz_hf_config

fuzz: fuzz-build
	@tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

# The golden screens (tests/tui/golden/) after a change of layout made on purpose: rewrites
# every expected capture from the binary; review `git diff tests/tui/golden/`, then commit.
golden-update: all
	@BIN=$(BIN) tests/tui/golden.sh --update

bench: all
	@bench/run.sh $(BIN)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/attnscope/presets
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/attnscope
	cp -R presets/. $(DESTDIR)$(PREFIX)/share/attnscope/presets/
	if [ -f attnscope.1 ]; then install -d $(DESTDIR)$(PREFIX)/share/man/man1 && \
	  install -m 644 attnscope.1 $(DESTDIR)$(PREFIX)/share/man/man1/; fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/attnscope $(DESTDIR)$(PREFIX)/share/man/man1/attnscope.1
	rm -rf $(DESTDIR)$(PREFIX)/share/attnscope

clean:
	rm -rf build build-asan build-tsan build-*
