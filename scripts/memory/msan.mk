# MemorySanitizer builds for the memory gate (scripts/memory_gate.sh), kept
# apart from examples/c/Makefile and its build/:
#
#   make -f scripts/memory/msan.mk [OUT=DIR]        (from any directory)
#
# builds into OUT (default examples/c/build/msan):
# - every example program (examples/c/*.c but the *_props.c, early.c and
#   early_lib.c) and every
#   planted-bug variant a model file names (build/NAME-BUG_X is NAME.c with
#   -DBUG_X=1), and the probe uninit.c, with clang -fsanitize=memory
#   -no-pie, and msan_options.c linked in;
# - NAME_props.so for each examples/c/NAME_props.c, with msan_quiet.c
#   compiled in, and msan_quiet.so alone, for models with no invariants of
#   their own. These run inside the checker, so they are built with cc and
#   not instrumented.
# - OUT/props/NAME_props.so, each properties object instrumented, and
#   OUT/props/uninit_props.so, the invariant probe, for props_driver, which
#   calls their invariants under MSan (the checker cannot: it is not
#   instrumented).
# - OUT/ccores/NAME-O1 and NAME-O0 for each C core examples/ccores/NAME.c,
#   and NAME-BUG_X-O1/-O0 for each planted bug of it (an `#if BUG_X` line:
#   NAME.c with -DBUG_X=1), and the same for the probe ccore_uninit.c: the
#   core compiled into one program with scripts/memory/ccore_msan.c, which
#   walks it under MSan. -O1 is what MSan's documentation recommends; at
#   -O0 no optimisation folds a never-written value away, or copies a
#   struct field by field where the source copies its padding too. NAME
#   must not contain '-'.
# MSan writes its reports to stderr, which the gate sends to OUT/reports/node<i>.log (see msan_options.c).

HERE := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
ROOT := $(abspath $(HERE)/../..)
EX := $(ROOT)/examples/c
OUT ?= $(EX)/build/msan
override OUT := $(abspath $(OUT))

CLANG ?= clang
CC ?= cc
MSAN_EXITCODE := 86
MSAN_FLAGS := -fsanitize=memory -fsanitize-memory-track-origins=2 -fno-omit-frame-pointer \
  -O1 -g -Wall -I $(ROOT) \
  -DCMC_MSAN_EXITCODE=$(MSAN_EXITCODE) -DCMC_MSAN_LOG='"$(OUT)/reports/msan"'
MSAN_CFLAGS := $(MSAN_FLAGS) -no-pie
PROPS_CFLAGS := -O1 -g -Wall -Werror -shared -fPIC -I $(ROOT) -DCMC_MSAN_EXITCODE=$(MSAN_EXITCODE)

