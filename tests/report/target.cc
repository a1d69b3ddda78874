// SPDX-License-Identifier: GPL-2.0
/*
 * The program whose symbols the report tests resolve: C++ templates,
 * exceptions, a namespace, and two functions carrying Rust symbol names
 * (legacy and v0 mangling, through asm labels). Built with -O2
 * -fomit-frame-pointer -g; run, it prints a checksum so nothing is
 * optimized away. An argument multiplies the work (for a real 'perf
 * record' of it).
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace shapes {

template <typename T>
struct Accumulator {
	T total{};
	__attribute__((noinline)) T add_all(const std::vector<T> &v);
};

template <typename T>
T Accumulator<T>::add_all(const std::vector<T> &v)
{
	for (const T &x : v)
		total += x * x;
	return total;
}

__attribute__((noinline)) int check_positive(int x)
{
	if (x < 0)
		throw std::invalid_argument("negative");
	return x * 3 + 1;
}

__attribute__((noinline)) int guarded(int x)
{
	try {
		return check_positive(x);
	} catch (const std::exception &) {
		return -1;
	}
}

} // namespace shapes

extern "C" long rust_legacy(long x) __asm__("_ZN7mycrate5stats7average17h0123456789abcdefE");
extern "C" long rust_v0(long x) __asm__("_RNvNtCs1234_7mycrate5stats6median");

extern "C" __attribute__((noinline)) long rust_legacy(long x)
{
	long s = 0;

	for (long i = 0; i < x; i++)
		s += i ^ (s >> 3);
	return s;
}

extern "C" __attribute__((noinline)) long rust_v0(long x)
{
	return rust_legacy(x) * 7 + x;
}

int main(int argc, char **argv)
{
	shapes::Accumulator<double> ad;
	shapes::Accumulator<long> al;
	std::vector<double> vd(1000, 1.5);
	std::vector<long> vl(1000, 3);
	long sum = 0;
	int n = argc > 1 ? 100 * std::atoi(argv[1]) : 100;

	for (int i = 0; i < n; i++) {
		sum += (long)ad.add_all(vd) + al.add_all(vl);
		sum += shapes::guarded(i - argc * 50);
		sum += rust_v0(i % 1000);
	}
	std::printf("%ld\n", sum);
	return 0;
}
