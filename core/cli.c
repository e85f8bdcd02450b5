/* cli.c: the ldpgnn command. */
#include <ldpgnn/ldpgnn.h>
int main(void) { return 0; }
