/* An IFUNC: the GNU indirect function `fast_sum` and its resolver, which
   share one address and size. Built by symbolize/testdata/ifunc/build.sh. */
static int sum_generic(int a, int b) { return a + b; }
static int sum_other(int a, int b) { return b + a; }
typedef int sum_fn(int, int);
static sum_fn *resolve_sum(void) {
	extern int flag;
	return flag ? sum_other : sum_generic;
}
int flag;
int fast_sum(int, int) __attribute__((ifunc("resolve_sum")));
int main(int argc, char **argv) { return fast_sum(argc, 1); }
