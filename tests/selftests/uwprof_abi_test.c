// SPDX-License-Identifier: GPL-2.0
/*
 * ABI suite: every ioctl with bad sizes, counts, flags, pointers, mappings
 * and table rows gets the documented errno and leaves no state behind;
 * valid calls work; mmap accepts only the exact ring layout; opening
 * without privilege fails with EPERM.
 */
#include "uwprof_test.h"

#include <sys/syscall.h>
#include <linux/capability.h>

#include "uwprof_harness.h"

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	const char *why = NULL;

	self->fd = uwt_open(&why);
	if (self->fd < 0)
		SKIP(return, "%s", why);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(dev, version)
{
	struct uwprof_version v = { .size = sizeof(v) };
	struct {
		struct uwprof_version v;
		uint64_t more[4];
	} big;

	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	EXPECT_EQ(UWPROF_ABI_VERSION, v.abi_version);
	EXPECT_EQ(UWPROF_TABLE_VERSION, v.table_version);
	EXPECT_EQ(UWT_ARCH, v.arch);
	EXPECT_EQ(sizeof(v), v.size);
	EXPECT_EQ(sysconf(_SC_NPROCESSORS_CONF) <= v.nr_cpus, 1);
	EXPECT_NE(0, v.table_mem_max);

	v.size = 4;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	/* An older, shorter caller gets what fits and nothing beyond it. */
	memset(&v, 0xa5, sizeof(v));
	v.size = 8;
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	EXPECT_EQ(UWPROF_ABI_VERSION, v.abi_version);
	EXPECT_EQ(0xa5a5a5a5, v.table_version);
	EXPECT_EQ(sizeof(v), v.size);
	v.size = 1 << 20;
	EXPECT_EQ(-E2BIG, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	EXPECT_EQ(-EFAULT, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, NULL));

	/* A newer caller's larger struct: the tail comes back zeroed. */
	memset(&big, 0xa5, sizeof(big));
	big.v.size = sizeof(big);
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &big));
	EXPECT_EQ(sizeof(struct uwprof_version), big.v.size);
	EXPECT_EQ(0, big.more[0] | big.more[3]);
}

TEST_F(dev, unknown_ioctl)
{
	char buf[64] = {};

	EXPECT_EQ(-ENOTTY, uwt_ioctl(self->fd, _IO(UWPROF_IOC_MAGIC, 0x7f), buf));
	EXPECT_EQ(-ENOTTY, uwt_ioctl(self->fd, _IOWR('x', 0x00, struct uwprof_version), buf));
	EXPECT_EQ(-ENOTTY, uwt_ioctl(self->fd, _IOW(UWPROF_IOC_MAGIC, 0x09, uint64_t), buf));
}

TEST_F(dev, table_add_args)
{
	struct uwprof_table_add a;
	struct uwt_blob b;
	struct {
		struct uwprof_table_add a;
		uint64_t extra;
	} big;

	ASSERT_EQ(0, uwt_blob_make(&b, 8));

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a) - 8;
	a.object_id = 1;
	a.data = (uintptr_t)b.data;
	a.data_size = b.size;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_TABLE_ADD, &a));
	a.size = sizeof(a);
	a.flags = 1;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_TABLE_ADD, &a));
	a.flags = 0;
	a.object_id = 0;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_TABLE_ADD, &a));
	a.object_id = 1;
	a.data_size = 8;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_TABLE_ADD, &a));
	a.data_size = 1ULL << 40;
	EXPECT_EQ(-E2BIG, uwt_ioctl(self->fd, UWPROF_IOC_TABLE_ADD, &a));
	a.data_size = b.size;
	a.data = 0;
	EXPECT_EQ(-EFAULT, uwt_ioctl(self->fd, UWPROF_IOC_TABLE_ADD, &a));
	a.data = 16;
	EXPECT_EQ(-EFAULT, uwt_ioctl(self->fd, UWPROF_IOC_TABLE_ADD, &a));
	EXPECT_EQ(-EFAULT, uwt_ioctl(self->fd, UWPROF_IOC_TABLE_ADD, NULL));

	/* Larger struct: accepted when the tail is zero, E2BIG otherwise. */
	memset(&big, 0, sizeof(big));
	big.a.size = sizeof(big);
	big.a.object_id = 1;
	big.a.data = (uintptr_t)b.data;
	big.a.data_size = b.size;
	big.extra = 1;
	EXPECT_EQ(-E2BIG, uwt_ioctl(self->fd, UWPROF_IOC_TABLE_ADD, &big));
	big.extra = 0;
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_TABLE_ADD, &big));

	/* Same id again. */
	EXPECT_EQ(-EEXIST, uwt_table_add(self->fd, 1, b.data, b.size));
	EXPECT_EQ(0, uwt_table_add(self->fd, 2, b.data, b.size));
	free(b.data);
}

