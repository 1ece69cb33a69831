#include <stdlib.h>
int main(int argc, char **argv) { volatile long *p = (long *)0xdead000000000000UL; return (int)*p; }
