// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the kallsyms parser (tool/kallsyms.c), TAP output: a
 * synthetic text with every kind of line the parser must take or skip,
 * the alias order, and this host's /proc/kallsyms checked line for line
 * against an independent sscanf reading of the same text.
 *
 * Usage: kallsyms-test
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "tap.h"

static int same(const char *p, size_t n, const char *want)
{
	if (!want)
		return !p;
	return p && n == strlen(want) && !memcmp(p, want, n);
}

static void synthetic(void)
{
	static const char text[] =
		"ffffffff81000100 T do_syscall_64\n"
		"ffffffff81000200 D some_data\n"
		"ffffffff81000300 t local_fn\n"
		"\n"
		"garbage line\n"
		"ffffffff81000400 T\n"
		"ffffffff81000500 b bss_thing\n"
		"ffffffffc0001000 t ext4_file_read_iter\t[ext4]\n"
		"ffffffffc0002000 W weak_one [nf_tables]\n"
		"0000000000000000 T hidden\n"
		"12345678901234567 T too_long_address\n"
		"ffffffff81000600 w last_no_newline";
	static const struct {
		unsigned long long addr;
		const char *name, *mod;
	} want[] = {
		{ 0xffffffff81000100ULL, "do_syscall_64", NULL },
		{ 0xffffffff81000300ULL, "local_fn", NULL },
		{ 0xffffffffc0001000ULL, "ext4_file_read_iter", "ext4" },
		{ 0xffffffffc0002000ULL, "weak_one", "nf_tables" },
		{ 0, "hidden", NULL },
		{ 0xffffffff81000600ULL, "last_no_newline", NULL },
	};
	struct uwprof_kallsym k;
	size_t pos = 0, i = 0, n = sizeof(want) / sizeof(want[0]);
	int good = 1;

	while (uwprof_kallsyms_next(text, sizeof(text) - 1, &pos, &k)) {
		if (i >= n || k.addr != want[i].addr ||
		    !same(k.name, k.name_len, want[i].name) ||
		    !same(k.mod, k.mod_len, want[i].mod)) {
			printf("# entry %zu: %llx %.*s [%.*s]\n", i,
			       (unsigned long long)k.addr, (int)k.name_len,
			       k.name, (int)k.mod_len, k.mod ? k.mod : "");
			good = 0;
		}
		i++;
	}
	ok(good && i == n && pos >= sizeof(text) - 1,
	   "synthetic text: code symbols only, modules split off, bad lines skipped (%zu of %zu)",
	   i, n);
}

static int alias(const char *a, const char *b)
{
	return uwprof_kallsyms_alias_cmp(a, strlen(a), b, strlen(b));
}

static void aliases(void)
{
	ok(alias("memcpy", "__memcpy") < 0 && alias("__memcpy", "memcpy") > 0,
	   "alias order: fewer leading underscores first");
	ok(alias("__pi_memcpy", "__memcpy") < 0,
	   "alias order: then the longer name");
	ok(alias("abc", "abd") < 0 && alias("abc", "abc") == 0,
	   "alias order: then by bytes, equal names equal");
}

/* The host's list, read through the parser and by sscanf, line by line. */
static void host(void)
{
	struct uwprof_kallsym k, *got;
	size_t len, pos = 0, n = 0, bad = 0;
	char *text, *line, *copy, *save = NULL;
	int ret = uwprof_kallsyms_read(&text, &len);

	if (ret) {
		ok(1, "/proc/kallsyms read # SKIP %s", strerror(-ret));
		ok(1, "/proc/kallsyms parsed # SKIP unreadable");
		return;
	}
	ok(len > 0 && memchr(text, '\n', len), "/proc/kallsyms read whole (%zu bytes)",
	   len);
	/* No code-symbol line is shorter than 20 bytes ("<16 hex> T x\n"). */
	got = malloc((len / 20 + 1) * sizeof(*got));
	copy = malloc(len + 1);
	if (!got || !copy) {
		ok(0, "out of memory");
		return;
	}
	/* strtok_r writes into its text: sscanf reads a copy. */
	memcpy(copy, text, len);
	copy[len] = 0;
	while (uwprof_kallsyms_next(text, len, &pos, &k))
		got[n++] = k;
	pos = 0;
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a;
		char type, name[512], mod[256];
		int f;

		mod[0] = 0;
		f = sscanf(line, "%llx %c %511s %255s", &a, &type, name, mod);
		if (f < 3 || !strchr("tTwW", type))
			continue;
		if (mod[0] == '[' && mod[strlen(mod) - 1] == ']') {
			memmove(mod, mod + 1, strlen(mod));
			mod[strlen(mod) - 1] = 0;
		}
		if (pos >= n || got[pos].addr != a ||
		    !same(got[pos].name, got[pos].name_len, name) ||
		    !same(got[pos].mod, got[pos].mod_len, f == 4 ? mod : NULL)) {
			if (bad++ < 5)
				printf("# line '%s'\n", line);
		}
		pos++;
	}
	ok(!bad && pos == n && n > 0,
	   "/proc/kallsyms: every code symbol as sscanf reads it (%zu symbols, %zu differ)",
	   n, bad);
	free(got);
	free(copy);
	free(text);
}

int main(void)
{
	synthetic();
	aliases();
	host();
	return tap_done();
}
