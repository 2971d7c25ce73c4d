// SPDX-License-Identifier: BSD-2-Clause
/*
 * main -> g1 -> ... -> g8, which throws an exception that main catches, over and over until
 * the process has had argv[1] seconds of CPU (default 3). Built with -O2
 * -fomit-frame-pointer: most samples land in the C++ runtime's unwinder (libgcc_s,
 * libstdc++) as it walks the g frames, and their stacks reach main only through the call frame
 * information of every object on the way.
 */
#include <cstdlib>
#include <ctime>
#include <stdexcept>

static volatile unsigned long sink;

static double now()
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long g8(unsigned long v)
{
	if (v != ~0ul)
		throw std::runtime_error("across the frames");
	return v;
}

#define LEVEL(f, g)                                          \
	__attribute__((noinline)) unsigned long f(unsigned long v) \
	{                                                    \
		unsigned long r = g(v + 1);                  \
		sink += r;                                   \
		return r + 1;                                \
	}
LEVEL(g7, g8)
LEVEL(g6, g7)
LEVEL(g5, g6)
LEVEL(g4, g5)
LEVEL(g3, g4)
LEVEL(g2, g3)
LEVEL(g1, g2)

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 3);
	unsigned long caught = 0;

	while (now() < end) {
		for (int i = 0; i < 1000; i++) {
			try {
				sink += g1((unsigned long)i);
			} catch (const std::runtime_error &) {
				caught++;
			}
		}
	}
	return caught ? 0 : 1;
}