/* Each corruption of a valid blob must be refused with 'err'. */
TEST_F(dev, table_rows)
{
	struct uwt_blob b;
	uint64_t id = 100;

	ASSERT_EQ(0, uwt_blob_make(&b, 64));
	ASSERT_EQ(0, uwt_table_add(self->fd, id++, b.data, b.size));

#define BAD(err, stmt) do {						\
		struct uwt_blob c;					\
									\
		ASSERT_EQ(0, uwt_blob_make(&c, 64));			\
		{ struct uwt_blob *b = &c; stmt; }			\
		EXPECT_EQ(err, uwt_table_add(self->fd, id++, c.data, c.size)) \
			TH_LOG("corruption: %s", #stmt);		\
		free(c.data);						\
	} while (0)

	BAD(-EINVAL, uwt_hdr(b)->magic ^= 1);
	BAD(-EINVAL, uwt_hdr(b)->version = 99);
	/* A blob of the previous format, as an older tool writes it. */
	BAD(-EINVAL, uwt_hdr(b)->version = UWPROF_TABLE_VERSION - 1);
	BAD(-EINVAL, uwt_hdr(b)->arch = UWT_ARCH == 1 ? 2 : 1);
	BAD(-EINVAL, uwt_hdr(b)->hdr_size += 8);
	BAD(-EINVAL, uwt_hdr(b)->rule_size = 8);
	BAD(-EINVAL, uwt_hdr(b)->nr_rows = 0);
	BAD(-EINVAL, uwt_hdr(b)->nr_rules = 0);
	BAD(-EINVAL, uwt_hdr(b)->nr_rows = 63);
	BAD(-E2BIG, uwt_hdr(b)->nr_rows = UWPROF_TABLE_MAX_ROWS + 1);
	BAD(-E2BIG, uwt_hdr(b)->nr_rules = UWPROF_TABLE_MAX_RULES + 1);
	BAD(-EINVAL, uwt_hdr(b)->build_id_size = 21);
	BAD(-EINVAL, uwt_pcs(b)[10] = uwt_pcs(b)[9]);
	BAD(-EINVAL, uwt_pcs(b)[10] = 0);
	BAD(-EINVAL, uwt_slots(b)[5] = 2);
	BAD(-EINVAL, uwt_slots(b)[63] = 1);
	/* Pages: 4 of 16 rows each. */
	BAD(-EINVAL, uwt_hdr(b)->page_shift = 17);
	BAD(-EINVAL, uwt_hdr(b)->page_shift = 7);
	BAD(-EINVAL, uwt_hdr(b)->__reserved = 1);
	BAD(-EINVAL, uwt_hdr(b)->nr_pages = 0);
	BAD(-EINVAL, uwt_hdr(b)->nr_palette = 0);
	BAD(-E2BIG, uwt_hdr(b)->nr_palette = UWPROF_TABLE_MAX_PALETTE + 1);
	BAD(-EINVAL, uwt_pages(b)[0].row = 1);
	BAD(-EINVAL, uwt_pages(b)[2].row = uwt_pages(b)[1].row);
	BAD(-EINVAL, uwt_pages(b)[2].row = 65);
	BAD(-EINVAL, uwt_pages(b)[4].row = 63);
	BAD(-EINVAL, uwt_pages(b)[4].palette = 1);
	BAD(-EINVAL, uwt_pages(b)[3].palette = 3);
	BAD(-EINVAL, uwt_pcs(b)[16] = 16);
	BAD(-EINVAL, uwt_pcs(b)[63] = 256);
	BAD(-EINVAL, uwt_palette(b)[1] = 2);
	BAD(-EINVAL, uwt_rules(b)[1].cfa_type = 77);
	BAD(-EINVAL, uwt_rules(b)[1].ra_type = 77);
	BAD(-EINVAL, uwt_rules(b)[1].fp_type = 77);
	BAD(-EINVAL, uwt_rules(b)[1].flags = 0x80);
	BAD(-EINVAL, uwt_rules(b)[1].saved_off = 8);
	BAD(-EINVAL, uwt_rules(b)[1].saved_type = UWPROF_REG_AT_CFA);
	BAD(-EINVAL, uwt_rules(b)[1].saved_type = UWPROF_REG_AT_CFA;
	    uwt_rules(b)[1].flags = UWPROF_RULE_REGS;
	    uwt_rules(b)[1].saved_reg = 31);
	BAD(-EINVAL, uwt_rules(b)[1].cfa_type = UWPROF_CFA_REG;
	    uwt_rules(b)[1].cfa_arg = 1U << 8);
	BAD(-EINVAL, b->size -= 8);
	BAD(-EINVAL, b->size += 8; b->data = realloc(b->data, b->size));
#undef BAD
	free(b.data);
}

/*
 * Rules at the edges of the format are accepted: fp and ra saved more than
 * 64 KiB below the CFA, offsets at both ends of 32 bits, a CFA from a
 * saved sp with an addend that needs all 32 bits.
 */
TEST_F(dev, table_wide_rules)
{
	struct uwt_blob b;
	struct uwprof_rule *r;

	ASSERT_EQ(0, uwt_blob_make(&b, 64));
	r = uwt_rules(&b);
	r[1].cfa_off = 0x12000;
	r[1].fp_type = UWPROF_REG_AT_CFA;
	r[1].fp_off = -0x12000;
	r[1].ra_off = -0x11ff8;
	EXPECT_EQ(0, uwt_table_add(self->fd, 1, b.data, b.size));
	r[1].cfa_off = INT32_MAX;
	r[1].fp_off = INT32_MIN;
	r[1].ra_off = INT32_MAX;
	EXPECT_EQ(0, uwt_table_add(self->fd, 2, b.data, b.size));
	r[1].cfa_type = UWPROF_CFA_DEREF_SP;
	r[1].cfa_off = -8;
	r[1].cfa_arg = UINT32_MAX;
	EXPECT_EQ(0, uwt_table_add(self->fd, 3, b.data, b.size));
	free(b.data);
}

