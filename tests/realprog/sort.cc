// SPDX-License-Identifier: GPL-2.0
/*
 * A C++ workload for the real-program suite: sorts records through
 * std::sort with a std::function comparator, and builds strings, so that
 * libstdc++ and its inline templates are on the stacks.
 *
 * Usage: sort SECONDS
 */
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

struct rec {
	unsigned key;
	std::string name;
};

static unsigned long round_of(unsigned seed)
{
	std::vector<rec> v;
	std::function<bool(const rec &, const rec &)> less =
		[](const rec &a, const rec &b) {
			return a.key != b.key ? a.key < b.key : a.name < b.name;
		};
	unsigned long sum = 0;

	for (unsigned i = 0; i < 20000; i++) {
		seed = seed * 1103515245u + 12345u;
		v.push_back({ seed >> 8, std::to_string(seed % 977) });
	}
	std::sort(v.begin(), v.end(), less);
	for (const rec &r : v)
		sum += r.key ^ r.name.size();
	return sum;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? std::atof(argv[1]) : 1;
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::duration<double>(secs);
	unsigned long sum = 0;
	unsigned seed = 1;

	while (std::chrono::steady_clock::now() < end)
		sum += round_of(seed++);
	return sum == 42;
}
