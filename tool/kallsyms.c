// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/kallsyms reading and parsing (see kallsyms.h). Called from
 * 'uwprof record' and from the report and script symbolizer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "vec.h"

int uwprof_kallsyms_read(char **text, size_t *len)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	size_t n, used = 0, cap = 0;
	char *buf = NULL;
	int ret = 0;

	*text = NULL;
	*len = 0;
	if (!f)
		return -errno;
	/* A proc file has no size to ask for: read until EOF. */
	for (;;) {
		if (VEC_RESERVE(buf, cap, used + 65536, 1 << 20)) {
			ret = -ENOMEM;
			goto out;
		}
		n = fread(buf + used, 1, cap - used, f);
		if (!n)
			break;
		used += n;
	}
	if (ferror(f))
		ret = -EIO;
out:
	fclose(f);
	if (ret) {
		free(buf);
		return ret;
	}
	*text = buf;
	*len = used;
	return 0;
}

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

int uwprof_kallsyms_next(const char *text, size_t len, size_t *pos,
			 struct uwprof_kallsym *k)
{
	const char *end = text + len, *p, *nl, *q;
	unsigned long long addr;
	int digits;

	while (*pos < len) {
		p = text + *pos;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		*pos = (size_t)(nl - text) + 1;
		/* Parsed by hand: the text is not NUL-terminated. */
		addr = 0;
		for (q = p, digits = 0; q < nl && digits < 16; q++, digits++) {
			int d = *q >= '0' && *q <= '9' ? *q - '0' :
				*q >= 'a' && *q <= 'f' ? *q - 'a' + 10 :
				*q >= 'A' && *q <= 'F' ? *q - 'A' + 10 : -1;

			if (d < 0)
				break;
			addr = addr << 4 | (unsigned int)d;
		}
		/* "addr t name" at least: the type letter between blanks. */
		if (!digits || q + 3 > nl || q[0] != ' ' || q[2] != ' ' ||
		    !strchr("tTwW", q[1]))
			continue;
		k->addr = addr;
		k->name = q + 3;
		for (k->name_len = 0; k->name + k->name_len < nl &&
		     !blank(k->name[k->name_len]); k->name_len++)
			;
		if (!k->name_len)
			continue;
		q = k->name + k->name_len;
		while (q < nl && blank(*q))
			q++;
		k->mod = NULL;
		k->mod_len = 0;
		if (q < nl && *q == '[') {
			k->mod = ++q;
			while (q < nl && *q != ']')
				q++;
			k->mod_len = (size_t)(q - k->mod);
		}
		return 1;
	}
	return 0;
}

int uwprof_kallsyms_alias_cmp(const char *a, size_t alen, const char *b,
			      size_t blen)
{
	size_t ua = 0, ub = 0;
	int c;

	while (ua < alen && a[ua] == '_')
		ua++;
	while (ub < blen && b[ub] == '_')
		ub++;
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (alen != blen)
		return alen > blen ? -1 : 1;
	c = memcmp(a, b, alen);
	return c < 0 ? -1 : c > 0;
}
