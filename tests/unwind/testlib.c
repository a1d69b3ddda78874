// SPDX-License-Identifier: GPL-2.0
/*
 * TAP reporting and the synthetic blob builder for the unwinder host tests
 * (see testlib.h).
 */
#include <stdlib.h>

#include "testlib.h"

#if defined(UWPROF_ENV_X86_64)
#include "unwind_x86_64.h"
#elif defined(UWPROF_ENV_ARM64)
#include "unwind_arm64.h"
#endif

bool tap_ok(struct tap *t, bool cond, const char *fmt, ...)
{
	va_list ap;

	t->n++;
	if (!cond)
		t->failed++;
	printf("%sok %u - ", cond ? "" : "not ", t->n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

void tap_skip(struct tap *t, const char *why, const char *fmt, ...)
{
	va_list ap;

	t->n++;
	t->skipped++;
	printf("ok %u - ", t->n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int tap_done(struct tap *t)
{
	printf("1..%u\n", t->n);
	if (t->failed)
		tap_diag("%u of %u failed", t->failed, t->n);
	return t->failed ? 1 : 0;
}

u16 tb_arch(void)
{
	return UWPROF_ARCH_ID;
}

int tb_build(struct tb_blob *b, u64 base, const struct tb_row *rows, u32 nr_rows,
	     const struct uwprof_rule *rules, u32 nr_rules)
{
	struct uwprof_table_hdr h = {
		.magic = UWPROF_TABLE_MAGIC,
		.version = UWPROF_TABLE_VERSION,
		.arch = UWPROF_ARCH_ID,
		.hdr_size = sizeof(h),
		.rule_size = sizeof(struct uwprof_rule),
		.nr_rows = nr_rows,
		.nr_rules = nr_rules,
		.base = base,
	};
	u8 *p;
	u32 i;

	memset(b, 0, sizeof(*b));
	b->size = UWPROF_TABLE_SIZE(&h);
	b->data = aligned_alloc(8, (b->size + 15) & ~(size_t)7);
	if (!b->data)
		return -ENOMEM;
	p = b->data;
	memset(p, 0, b->size);
	memcpy(p, &h, sizeof(h));
	for (i = 0; i < nr_rows; i++) {
		memcpy(p + UWPROF_TABLE_ROWS_OFF(&h) + 4ULL * i, &rows[i].pc, 4);
		memcpy(p + UWPROF_TABLE_IDX_OFF(&h) + 2ULL * i, &rows[i].rule, 2);
	}
	memcpy(p + UWPROF_TABLE_RULES_OFF(&h), rules, sizeof(*rules) * nr_rules);
	return 0;
}

int tb_load(struct tb_blob *b, u64 id)
{
	u64 idx_bytes = 0;
	int err;

	err = uwprof_table_check(b->data, b->size, &idx_bytes);
	if (err)
		return err;
	free(b->idx);
	b->idx = malloc(idx_bytes);
	if (!b->idx)
		return -ENOMEM;
	uwprof_table_init(&b->table, b->data, b->idx, id);
	return 0;
}

void tb_free(struct tb_blob *b)
{
	free(b->data);
	free(b->idx);
	b->data = NULL;
	b->idx = NULL;
}
