/* Source of the seed objects: a few frames of ordinary code. */
#include <stdlib.h>
#include <string.h>

int tiny_leaf(int x);

int tiny_leaf(int x)
{
	return x * 3 + 1;
}

int tiny_mid(const char *s, int n)
{
	char buf[64];
	int i, t = 0;

	strncpy(buf, s, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0;
	for (i = 0; i < n; i++)
		t += tiny_leaf(buf[i % 8]) + (int)strlen(buf);
	if (t > 1000)
		abort();
	return t;
}

long tiny_big(long n)
{
	volatile char area[5000];

	area[n % 5000] = (char)n;
	return area[(n * 7) % 5000] + tiny_mid("abc", (int)n);
}
