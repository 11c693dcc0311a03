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
 * - no log_path: a node's file system is read-only under the checker, so
 *   the report goes to stderr, which the gate's model files send to
 *   node<i>.log in their log_dir (CMC_MSAN_LOG is no longer used).
 */
#ifndef CMC_MSAN_EXITCODE
#error "build with -DCMC_MSAN_EXITCODE=N"
#endif

#define CMC_STR2(x) #x
#define CMC_STR(x) CMC_STR2(x)

/* Called by the MSan runtime before it is initialised: not instrumented. */
__attribute__((no_sanitize("memory"), used)) const char *__msan_default_options(void)
{
    return "exitcode=" CMC_STR(CMC_MSAN_EXITCODE) ":halt_on_error=1:symbolize=0";
}
