/* The start stub's test program (cmc/tests/process_start.rs): run both
 * directly and through the stub, it prints what a program can see of how
 * it was started. Lines that must be the same either way come first; lines
 * starting with '@' may differ (addresses, entropy, the vDSO) and the test
 * checks them one by one. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

extern char **environ;
extern const ElfW(Ehdr) __ehdr_start;
extern void _start(void);

static int preinit_ran, constructor_ran;

static void preinit(int argc, char **argv, char **envp) {
    (void)argv;
    (void)envp;
    preinit_ran = argc;
}
__attribute__((section(".preinit_array"), used)) static void (*preinit_entry)(int, char **, char **) = preinit;

__attribute__((constructor)) static void constructor(void) {
    /* .preinit_array runs before the constructors. */
    constructor_ran = preinit_ran ? 1 : -1;
}

/* An IFUNC resolver that reads the time stamp counter and the CPU, as
 * glibc's own do: run by ld.so while it relocates the program, before any
 * constructor. */
static uint64_t resolver_tsc;
static unsigned resolver_vendor[4], resolver_leaf1_ecx, resolver_leaf7_ebx;
static int resolver_ran;

static int answer_impl(void) { return 42; }

static void *answer_resolver(void) {
    unsigned a, b, c, d;
    resolver_tsc = __rdtsc();
    __cpuid(0, a, b, c, d);
    resolver_vendor[0] = b;
    resolver_vendor[1] = d;
    resolver_vendor[2] = c;
    __cpuid(1, a, b, c, d);
    resolver_leaf1_ecx = c;
    __cpuid_count(7, 0, a, b, c, d);
    resolver_leaf7_ebx = b;
    resolver_ran = 1;
    return (void *)answer_impl;
}
int answer(void) __attribute__((ifunc("answer_resolver")));

static uintptr_t ld_so_base;
static int find_ld_so(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    if (info->dlpi_name && strstr(info->dlpi_name, "ld-linux")) ld_so_base = info->dlpi_addr;
    return 0;
}

/* A line of /proc/self/maps: whether any mapping's name starts with one
 * of the given prefixes, and the stack's permissions. */
static void scan_maps(int *vdso, char stack_perms[5]) {
    char line[512];
    FILE *f = fopen("/proc/self/maps", "r");
    *vdso = 0;
    strcpy(stack_perms, "none");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "[vdso]") || strstr(line, "[vvar")) *vdso = 1;
        if (strstr(line, "[stack]")) {
            char *p = strchr(line, ' ');
            if (p) memcpy(stack_perms, p + 1, 4), stack_perms[4] = 0;
        }
    }
    fclose(f);
}

int main(int argc, char **argv) {
    printf("argc=%d\n", argc);
    for (int i = 0; i < argc; i++) printf("argv[%d]=%s\n", i, argv[i]);
    for (char **e = environ; *e; e++) printf("env %s\n", *e);
    printf("preinit=%d constructor=%d\n", preinit_ran == argc, constructor_ran);
    printf("ifunc=%d answer=%d vendor=%.12s\n", resolver_ran, answer(), (char *)resolver_vendor);
    const char *execfn = (const char *)getauxval(AT_EXECFN);
    printf("execfn=%s\n", execfn ? execfn : "(none)");
    const char *phdrs = (const char *)&__ehdr_start + __ehdr_start.e_phoff;
    printf("phdr=%d phent=%lu phnum=%d\n", getauxval(AT_PHDR) == (uintptr_t)phdrs, getauxval(AT_PHENT),
           getauxval(AT_PHNUM) == __ehdr_start.e_phnum);
    printf("entry=%d\n", getauxval(AT_ENTRY) == (uintptr_t)&_start);
    dl_iterate_phdr(find_ld_so, NULL);
    printf("base=%d\n", ld_so_base != 0 && getauxval(AT_BASE) == ld_so_base);
    printf("pagesz=%lu secure=%lu\n", getauxval(AT_PAGESZ), getauxval(AT_SECURE));
    struct timespec rt, mono;
    struct timeval tv;
    int clocks = clock_gettime(CLOCK_REALTIME, &rt) == 0 && rt.tv_sec > 1600000000 &&
                 clock_gettime(CLOCK_MONOTONIC, &mono) == 0 && gettimeofday(&tv, NULL) == 0 &&
                 tv.tv_sec > 1600000000 && time(NULL) > 1600000000;
    printf("clocks=%d\n", clocks);
    char comm[32] = "";
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) {
        if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
        fclose(f);
    }
    comm[strcspn(comm, "\n")] = 0;
    printf("comm=%s\n", comm);
    int vdso;
    char stack_perms[5];
    scan_maps(&vdso, stack_perms);
    printf("stack=%s\n", stack_perms);

    /* What may differ. */
    printf("@vdso=%s\n", vdso ? "present" : "absent");
    printf("@sysinfo_ehdr=%s\n", getauxval(AT_SYSINFO_EHDR) ? "present" : "absent");
    uint64_t canary, guard;
    __asm__("mov %%fs:0x28, %0" : "=r"(canary));
    __asm__("mov %%fs:0x30, %0" : "=r"(guard));
    printf("@canary=%016lx\n", canary);
    printf("@pointer_guard=%016lx\n", guard);
    const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
    printf("@at_random=");
    for (int i = 0; r && i < 16; i++) printf("%02x", r[i]);
    printf("\n");
    printf("@rdrand=%u rdseed=%u\n", (resolver_leaf1_ecx >> 30) & 1, (resolver_leaf7_ebx >> 18) & 1);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    printf("@tsc=%lu mono=%lu\n", resolver_tsc, (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec);
    int local;
    void *heap = malloc(100);
    printf("@addresses=main=%p stack=%p heap=%p ld.so=%p\n", (void *)main, (void *)&local, heap, (void *)ld_so_base);
    free(heap);
    fflush(stdout);
    return 7;
}
