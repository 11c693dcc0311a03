/*
 * msan_options: linked into every MemorySanitizer build of the memory gate
 * (scripts/memory/msan.mk).
 *
 * The supervisor starts a node with an environment of LD_PRELOAD alone, the
 * same bytes on every run (cmc::process::supervisor), so MSAN_OPTIONS never
 * reaches it: the options are compiled in instead.
 *
 * - exitcode: a node that MSan stops exits with CMC_MSAN_EXITCODE, which the
 *   `msan_quiet` invariant (msan_quiet.c) turns into a violation naming the
 *   world, and the node, where it happened.
 * - halt_on_error: stop at the first report (MSan's default; said here so
 *   that a build with -fsanitize-recover cannot change it).
 * - symbolize=0: symbolizing starts llvm-symbolizer, a child process, which
 *   the checker rejects in a target; the gate symbolizes the report
 *   afterwards, offline.
 * - log_path: the node's stderr is discarded by the checker, so the report
 *   goes to CMC_MSAN_LOG.<pid>; the pid is the checker's virtual one, 1000
 *   plus the node number (VIRTUAL_PID_BASE).
 */
#ifndef CMC_MSAN_LOG
#error "build with -DCMC_MSAN_LOG='\"/absolute/path/prefix\"'"
#endif
#ifndef CMC_MSAN_EXITCODE
#error "build with -DCMC_MSAN_EXITCODE=N"
#endif

#define CMC_STR2(x) #x
#define CMC_STR(x) CMC_STR2(x)

/* Called by the MSan runtime before it is initialised: not instrumented. */
__attribute__((no_sanitize("memory"), used)) const char *__msan_default_options(void)
{
    return "exitcode=" CMC_STR(CMC_MSAN_EXITCODE) ":halt_on_error=1:symbolize=0:log_path=" CMC_MSAN_LOG;
}
