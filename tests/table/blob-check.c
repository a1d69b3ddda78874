// SPDX-License-Identifier: GPL-2.0
/*
 * uwprof_blob_check() against damaged blobs: compiles a real object, then
 * breaks one rule of the blob format at a time in a copy and expects the
 * check to refuse it, naming an offset. Also checks the NULL-safe frees
 * and that compiling the same object twice gives the same bytes.
 * TAP output. usage: blob-check OBJECT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

struct blob_view {
	struct uwprof_table_hdr *h;
	uint32_t *pc;
	uint16_t *idx;
	struct uwprof_rule *rules;
};

static void view(void *data, struct blob_view *v)
{
	v->h = data;
	v->pc = (uint32_t *)((char *)data + UWPROF_TABLE_ROWS_OFF(v->h));
	v->idx = (uint16_t *)((char *)data + UWPROF_TABLE_IDX_OFF(v->h));
	v->rules = (struct uwprof_rule *)((char *)data +
					  UWPROF_TABLE_RULES_OFF(v->h));
}

static int n = 1, failed;

static void check(int ok, const char *desc, const char *diag)
{
	printf("%s %d - %s\n", ok ? "ok" : "not ok", n++, desc);
	if (!ok) {
		failed++;
		if (diag)
			printf("#   %s\n", diag);
	}
}

enum damage {
	D_MAGIC, D_VERSION, D_ARCH, D_HDR_SIZE, D_RULE_SIZE, D_NO_ROWS,
	D_TOO_MANY_RULES, D_PC_ORDER, D_PC_EQUAL, D_RULE_INDEX, D_RESERVED,
	D_CFA_TYPE, D_FLAGS, D_LAST_NOT_END, D_SIZE_SHORT, D_BUILD_ID_SIZE,
	D_OLD_VERSION, D_PLT_ARG, D_REG_ARG, D__COUNT,
};

static const char *const damage_name[D__COUNT] = {
	"bad magic", "bad version", "unknown arch", "wrong header size",
	"wrong rule size", "zero rows", "rule count past the limit",
	"pc[] decreasing", "pc[] repeating", "rule index out of range",
	"reserved rule byte set", "unknown CFA type", "unknown rule flag",
	"last row not END", "blob one byte short", "build-id size past 20",
	"the previous format version", "PLT threshold past 15",
	"CFA register past 31",
};

static size_t damage(void *d, size_t size, enum damage which)
{
	struct blob_view v;
	uint32_t i;

	view(d, &v);
	switch (which) {
	case D_MAGIC: v.h->magic ^= 1; break;
	case D_VERSION: v.h->version = 99; break;
	case D_ARCH: v.h->arch = 7; break;
	case D_HDR_SIZE: v.h->hdr_size += 8; break;
	case D_RULE_SIZE: v.h->rule_size = 8; break;
	case D_NO_ROWS: v.h->nr_rows = 0; break;
	case D_TOO_MANY_RULES: v.h->nr_rules = UWPROF_TABLE_MAX_RULES + 1; break;
	case D_PC_ORDER: v.pc[1] = v.pc[0] - 1; break;
	case D_PC_EQUAL: v.pc[2] = v.pc[1]; break;
	case D_RULE_INDEX: v.idx[1] = (uint16_t)v.h->nr_rules; break;
	case D_RESERVED: v.rules[0].saved_off = -16; break;
	case D_CFA_TYPE: v.rules[0].cfa_type = 9; break;
	case D_FLAGS: v.rules[0].flags |= 0x80; break;
	case D_LAST_NOT_END:
		for (i = 0; i < v.h->nr_rules; i++)
			if (v.rules[i].cfa_type != UWPROF_CFA_END)
				v.idx[v.h->nr_rows - 1] = (uint16_t)i;
		break;
	case D_SIZE_SHORT: return size - 1;
	case D_BUILD_ID_SIZE: v.h->build_id_size = 21; break;
	case D_OLD_VERSION: v.h->version = UWPROF_TABLE_VERSION - 1; break;
	case D_PLT_ARG:
		v.rules[0].cfa_type = UWPROF_CFA_PLT;
		v.rules[0].cfa_arg = 16;
		break;
	case D_REG_ARG:
		v.rules[0].cfa_type = UWPROF_CFA_REG;
		v.rules[0].cfa_arg = 1U << 8;
		break;
	default: break;
	}
	return size;
}

int main(int argc, char **argv)
{
	struct uwprof_blob b, again;
	char err[256], desc[128];
	int i, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: blob-check OBJECT\n");
		return 2;
	}
	uwprof_blob_free(NULL);
	ret = uwprof_table_compile(argv[1], &b, NULL);
	check(!ret, "the object compiles", b.err);
	if (ret)
		return 1;
	check(!uwprof_blob_check(b.data, b.size, err, sizeof(err)),
	      "the compiled blob passes the check", err);
	ret = uwprof_table_compile(argv[1], &again, NULL);
	check(!ret && again.size == b.size &&
	      !memcmp(again.data, b.data, b.size) &&
	      again.key_size == b.key_size &&
	      !memcmp(again.key, b.key, sizeof(b.key)),
	      "compiling twice gives the same blob and key", again.err);
	uwprof_blob_free(&again);
	uwprof_blob_free(&again);
	check(!again.data && !again.size, "uwprof_blob_free twice is safe",
	      NULL);
	for (i = 0; i < D__COUNT; i++) {
		void *copy = malloc(b.size);
		size_t size;

		memcpy(copy, b.data, b.size);
		size = damage(copy, b.size, i);
		err[0] = 0;
		ret = uwprof_blob_check(copy, size, err, sizeof(err));
		snprintf(desc, sizeof(desc), "check refuses: %s",
			 damage_name[i]);
		check(ret && strstr(err, "table blob+0x"), desc,
		      ret ? err : "accepted");
		free(copy);
	}
	check(uwprof_blob_check(NULL, 0, err, sizeof(err)) != 0,
	      "check refuses NULL", NULL);
	uwprof_blob_free(&b);
	return failed ? 1 : 0;
}