/* Random bytes with a plausible header: never accepted, never a crash. */
TEST_F(dev, table_garbage)
{
	unsigned int seed = 12345, i, j, accepted = 0;
	struct uwt_blob b;

	for (i = 0; i < 2000; i++) {
		uint32_t rows = 1 + rand_r(&seed) % 64;

		ASSERT_EQ(0, uwt_blob_make(&b, rows));
		for (j = sizeof(struct uwprof_table_hdr); j < b.size; j++)
			((uint8_t *)b.data)[j] = rand_r(&seed);
		if (i & 1)	/* header fields too, now and then */
			((uint8_t *)b.data)[rand_r(&seed) % b.size] ^= 1 << (rand_r(&seed) % 8);
		if (!uwt_table_add(self->fd, 1000 + i, b.data, b.size))
			accepted++;
		free(b.data);
	}
	/* Valid by chance is possible, in principle; essentially never. */
	EXPECT_LE(accepted, 2);
}

TEST_F(dev, table_memory_cap)
{
	unsigned long long old, cap;
	struct uwprof_stats st;
	struct uwt_blob small, huge;

	if (uwt_param("table_mem_max", &old, false))
		SKIP(return, "no table_mem_max parameter");
	ASSERT_EQ(0, uwt_blob_make(&small, 16));
	ASSERT_EQ(0, uwt_blob_make(&huge, 150000));

	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	cap = 300 * 1024;
	ASSERT_EQ(0, uwt_param("table_mem_max", &cap, true));
	/* 525 KB over a 300 KB cap: that upload fails, nothing else. */
	EXPECT_EQ(-ENOSPC, uwt_table_add(self->fd, 7, huge.data, huge.size));
	EXPECT_EQ(0, uwt_table_add(self->fd, 8, small.data, small.size));
	cap = 1;
	ASSERT_EQ(0, uwt_param("table_mem_max", &cap, true));
	EXPECT_EQ(-ENOSPC, uwt_table_add(self->fd, 9, small.data, small.size));
	ASSERT_EQ(0, uwt_param("table_mem_max", &old, true));
	EXPECT_EQ(0, uwt_table_add(self->fd, 7, huge.data, huge.size));

	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	EXPECT_EQ(2, st.tables);
	EXPECT_GE(st.table_bytes, huge.size + small.size);
	free(small.data);
	free(huge.data);
}

TEST_F(dev, object_del)
{
	struct uwprof_object_del d = { .size = sizeof(d), .object_id = 5 };
	struct uwprof_stats st;
	struct uwt_blob b;

	ASSERT_EQ(0, uwt_blob_make(&b, 8));
	EXPECT_EQ(-ENOENT, uwt_ioctl(self->fd, UWPROF_IOC_OBJECT_DEL, &d));
	ASSERT_EQ(0, uwt_table_add(self->fd, 5, b.data, b.size));
	d.flags = 1;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_OBJECT_DEL, &d));
	d.flags = 0;
	d.object_id = 0;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_OBJECT_DEL, &d));
	d.object_id = 5;
	d.size = 4;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_OBJECT_DEL, &d));
	d.size = sizeof(d);
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_OBJECT_DEL, &d));
	EXPECT_EQ(-ENOENT, uwt_ioctl(self->fd, UWPROF_IOC_OBJECT_DEL, &d));
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	EXPECT_EQ(0, st.tables);
	EXPECT_EQ(0, st.table_bytes);
	free(b.data);
}

