/* Statically linked: the start stub refuses it (cmc/tests/process_start.rs). */
#include <stdio.h>

int main(void) {
    puts("a static program ran");
    return 0;
}
