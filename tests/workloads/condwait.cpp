// SPDX-License-Identifier: BSD-2-Clause
/*
 * A thread that blocks in pthread_cond_wait under a known C++ function: the
 * schedules view's futex row must reach it through the user stack.
 *
 *   condwait ROUNDS SLEEP_MS   a waiter thread waits ROUNDS times in
 *                              ns_condwait::Waiter<int>::wait_for_work(), each wait ended
 *                              by the main thread after SLEEP_MS
 *
 *   condwait spin MS           computes for MS ms in ns_condwait::Spinner<long>::spin()
 *                              (the profile's leaf: named by build-id + offset, also in a
 *                              stripped copy after it exited)
 *
 * Built with frame pointers, so that the user stack reaches main through start_thread.
 * Prints "condwait: N waits" (or "condwait: spun").
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

namespace ns_condwait {

template <typename T> class Waiter {
public:
	Waiter() : pending_(0), value_() {}

	/* the known function: blocks in pthread_cond_wait until signalled */
	__attribute__((noinline)) T wait_for_work()
	{
		pthread_mutex_lock(&mu_);
		while (!pending_)
			pthread_cond_wait(&cv_, &mu_);
		pending_--;
		T v = value_;
		pthread_mutex_unlock(&mu_);
		return v;
	}

	void post(T v)
	{
		pthread_mutex_lock(&mu_);
		value_ = v;
		pending_++; /* counted: two posts before a wake-up are two waits' work */
		pthread_cond_signal(&cv_);
		pthread_mutex_unlock(&mu_);
	}

private:
	pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv_ = PTHREAD_COND_INITIALIZER;
	int pending_;
	T value_;
};

template <typename T> struct Spinner {
	/* the known function of the spin mode: all the time in it, none in a library */
	__attribute__((noinline)) static T spin(long ms)
	{
		struct timespec t0, t;
		volatile T acc = 0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			for (int i = 0; i < 1000000; i++)
				acc = acc + (T)i * 3;
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
		return acc;
	}
};

} // namespace ns_condwait

static ns_condwait::Waiter<int> waiter;
static int rounds;

extern "C" __attribute__((noinline)) void *condwait_thread(void *)
{
	long sum = 0;

	for (int i = 0; i < rounds; i++)
		sum += waiter.wait_for_work();
	return (void *)sum;
}

int main(int argc, char **argv)
{
	struct timespec ts;
	pthread_t t;
	void *ret;
	long ms;

	if (argc == 3 && !strcmp(argv[1], "spin")) {
		ns_condwait::Spinner<long>::spin(atol(argv[2]));
		printf("condwait: spun\n");
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: condwait ROUNDS SLEEP_MS\n");
		return 2;
	}
	rounds = atoi(argv[1]);
	ms = atol(argv[2]);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	if (rounds <= 0 || ms < 0 || pthread_create(&t, NULL, condwait_thread, NULL)) {
		fprintf(stderr, "condwait: bad arguments or no thread\n");
		return 1;
	}
	for (int i = 0; i < rounds; i++) {
		nanosleep(&ts, NULL);
		waiter.post(1);
	}
	pthread_join(t, &ret);
	printf("condwait: %ld waits\n", (long)ret);
	return 0;
}