TEST_F(dev, maps_set)
{
	struct uwprof_map m[4];
	struct uwprof_maps_set a;
	struct uwprof_process_del pd = { .size = sizeof(pd), .pid = 4242 };
	struct uwprof_object_del od = { .size = sizeof(od), .object_id = 3 };
	struct uwprof_stats st;
	struct uwt_blob b;

	ASSERT_EQ(0, uwt_blob_make(&b, 8));
	ASSERT_EQ(0, uwt_table_add(self->fd, 3, b.data, b.size));

#define RESET() do {							\
		memset(m, 0, sizeof(m));				\
		m[0] = (struct uwprof_map){ 0x10000, 0x20000, 0, 3, 0, 0 }; \
		m[1] = (struct uwprof_map){ 0x20000, 0x30000, 0, 0,	\
					    UWPROF_MAP_NO_TABLE, 0 };	\
		m[2] = (struct uwprof_map){ 0x40000, 0x50000, 0x1000, 3, 0, 0 }; \
	} while (0)

	RESET();
	EXPECT_EQ(0, uwt_maps_set(self->fd, 4242, m, 3));
	EXPECT_EQ(0, uwt_maps_set(self->fd, 4242, m, 3));	/* replace */

	EXPECT_EQ(-EINVAL, uwt_maps_set(self->fd, 0, m, 3));
	EXPECT_EQ(-EINVAL, uwt_maps_set(self->fd, 1U << 31, m, 3));
	EXPECT_EQ(-EINVAL, uwt_maps_set(self->fd, 4242, m, 0));
	EXPECT_EQ(-E2BIG, uwt_maps_set(self->fd, 4242, m, UWPROF_MAX_MAPS + 1));
	EXPECT_EQ(-EFAULT, uwt_maps_set(self->fd, 4242, NULL, 3));
	EXPECT_EQ(-EFAULT, uwt_maps_set(self->fd, 4242, m, UWPROF_MAX_MAPS));

	RESET();
	m[1].start = 0x18000;			/* overlaps m[0] */
	EXPECT_EQ(-EINVAL, uwt_maps_set(self->fd, 4242, m, 3));
	RESET();
	m[2].start = 0x0, m[2].end = 0x8000;	/* unsorted */
	EXPECT_EQ(-EINVAL, uwt_maps_set(self->fd, 4242, m, 3));
	RESET();
	m[0].end = m[0].start;			/* empty */
	EXPECT_EQ(-EINVAL, uwt_maps_set(self->fd, 4242, m, 3));
	RESET();
	m[2].end = ~0ULL;			/* beyond user space */
	EXPECT_EQ(-EINVAL, uwt_maps_set(self->fd, 4242, m, 3));
	RESET();
	m[0].object_id = 99;			/* no such table */
	EXPECT_EQ(-ENOENT, uwt_maps_set(self->fd, 4242, m, 3));
	RESET();
	m[0].object_id = 0;			/* table needed */
	EXPECT_EQ(-EINVAL, uwt_maps_set(self->fd, 4242, m, 3));
	RESET();
	m[1].object_id = 3;			/* NO_TABLE with a table */
	EXPECT_EQ(-EINVAL, uwt_maps_set(self->fd, 4242, m, 3));
	RESET();
	m[1].flags = 0x100;
	EXPECT_EQ(-EINVAL, uwt_maps_set(self->fd, 4242, m, 3));
	RESET();
	m[2].__reserved = 1;
	EXPECT_EQ(-EINVAL, uwt_maps_set(self->fd, 4242, m, 3));

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.pid = 4242;
	a.nr_maps = 3;
	a.maps = (uintptr_t)m;
	a.flags = UWPROF_MAPS_PYTHON << 1;
	RESET();
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a));
	a.flags = 0;
	a.start_time = 1;			/* a field without its flag */
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a));
	a.start_time = 0;

	/* Failed calls left the good list in place; the table is shared. */
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	EXPECT_EQ(1, st.processes);
	EXPECT_EQ(0, uwt_maps_set(self->fd, 4243, m, 3));
	/* Deleting the object keeps the lists that use it valid. */
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_OBJECT_DEL, &od));
	EXPECT_EQ(-ENOENT, uwt_maps_set(self->fd, 4244, m, 3));
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	EXPECT_EQ(2, st.processes);
	EXPECT_EQ(0, st.tables);
	EXPECT_NE(0, st.table_bytes);

	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_PROCESS_DEL, &pd));
	EXPECT_EQ(-ENOENT, uwt_ioctl(self->fd, UWPROF_IOC_PROCESS_DEL, &pd));
	pd.pid = 0;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_PROCESS_DEL, &pd));
	pd.pid = 4243;
	pd.size = 4;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_PROCESS_DEL, &pd));
	pd.size = sizeof(pd);
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_PROCESS_DEL, &pd));
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	EXPECT_EQ(0, st.processes);
	/* Lists (and the table they held) are freed after an RCU grace period. */
	for (int i = 0; i < 200 && st.table_bytes; i++) {
		uwt_sleep_ms(10);
		ASSERT_EQ(0, uwt_stats(self->fd, &st));
	}
	EXPECT_EQ(0, st.table_bytes);
#undef RESET
	free(b.data);
}

/* A descriptor of CPython 3.11 on glibc 2.36 (tool/python_find.c's). */
static void py_desc(struct uwprof_python *d)
{
	uwt_py311(d, 0x10000, 0x20000);
}

