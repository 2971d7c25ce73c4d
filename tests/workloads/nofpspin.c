// SPDX-License-Identifier: BSD-2-Clause
/*
 * main -> f1 -> ... -> f8, which spins until it has had argv[1] seconds of CPU (default 3:
 * CPU time, so that a loaded machine only makes it take longer, not sample it less). Built
 * without frame pointers (-O2 -fomit-frame-pointer, and by clang -O2): only the call frame
 * information unwinds it. Each function does work after its call so that no call becomes
 * a tail call, and is noinline so that each keeps its frame.
 *
 * `nofpspin SECS signal`: f8 sends itself SIGUSR1 instead, and the spin runs in the handler,
 * on_signal -> spin_in_handler, above the kernel's signal frame (libc's __restore_rt) and the
 * interrupted libc code that sent it, through which an unwinder must go to reach f8.
 *
 * `nofpspin SECS read`: f8 blocks in read() on a pipe instead, to which a child writes a
 * byte every millisecond for SECS seconds (wall time): the schedules view's --stacks.
 * `nofpspin SECS read-signal`: the same reads in the handler of the signal f8 raises
 * (on_signal -> read_in_handler), above the signal frame.
 * `nofpspin SECS read-two`: the reads through read_a() and read_b() in turn, both calling
 * read_one(): frames alike, so each read blocks with the same registers, its stacks a return
 * address apart. It prints how many reads went through each.
 * `nofpspin SECS read-forks`: `read` (its stacks read_forks -> main -> f1 ...), then 8 processes
 * forked, 10 ms apart, each doing `read` with its own pipe and writer: processes forked
 * without exec, whose code is their parent's.
 * `nofpspin SECS read-dlopen-forks LIB`: the same, but each forked process first dlopen()s
 * LIB (tests/workloads/nofpdl.c) and f8 reads through its nofpdl_read(): code its parent
 * never mapped, so the child cannot walk by its parent's rules. Each child sleeps 200 ms
 * before its dlopen(): its stacks' mappings are read before LIB is mapped.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double handler_secs;
static int by_signal;
static int read_fd = -1; /* `read`: the pipe f8 reads */
static long (*dl_read)(int fd); /* `read-dlopen-forks`: the library's reader, in the children */

/* The loop, in the function that calls it: f8's samples are f8's */
static inline __attribute__((always_inline)) unsigned long spin_here(double secs)
{
	double end = now() + secs;
	unsigned long n = 0;

	while (now() < end)
		for (int i = 0; i < 1000000; i++)
			sink = sink * 31 + (unsigned long)i, n++;
	return n;
}

__attribute__((noinline)) unsigned long spin(double secs)
{
	return spin_here(secs);
}

__attribute__((noinline)) static unsigned long spin_in_handler(double secs)
{
	unsigned long n = spin(secs);

	sink += n;
	return n + 1;
}

__attribute__((noinline)) static unsigned long read_in_handler(void)
{
	unsigned long n = 0;
	char c;

	while (read(read_fd, &c, 1) == 1)
		n++;
	sink += n;
	return n + 1;
}

/* read_a() and read_b(): the same frame, other code (not merged into one function) */
__attribute__((noinline)) static long read_one(void)
{
	char c;
	long r = read(read_fd, &c, 1);

	sink += (unsigned long)r;
	return r;
}

__attribute__((noinline)) long read_a(void)
{
	long r = read_one();

	sink += (unsigned long)r;
	return r;
}

__attribute__((noinline)) long read_b(void)
{
	long r = read_one();

	sink ^= (unsigned long)r;
	return r;
}

static int two_paths; /* `read-two` */

static void on_signal(int sig)
{
	(void)sig;
	if (read_fd >= 0)
		sink += read_in_handler();
	else
		sink += spin_in_handler(handler_secs);
}

__attribute__((noinline)) unsigned long f8(double secs)
{
	unsigned long n = 0;
	char c;

	if (read_fd >= 0 && two_paths) {
		unsigned long a = 0, b = 0;

		for (;;) {
			if (n & 1) {
				if (read_b() != 1)
					break;
				b++;
			} else {
				if (read_a() != 1)
					break;
				a++;
			}
			n++;
		}
		printf("read_a %lu read_b %lu\n", a, b);
		sink += n;
		return n + 1;
	}
	if (read_fd >= 0 && dl_read) {
		while (dl_read(read_fd) == 1)
			n++;
		sink += n;
		return n + 1;
	}
	if (read_fd >= 0 && !by_signal) {
		while (read(read_fd, &c, 1) == 1)
			n++;
		sink += n;
		return n + 1;
	}
	if (!by_signal)
		return spin_here(secs);
	handler_secs = secs;
	signal(SIGUSR1, on_signal);
	raise(SIGUSR1);
	n = (unsigned long)sink;
	return n + 1;
}

#define LEVEL(f, g)                                                                        \
	__attribute__((noinline)) unsigned long f(double secs)                             \
	{                                                                                  \
		unsigned long r = g(secs);                                                 \
		sink += r;                                                                 \
		return r + 1;                                                              \
	}
LEVEL(f7, f8)
LEVEL(f6, f7)
LEVEL(f5, f6)
LEVEL(f4, f5)
LEVEL(f3, f4)
LEVEL(f2, f3)
LEVEL(f1, f2)

/* A function of its own: main's frame, whose words the writers' stacks hold, stays as small */
static void load_reader(const char *lib)
{
	struct timespec first = { 0, 200000000 };
	void *h;

	/* a stack first, and so a snapshot of its mappings without LIB */
	nanosleep(&first, NULL);
	h = dlopen(lib, RTLD_NOW);
	dl_read = h ? (long (*)(int))dlsym(h, "nofpdl_read") : NULL;
	if (!dl_read) {
		fprintf(stderr, "nofpspin: %s: %s\n", lib, dlerror());
		_exit(2);
	}
}

int main(int argc, char **argv);

/* `read-forks`, `read-dlopen-forks LIB` */
__attribute__((noinline)) static int read_forks(int argc, char **argv)
{
	struct timespec gap = { 0, 10000000 };
	const char *lib = argv[2][5] == 'd' ? argv[3] : NULL;
	int k, status, bad;

	if (argv[2][5] == 'd' && !lib)
		return 2;
	argv[2] = "read";
	bad = main(argc, argv);
	for (k = 0; k < 8; k++) {
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		if (!pid) {
			if (lib)
				load_reader(lib);
			_exit(main(argc, argv));
		}
		nanosleep(&gap, NULL);
	}
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status);
	return bad;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;

	by_signal = argc > 2 && (!strcmp(argv[2], "signal") || !strcmp(argv[2], "read-signal"));
	two_paths = argc > 2 && !strcmp(argv[2], "read-two");
	if (argc > 2 && (!strcmp(argv[2], "read-forks") || !strcmp(argv[2], "read-dlopen-forks")))
		return read_forks(argc, argv);
	if (argc > 2 && (!strcmp(argv[2], "read") || !strcmp(argv[2], "read-signal") ||
			 two_paths)) {
		struct timespec ms = { 0, 1000000 };
		int fds[2];
		long i;

		if (pipe(fds))
			return 2;
		if (fork() == 0) {
			close(fds[0]);
			for (i = 0; i < (long)(secs * 1000); i++) {
				nanosleep(&ms, NULL);
				if (write(fds[1], "x", 1) != 1)
					_exit(2);
			}
			_exit(0);
		}
		close(fds[1]);
		read_fd = fds[0];
	}

	return f1(secs) ? 0 : 1;
}
