// npacd — placeholder until the association core is wired (asseng replaces this file).
#include <cstdio>

int main() {
  std::fputs("npacd: not wired yet\n", stderr);
  return 1;
}