/* MAPS_SET with an interpreter: every field of it checked. */
TEST_F(dev, maps_set_python)
{
	struct uwprof_map m = { 0x10000, 0x20000, 0, 0, UWPROF_MAP_NO_TABLE, 0 };
	struct uwprof_maps_set a = {
		.size = sizeof(a), .flags = UWPROF_MAPS_PYTHON, .pid = 4242,
		.nr_maps = 1, .maps = (uintptr_t)&m,
	};
	struct uwprof_version v = { .size = sizeof(v) };
	struct uwprof_python d;
	struct uwprof_stats st;
	uint64_t bytes;
	unsigned int i;
	static const struct {
		size_t off, size;
		uint64_t val;
	} bad[] = {
		{ offsetof(struct uwprof_python, flags), 4, 1U << 2 },
		{ offsetof(struct uwprof_python, __reserved0), 4, 1 },
		{ offsetof(struct uwprof_python, co_qualname), 4, 132 },
		{ offsetof(struct uwprof_python, co_firstlineno), 4, 70 },
		{ offsetof(struct uwprof_python, co_filename), 4, UWPROF_PY_MAX_OFF },
		{ offsetof(struct uwprof_python, key_addr), 8, 0 },
		{ offsetof(struct uwprof_python, key_addr), 8, 0xffff888000000000ULL },
		{ offsetof(struct uwprof_python, key_addr), 8, 0x10002 },
		{ offsetof(struct uwprof_python, code_type), 8, 0 },
		{ offsetof(struct uwprof_python, code_type), 8, 0x20004 },
		{ offsetof(struct uwprof_python, tp_pthread), 4, 0x10000 },
		{ offsetof(struct uwprof_python, pt_specific), 4, 1297 },
		{ offsetof(struct uwprof_python, pt_tid), 4, UWPROF_PY_MAX_OFF },
		{ offsetof(struct uwprof_python, ts_frame), 4, 0xffffffff },
		{ offsetof(struct uwprof_python, fr_entry), 4, UWPROF_PY_MAX_OFF },
		{ offsetof(struct uwprof_python, co_code), 4, 185 },
		{ offsetof(struct uwprof_python, kd_size), 4, 0 },
		{ offsetof(struct uwprof_python, kd_size), 4, 72 },
		{ offsetof(struct uwprof_python, kd_data), 4, 16 },
		{ offsetof(struct uwprof_python, kd_per_block), 4, 0 },
		{ offsetof(struct uwprof_python, kd_per_block), 4, 48 },
		{ offsetof(struct uwprof_python, entry_value), 4, 3 },
		{ offsetof(struct uwprof_python, size), 4, 16 },
	};

	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	ASSERT_TRUE(v.caps & UWPROF_CAP_PYTHON);
	py_desc(&d);
	a.python = (uintptr_t)&d;
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a));
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	bytes = st.table_bytes;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		py_desc(&d);
		memcpy((char *)&d + bad[i].off, &bad[i].val, bad[i].size);
		EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a)) {
			TH_LOG("field at %zu = %#llx", bad[i].off,
			       (unsigned long long)bad[i].val);
		}
	}
	/* Without cframes: an entry value, no cframe fields. */
	py_desc(&d);
	d.flags = 0;
	d.entry_value = 3;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a));
	d.cf_frame = d.cf_previous = 0;
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a));
	d.entry_value = 256;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a));
	/* Bytes beyond the struct the module knows must be zero. */
	{
		char big[sizeof(d) + 8] = { 0 };

		py_desc(&d);
		memcpy(big, &d, sizeof(d));
		((struct uwprof_python *)big)->size = sizeof(big);
		a.python = (uintptr_t)big;
		EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a));
		big[sizeof(d)] = 1;
		EXPECT_EQ(-E2BIG, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a));
	}
	a.python = 8;
	EXPECT_EQ(-EFAULT, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a));
	/* The pointer without its flag, the flag without a pointer. */
	a.python = (uintptr_t)&d;
	a.flags = 0;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a));
	a.flags = UWPROF_MAPS_PYTHON;
	a.python = 0;
	EXPECT_EQ(-EFAULT, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &a));
	/*
	 * The refusals left the last accepted list, its descriptor charged
	 * with it; the lists it replaced go after an RCU grace period.
	 */
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	EXPECT_EQ(1, st.processes);
	for (i = 0; i < 200 && st.table_bytes != bytes; i++) {
		uwt_sleep_ms(10);
		ASSERT_EQ(0, uwt_stats(self->fd, &st));
	}
	EXPECT_EQ(bytes, st.table_bytes);
}