# early.c is linked with early_lib.c as a shared library, by its test
# (cmc/tests/process_escapes.rs): neither is a program of a model file.
SOURCES := $(filter-out %_props.c $(EX)/early.c $(EX)/early_lib.c,$(wildcard $(EX)/*.c))
PROGRAMS := $(patsubst $(EX)/%.c,%,$(SOURCES))
BUGS := $(sort $(shell sed -n 's|^program *= *"build/\([^"]*-BUG_[^"]*\)".*|\1|p' $(EX)/*.toml))
PROPS := $(patsubst $(EX)/%.c,%,$(wildcard $(EX)/*_props.c))
DEPS := $(ROOT)/cmc.h $(HERE)/msan_options.c $(HERE)/msan.mk

# C cores: NAME, and NAME-BUG_X for each `#if BUG_X` of NAME.c.
CCORE_DIR := $(ROOT)/examples/ccores
ccore_builds = $(1) $(addprefix $(1)-,$(sort $(shell sed -n 's/^[[:space:]]*\#[[:space:]]*if[[:space:]]\{1,\}\(BUG_[A-Z0-9_]*\).*/\1/p' $(2))))
CCORES := $(foreach f,$(wildcard $(CCORE_DIR)/*.c),$(call ccore_builds,$(basename $(notdir $(f))),$(f))) \
  $(call ccore_builds,ccore_uninit,$(HERE)/ccore_uninit.c)

all: $(addprefix $(OUT)/,$(PROGRAMS) $(BUGS) uninit $(addsuffix .so,$(PROPS) msan_quiet)) \
  $(OUT)/props_driver $(addprefix $(OUT)/props/,$(addsuffix .so,$(PROPS) uninit_props)) \
  $(foreach c,$(CCORES),$(OUT)/ccores/$(c)-O1 $(OUT)/ccores/$(c)-O0) | $(OUT)/reports

$(OUT) $(OUT)/reports $(OUT)/props $(OUT)/ccores:
	mkdir -p $@


$(OUT)/props_driver: $(HERE)/props_driver.c $(DEPS) | $(OUT)
	$(CLANG) $(MSAN_CFLAGS) $< $(HERE)/msan_options.c -o $@

$(OUT)/props/uninit_props.so: $(HERE)/uninit_props.c $(DEPS) | $(OUT)/props
	$(CLANG) $(MSAN_FLAGS) -shared -fPIC $< -o $@

$(OUT)/props/%_props.so: $(EX)/%_props.c $(DEPS) | $(OUT)/props
	$(CLANG) $(MSAN_FLAGS) -shared -fPIC $< -o $@

$(OUT)/uninit: $(HERE)/uninit.c $(DEPS) | $(OUT)
	$(CLANG) $(MSAN_CFLAGS) $< $(HERE)/msan_options.c -o $@

$(OUT)/%: $(EX)/%.c $(DEPS) | $(OUT)
	$(CLANG) $(MSAN_CFLAGS) $< $(HERE)/msan_options.c -o $@

# OUT/NAME-BUG_X is NAME.c with BUG_X planted.
.SECONDEXPANSION:
$(OUT)/%: $(EX)/$$(firstword $$(subst -, ,$$*)).c $(DEPS) | $(OUT)
	$(CLANG) $(MSAN_CFLAGS) -D$(lastword $(subst -, ,$*))=1 $< $(HERE)/msan_options.c -o $@

$(OUT)/msan_quiet.so: $(HERE)/msan_quiet.c $(ROOT)/cmc.h | $(OUT)
	$(CC) $(PROPS_CFLAGS) $< -o $@

$(OUT)/%_props.so: $(EX)/%_props.c $(HERE)/msan_quiet.c $(ROOT)/cmc.h | $(OUT)
	$(CC) $(PROPS_CFLAGS) $< $(HERE)/msan_quiet.c -o $@

# OUT/ccores/NAME[-BUG_X]-O<n>: the core's source is examples/ccores/NAME.c,
# or this folder's NAME.c (the probe); the driver is compiled with it (its
# own -O1; the optimisation level that matters is the core's).
ccore_src = $(firstword $(wildcard $(CCORE_DIR)/$(1).c $(HERE)/$(1).c))
ccore_name = $(firstword $(subst -, ,$(1)))
ccore_bug = $(filter BUG_%,$(subst -, ,$(1)))
$(OUT)/ccores/%: $$(call ccore_src,$$(call ccore_name,$$*)) $(HERE)/ccore_msan.c $(DEPS) | $(OUT)/ccores
	$(CLANG) $(MSAN_FLAGS) -c $(HERE)/ccore_msan.c -o $@.driver.o
	$(CLANG) $(MSAN_FLAGS) -w -$(lastword $(subst -, ,$*)) $(addprefix -D,$(addsuffix =1,$(call ccore_bug,$*))) \
	  -c $< -o $@.core.o
	$(CLANG) $(MSAN_CFLAGS) $@.driver.o $@.core.o -o $@
	rm -f $@.driver.o $@.core.o

# The C core builds' names, NAME and NAME-BUG_X, for the gate and the teeth.
list-ccores:
	@echo $(CCORES)

.PHONY: all list-ccores
