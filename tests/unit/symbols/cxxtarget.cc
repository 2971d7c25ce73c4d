// SPDX-License-Identifier: BSD-2-Clause
/*
 * A C++ symbolization target for test_debuginfo (demangling): a function template in a
 * namespace, a member of a class template and an overload pair, none inlined. The test finds
 * their mangled names and addresses in .symtab (nm), and expects lookups to demangle them.
 */
#include <cstdint>
#include <cstdio>

namespace sp_ns {
template <typename T> struct Worker {
	__attribute__((noipa)) T run(T x);
};

template <typename T> __attribute__((noipa)) T Worker<T>::run(T x)
{
	return x * 3 + 1;
}

template <typename T> __attribute__((noipa)) T twice(T x)
{
	return x + x;
}

__attribute__((noipa)) long over(long x)
{
	return x - 1;
}

__attribute__((noipa)) double over(double x)
{
	return x / 2;
}
} // namespace sp_ns

volatile long sp_cxx_sink;

int main(int argc, char **argv)
{
	sp_ns::Worker<int> w;

	(void)argv;
	sp_cxx_sink = w.run(argc) + sp_ns::twice<long>(argc) + sp_ns::over((long)argc) +
		      (long)sp_ns::over((double)argc);
	std::printf("%ld\n", (long)sp_cxx_sink);
	return 0;
}
