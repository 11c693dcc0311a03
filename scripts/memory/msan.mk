# MemorySanitizer builds for the memory gate (scripts/memory_gate.sh), kept
# apart from examples/c/Makefile and its build/:
#
#   make -f scripts/memory/msan.mk [OUT=DIR]        (from any directory)
#
# builds into OUT (default examples/c/build/msan):
# - every example program (examples/c/*.c but the *_props.c) and every
#   planted-bug variant a model file names (build/NAME-BUG_X is NAME.c with
#   -DBUG_X=1), and the probe uninit.c, with clang -fsanitize=memory
#   -no-pie, and msan_options.c linked in;
# - NAME_props.so for each examples/c/NAME_props.c, with msan_quiet.c
#   compiled in, and msan_quiet.so alone, for models with no invariants of
#   their own. These run inside the checker, so they are built with cc and
#   not instrumented.
# MSan writes its reports to OUT/reports/msan.<pid> (see msan_options.c).

HERE := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
ROOT := $(abspath $(HERE)/../..)
EX := $(ROOT)/examples/c
OUT ?= $(EX)/build/msan
override OUT := $(abspath $(OUT))

CLANG ?= clang
CC ?= cc
MSAN_EXITCODE := 86
MSAN_CFLAGS := -fsanitize=memory -fsanitize-memory-track-origins=2 -fno-omit-frame-pointer \
  -O1 -g -Wall -no-pie -I $(ROOT) \
  -DCMC_MSAN_EXITCODE=$(MSAN_EXITCODE) -DCMC_MSAN_LOG='"$(OUT)/reports/msan"'
PROPS_CFLAGS := -O1 -g -Wall -Werror -shared -fPIC -I $(ROOT) -DCMC_MSAN_EXITCODE=$(MSAN_EXITCODE)

SOURCES := $(filter-out %_props.c,$(wildcard $(EX)/*.c))
PROGRAMS := $(patsubst $(EX)/%.c,%,$(SOURCES))
BUGS := $(sort $(shell sed -n 's|^program *= *"build/\([^"]*-BUG_[^"]*\)".*|\1|p' $(EX)/*.toml))
PROPS := $(patsubst $(EX)/%.c,%,$(wildcard $(EX)/*_props.c))
DEPS := $(ROOT)/cmc.h $(HERE)/msan_options.c $(HERE)/msan.mk

all: $(addprefix $(OUT)/,$(PROGRAMS) $(BUGS) uninit $(addsuffix .so,$(PROPS) msan_quiet)) | $(OUT)/reports

$(OUT) $(OUT)/reports:
	mkdir -p $@

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

.PHONY: all