TEST_F(dev, start_args)
{
	uint32_t pids[2] = { getpid(), 1 };
	struct uwprof_start a;
	int fd2;

	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));

	EXPECT_EQ(-EINVAL, uwt_start(self->fd, 1U << 20, 100, 64, 0, pids, 1));
	EXPECT_EQ(-EINVAL, uwt_start(self->fd, UWPROF_START_CPU_CLOCK |
				     UWPROF_START_CYCLES, 100, 64, 0, pids, 1));
	EXPECT_EQ(-EINVAL, uwt_start(self->fd, 0, 0, 64, 0, pids, 1));
	EXPECT_EQ(-EINVAL, uwt_start(self->fd, 0, UWPROF_MAX_FREQ + 1, 64, 0, pids, 1));
	EXPECT_EQ(-EINVAL, uwt_start(self->fd, 0, 100, 0, 0, pids, 1));
	EXPECT_EQ(-E2BIG, uwt_start(self->fd, 0, 100, UWPROF_MAX_DEPTH + 1, 0, pids, 1));
	EXPECT_EQ(-EINVAL, uwt_start(self->fd, 0, 100, 64, 3, pids, 1));
	EXPECT_EQ(-E2BIG, uwt_start(self->fd, 0, 100, 64, UWPROF_MAX_RING_PAGES * 2,
				    pids, 1));
	/* One page cannot hold two records of the deepest stack. */
	EXPECT_EQ(-EINVAL, uwt_start(self->fd, 0, 100, UWPROF_MAX_DEPTH, 1, pids, 1));
	EXPECT_EQ(-EINVAL, uwt_start(self->fd, 0, 100, 64, 0, pids, 0));
	/* Snapshot sizes: only with the flag, a multiple of 8, capped. */
	EXPECT_EQ(-EINVAL, uwt_start_snap(self->fd, 0, 100, 64, 0, 4096, pids, 1));
	EXPECT_EQ(-EINVAL, uwt_start_snap(self->fd, UWPROF_START_SNAPSHOT, 100,
					  64, 0, 4095, pids, 1));
	EXPECT_EQ(-E2BIG, uwt_start_snap(self->fd, UWPROF_START_SNAPSHOT, 100,
					 64, 0, UWPROF_MAX_SNAPSHOT + 8, pids, 1));
	/* A ring page cannot hold two records with the largest snapshot. */
	EXPECT_EQ(-EINVAL, uwt_start_snap(self->fd, UWPROF_START_SNAPSHOT, 100,
					  64, 1, UWPROF_MAX_SNAPSHOT, pids, 1));
	EXPECT_EQ(-E2BIG, uwt_start(self->fd, 0, 100, 64, 0, pids, UWPROF_MAX_PIDS + 1));
	EXPECT_EQ(-EFAULT, uwt_start(self->fd, 0, 100, 64, 0, NULL, 1));
	EXPECT_EQ(-EINVAL, uwt_start(self->fd, UWPROF_START_SYSTEM_WIDE, 100, 64, 0,
				     pids, 1));
	pids[1] = 0;
	EXPECT_EQ(-EINVAL, uwt_start(self->fd, 0, 100, 64, 0, pids, 2));
	memset(&a, 0, sizeof(a));
	a.size = 8;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_START, &a));

	/* No rings before a START. */
	{
		struct uwprof_ring_info ri = { .size = sizeof(ri) };

		EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_RING_INFO, &ri));
		EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED,
					   self->fd, 0));
	}

	pids[1] = 1;
	ASSERT_EQ(0, uwt_start(self->fd, 0, 100, 64, 0, pids, 2));
	/* Busy is this session's own state only. */
	EXPECT_EQ(-EBUSY, uwt_start(self->fd, 0, 100, 64, 0, pids, 2));
	fd2 = open(UWT_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd2, 0);
	EXPECT_EQ(0, uwt_start(fd2, UWPROF_START_SYSTEM_WIDE, 100, 64, 0, NULL, 0));
	EXPECT_EQ(-EBUSY, uwt_start(fd2, UWPROF_START_SYSTEM_WIDE, 100, 64, 0, NULL, 0));
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	/* The other session samples on, and a stopped one starts again beside it. */
	EXPECT_EQ(0, uwt_start(self->fd, 0, 100, 64, 0, pids, 2));
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	/* Close while sampling stops and frees everything. */
	close(fd2);
	EXPECT_EQ(0, uwt_start(self->fd, UWPROF_START_SYSTEM_WIDE |
			       UWPROF_START_CPU_CLOCK, 100, 64, 0, NULL, 0));
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));

	/*
	 * A caller built against the first, 32-byte struct: its command
	 * number carries that size, and the struct's size field says so.
	 */
	memset(&a, 0, sizeof(a));
	a.size = offsetof(struct uwprof_start, snapshot_size);
	a.freq_hz = 100;
	a.max_depth = 64;
	a.nr_pids = 1;
	a.pids = (uintptr_t)pids;
	EXPECT_EQ(32, a.size);
	EXPECT_EQ(0, uwt_ioctl(self->fd, _IOW(UWPROF_IOC_MAGIC, 0x05, char[32]), &a));
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));

	/* Forcing hardware cycles works exactly when the caps say so. */
	{
		struct uwprof_version v = { .size = sizeof(v) };

		ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
		EXPECT_EQ(v.caps & UWPROF_CAP_HW_CYCLES ? 0 : -EOPNOTSUPP,
			  uwt_start(self->fd, UWPROF_START_CYCLES, 100, 64, 0,
				    pids, 1));
		if (v.caps & UWPROF_CAP_HW_CYCLES)
			EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	}
}

/* A START of the current struct with the filter fields set. */
static int start_filtered(int fd, uint32_t flags, int cgroup_fd,
			  const char *comm, size_t comm_len, uint32_t reserved2)
{
	struct uwprof_start a = {
		.size = sizeof(a),
		.flags = flags | UWPROF_START_SYSTEM_WIDE | UWPROF_START_CPU_CLOCK,
		.freq_hz = 100,
		.max_depth = 16,
		.cgroup_fd = cgroup_fd,
		.__reserved2 = reserved2,
	};

	memcpy(a.comm, comm, comm_len);
	return uwt_ioctl(fd, UWPROF_IOC_START, &a);
}

static int stop_if(int fd, int ret)
{
	if (!ret)
		ret = uwt_ioctl(fd, UWPROF_IOC_STOP, NULL);
	return ret;
}

/* Sessions and filters are announced; a module of this tree has both. */
TEST_F(dev, caps)
{
	struct uwprof_version v = { .size = sizeof(v) };

	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	EXPECT_TRUE(v.caps & UWPROF_CAP_SESSIONS);
	EXPECT_TRUE(v.caps & UWPROF_CAP_COMM);
	EXPECT_TRUE(v.caps & UWPROF_CAP_DESCENDANTS);
	EXPECT_TRUE(v.caps & UWPROF_CAP_CGROUP)
		TH_LOG("Debian's kernels have cgroups");
}

