int f(int x) { return x * 3; }
int g(int y) { return f(y) + 1; }