/* The descendants filter narrows system-wide sampling, never a pid list. */
TEST_F(dev, start_descendants)
{
	uint32_t pids[1] = { getpid() };

	EXPECT_EQ(-EINVAL, uwt_start(self->fd, UWPROF_START_DESCENDANTS |
				     UWPROF_START_CPU_CLOCK, 100, 64, 0, pids, 1));
	EXPECT_EQ(0, stop_if(self->fd, start_filtered(self->fd,
						      UWPROF_START_DESCENDANTS,
						      0, "", 0, 0)));
}

/* The comm filter's field: only with its flag, 1 to 15 bytes, NUL-padded. */
TEST_F(dev, start_comm)
{
	EXPECT_EQ(-EINVAL, start_filtered(self->fd, 0, 0, "x", 1, 0));
	EXPECT_EQ(-EINVAL, start_filtered(self->fd, UWPROF_START_COMM, 0, "", 0, 0));
	EXPECT_EQ(-EINVAL, start_filtered(self->fd, UWPROF_START_COMM, 0,
					  "0123456789abcdef", 16, 0));
	EXPECT_EQ(-EINVAL, start_filtered(self->fd, UWPROF_START_COMM, 0,
					  "ab\0c", 4, 0));
	EXPECT_EQ(-EINVAL, start_filtered(self->fd, UWPROF_START_COMM, 0,
					  "x", 1, 1));
	EXPECT_EQ(0, stop_if(self->fd, start_filtered(self->fd, UWPROF_START_COMM,
						      0, "x", 1, 0)));
	EXPECT_EQ(0, stop_if(self->fd, start_filtered(self->fd, UWPROF_START_COMM,
						      0, "0123456789abcde", 15, 0)));
}

/*
 * The cgroup filter's fd: only with its flag; a cgroup v2 directory, else
 * EBADF; a removed cgroup ENOENT; the fd may be closed once sampling runs.
 */
TEST_F(dev, start_cgroup)
{
	char path[PATH_MAX], gone[PATH_MAX];
	int cg, fd, ret;

	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EINVAL, start_filtered(self->fd, 0, fd, "", 0, 0));
	EXPECT_EQ(-EBADF, start_filtered(self->fd, UWPROF_START_CGROUP, -1, "", 0, 0));
	EXPECT_EQ(-EBADF, start_filtered(self->fd, UWPROF_START_CGROUP, fd, "", 0, 0));
	close(fd);
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EBADF, start_filtered(self->fd, UWPROF_START_CGROUP, fd, "", 0, 0));
	close(fd);

	ret = uwt_cgroup_make("uwprof-abi", path, sizeof(path));
	if (ret)
		SKIP(return, "no cgroup v2 hierarchy: %s", strerror(-ret));
	cg = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(cg, 0);
	EXPECT_EQ(-EINVAL, start_filtered(self->fd, UWPROF_START_CGROUP, cg, "", 0, 1));
	ASSERT_EQ(0, start_filtered(self->fd, UWPROF_START_CGROUP, cg, "", 0, 0));
	close(cg);
	/* The module holds the cgroup, not the fd. */
	uwt_sleep_ms(50);
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	/* A file in the cgroup's directory is not the directory. */
	ASSERT_LT(snprintf(gone, sizeof(gone), "%s/cgroup.procs", path),
		  (int)sizeof(gone));
	fd = open(gone, O_RDONLY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EBADF, start_filtered(self->fd, UWPROF_START_CGROUP, fd, "", 0, 0));
	close(fd);
	/* O_PATH, as the comment in the header allows, with a comm too. */
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(0, stop_if(self->fd, start_filtered(self->fd,
			UWPROF_START_CGROUP | UWPROF_START_COMM, fd, "x", 1, 0)));
	close(fd);

	ASSERT_LT(snprintf(gone, sizeof(gone), "%s/removed", path),
		  (int)sizeof(gone));
	ASSERT_EQ(0, mkdir(gone, 0755));
	fd = open(gone, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, rmdir(gone));
	EXPECT_EQ(-ENOENT, start_filtered(self->fd, UWPROF_START_CGROUP, fd, "", 0, 0));
	close(fd);
	EXPECT_EQ(0, uwt_cgroup_remove(path));
}

/* A caller built before the filters (a 48-byte struct) still starts. */
TEST_F(dev, start_struct_before_filters)
{
	struct uwprof_start a = {
		.size = offsetof(struct uwprof_start, cgroup_fd),
		.flags = UWPROF_START_SYSTEM_WIDE | UWPROF_START_CPU_CLOCK,
		.freq_hz = 100,
		.max_depth = 16,
	};

	EXPECT_EQ(48, a.size);
	EXPECT_EQ(0, uwt_ioctl(self->fd, _IOW(UWPROF_IOC_MAGIC, 0x05, char[48]), &a));
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	/* Its filter flags without their fields are still checked. */
	a.flags |= UWPROF_START_COMM;
	EXPECT_EQ(-EINVAL, uwt_ioctl(self->fd, UWPROF_IOC_START, &a));
}

TEST_F(dev, mmap_layout)
{
	struct uwprof_ring_info ri = { .size = sizeof(ri) };
	uint32_t pid = getpid();
	long pg = getpagesize();
	struct uwt_rings r;
	void *p;
	uint32_t i;

	ASSERT_EQ(0, uwt_start(self->fd, 0, 100, 64, 16, &pid, 1));
	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_RING_INFO, &ri));
	EXPECT_EQ(16 * pg, ri.data_size);
	EXPECT_EQ(18 * pg, ri.stride);
	EXPECT_EQ(ri.nr_rings * ri.stride, ri.mmap_size);

	p = mmap(NULL, ri.mmap_size - pg, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, ri.mmap_size + pg, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, ri.mmap_size, PROT_READ, MAP_SHARED, self->fd, pg);
	EXPECT_EQ(MAP_FAILED, p);
	p = mmap(NULL, ri.mmap_size, PROT_READ, MAP_PRIVATE, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);

	ASSERT_EQ(0, uwt_rings_map(self->fd, &r));
	for (i = 0; i < r.info.nr_rings; i++) {
		struct uwprof_ring_ctl *c = uwt_ctl(&r, i);

		EXPECT_EQ(UWPROF_RING_VERSION, c->version);
		EXPECT_EQ(i, c->cpu);
		EXPECT_EQ(2 * pg, c->data_offset);
		EXPECT_EQ(ri.data_size, c->data_size);
	}
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_STOP, NULL));
	/* Rings stay readable after STOP; a new START waits for munmap. */
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_RING_INFO, &ri));
	EXPECT_EQ(-EBUSY, uwt_start(self->fd, 0, 100, 64, 16, &pid, 1));
	uwt_rings_unmap(&r);
	EXPECT_EQ(0, uwt_start(self->fd, 0, 100, 64, 32, &pid, 1));
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_RING_INFO, &ri));
	EXPECT_EQ(32 * pg, ri.data_size);
	/* Mapping survives close of the fd; the rings with it. */
	ASSERT_EQ(0, uwt_rings_map(self->fd, &r));
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(UWPROF_RING_VERSION, uwt_ctl(&r, 0)->version);
	uwt_rings_unmap(&r);
}

static int uwt_drop_caps(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = {};

	return syscall(SYS_capset, &h, d);
}

/* In a child: 0 when open failed with one of the expected errnos. */
static int uwt_open_denied(bool by_uid)
{
	pid_t pid = fork();
	int st;

	if (!pid) {
		int fd;

		if (by_uid ? setresuid(65534, 65534, 65534) : uwt_drop_caps())
			_exit(3);
		fd = open(UWT_DEV, O_RDWR);
		if (fd >= 0)
			_exit(1);
		/* Root without capabilities reaches the module's own check. */
		if (!by_uid && errno != EPERM)
			_exit(2);
		if (by_uid && errno != EPERM && errno != EACCES)
			_exit(2);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

TEST_F(dev, unprivileged_open)
{
	if (getuid() != 0)
		SKIP(return, "needs root to drop privilege in a child");
	EXPECT_EQ(0, uwt_open_denied(false));
	EXPECT_EQ(0, uwt_open_denied(true));
}


static int maps_set_bound(int fd, pid_t pid, uint64_t start,
			  struct uwprof_map *m, uint32_t size)
{
	struct uwprof_maps_set a = {
		.size = size, .pid = pid, .nr_maps = 1, .maps = (uintptr_t)m,
		.flags = UWPROF_MAPS_START_TIME, .start_time = start,
	};

	return uwt_ioctl(fd, UWPROF_IOC_MAPS_SET, &a);
}

/*
 * A list bound to a process instance (UWPROF_MAPS_START_TIME): accepted
 * for the live process with its start time, ESRCH for another start time
 * (the number reused) or a process that is gone; the first version of the
 * struct, without the field, still works.
 */
TEST_F(dev, maps_set_bound_to_process)
{
	struct uwprof_version v = { .size = sizeof(v) };
	struct uwprof_map m = {
		.start = 0x10000, .end = 0x20000, .flags = UWPROF_MAP_NO_TABLE,
	};
	struct uwprof_maps_set old = {
		.size = offsetof(struct uwprof_maps_set, start_time),
		.pid = 4245, .nr_maps = 1, .maps = (uintptr_t)&m,
	};
	const uint32_t full = sizeof(struct uwprof_maps_set);
	struct uwprof_stats st;
	pid_t live, dead;
	uint64_t t_live, t_dead;

	ASSERT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_VERSION, &v));
	EXPECT_TRUE(v.caps & UWPROF_CAP_MAPS_START);
	live = uwt_spinner();
	ASSERT_GT(live, 0);
	dead = fork();
	if (!dead)
		_exit(0);
	ASSERT_GT(dead, 0);
	t_dead = uwt_proc_start_ticks(dead);
	ASSERT_EQ(dead, waitpid(dead, NULL, 0));
	t_live = uwt_proc_start_ticks(live);
	ASSERT_NE(0, t_live);

	EXPECT_EQ(0, maps_set_bound(self->fd, live, t_live, &m, full));
	EXPECT_EQ(-ESRCH, maps_set_bound(self->fd, live, t_live + 1, &m, full));
	if (t_dead)
		EXPECT_EQ(-ESRCH, maps_set_bound(self->fd, dead, t_dead, &m,
						 full));
	EXPECT_EQ(0, uwt_ioctl(self->fd, UWPROF_IOC_MAPS_SET, &old));
	ASSERT_EQ(0, uwt_stats(self->fd, &st));
	EXPECT_EQ(2, st.processes);
	uwt_reap(live);
}

TEST_HARNESS_MAIN
