// SPDX-License-Identifier: GPL-2.0
/*
 * uwprof_blob_check() against damaged blobs: compiles a real object, then
 * breaks one rule of the blob format at a time in a copy and expects the
 * check to refuse it, naming an offset (damage a blob has no room for, a
 * second page in a one-page table, is skipped). Also checks the NULL-safe
 * frees and that compiling the same object twice gives the same bytes.
 * TAP output. usage: blob-check OBJECT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

struct blob_view {
	struct uwprof_table_hdr *h;
	struct uwprof_table_page *page;
	uint16_t *pc;
	uint8_t *slot;
	uint16_t *palette;
	struct uwprof_rule *rules;
};

static void view(void *data, struct blob_view *v)
{
	char *p = data;

	v->h = data;
	v->page = (struct uwprof_table_page *)(p + UWPROF_TABLE_PAGES_OFF(v->h));
	v->pc = (uint16_t *)(p + UWPROF_TABLE_PC_OFF(v->h));
	v->slot = (uint8_t *)(p + UWPROF_TABLE_SLOT_OFF(v->h));
	v->palette = (uint16_t *)(p + UWPROF_TABLE_PALETTE_OFF(v->h));
	v->rules = (struct uwprof_rule *)(p + UWPROF_TABLE_RULES_OFF(v->h));
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
	D_OLD_VERSION, D_PLT_ARG, D_REG_ARG, D_PAGE_SHIFT, D_HDR_RESERVED,
	D_NO_PAGES, D_PAGE0, D_PAGE_CLOSE, D_PAGE_CLOSE_PAL, D_PAGE_PALETTE,
	D_FIRST_OFF, D_SLOT, D_PALETTE_COUNT, D_PADDING, D_PAGE_ORDER,
	D_OFF_PAGE, D__COUNT,
};

static const char *const damage_name[D__COUNT] = {
	"bad magic", "bad version", "unknown arch", "wrong header size",
	"wrong rule size", "zero rows", "rule count past the limit",
	"pc[] decreasing", "pc[] repeating", "palette entry out of range",
	"reserved rule byte set", "unknown CFA type", "unknown rule flag",
	"last row not END", "blob one byte short", "build-id size past 20",
	"the previous format version", "PLT threshold past 15",
	"CFA register past 31", "page shift past 16", "reserved header field set",
	"zero pages", "page 0 not at row 0", "closing page not at nr_rows",
	"closing page not at nr_palette", "a page's palette past the palettes",
	"a page's first row not at offset 0", "a slot past the palettes",
	"palette count past the limit", "padding before the rules not zero",
	"page starts not increasing", "the last row's offset past its page",
};

/* The table's last row: END, in the last page. */
static uint32_t last_row(const struct blob_view *v)
{
	return v->h->nr_rows - 1;
}

/* A rule the last row can name through its palette that is not END. */
static int not_end_slot(const struct blob_view *v, uint8_t *slot)
{
	uint32_t p = v->h->nr_pages - 1, k;

	for (k = 0; v->page[p].palette + k < v->h->nr_palette && k < 256; k++)
		if (v->rules[v->palette[v->page[p].palette + k]].cfa_type !=
		    UWPROF_CFA_END) {
			*slot = (uint8_t)k;
			return 1;
		}
	return 0;
}

/* Damage to the header, pages and rows; 0 when the blob has no room for it. */
static int damage_layout(struct blob_view *v, enum damage which)
{
	switch (which) {
	case D_PC_ORDER:
		if (v->page[1].row - v->page[0].row < 3)
			return 0;
		v->pc[2] = v->pc[1] - 1;
		return 1;
	case D_PC_EQUAL:
		if (v->page[1].row - v->page[0].row < 3)
			return 0;
		v->pc[2] = v->pc[1];
		return 1;
	case D_RULE_INDEX: v->palette[0] = (uint16_t)v->h->nr_rules; return 1;
	case D_LAST_NOT_END: return not_end_slot(v, &v->slot[last_row(v)]);
	case D_PAGE_SHIFT: v->h->page_shift = 17; return 1;
	case D_HDR_RESERVED: v->h->__reserved = 1; return 1;
	case D_NO_PAGES: v->h->nr_pages = 0; return 1;
	case D_PAGE0: v->page[0].row = 1; return 1;
	case D_PAGE_CLOSE: v->page[v->h->nr_pages].row--; return 1;
	case D_PAGE_CLOSE_PAL: v->page[v->h->nr_pages].palette++; return 1;
	case D_PAGE_PALETTE:
		v->page[v->h->nr_pages - 1].palette = v->h->nr_palette + 1;
		return 1;
	case D_FIRST_OFF:
		if (v->page[v->h->nr_pages - 1].row + 1 == v->h->nr_rows)
			return 0;
		v->pc[v->page[v->h->nr_pages - 1].row] = 1;
		return 1;
	case D_SLOT:
		v->slot[last_row(v)] = (uint8_t)(v->h->nr_palette -
						  v->page[v->h->nr_pages - 1].palette);
		return v->h->nr_palette - v->page[v->h->nr_pages - 1].palette < 256;
	case D_PALETTE_COUNT: v->h->nr_palette = UWPROF_TABLE_MAX_PALETTE + 1; return 1;
	case D_PADDING:
		if (UWPROF_TABLE_PALETTE_OFF(v->h) + 2ULL * v->h->nr_palette ==
		    UWPROF_TABLE_RULES_OFF(v->h))
			return 0;
		((char *)v->h)[UWPROF_TABLE_RULES_OFF(v->h) - 1] = 1;
		return 1;
	case D_PAGE_ORDER:
		if (v->h->nr_pages < 3)
			return 0;
		v->page[2].row = v->page[1].row;
		return 1;
	case D_OFF_PAGE:
		if (v->h->page_shift == 16)
			return 0;
		v->pc[last_row(v)] = (uint16_t)(1U << v->h->page_shift);
		return 1;
	default:
		return 1;
	}
}

/* Returns the damaged blob's size, 0 if this blob cannot have it. */
static size_t damage(void *d, size_t size, enum damage which)
{
	struct blob_view v;

	view(d, &v);
	switch (which) {
	case D_MAGIC: v.h->magic ^= 1; break;
	case D_VERSION: v.h->version = 99; break;
	case D_ARCH: v.h->arch = 7; break;
	case D_HDR_SIZE: v.h->hdr_size += 8; break;
	case D_RULE_SIZE: v.h->rule_size = 8; break;
	case D_NO_ROWS: v.h->nr_rows = 0; break;
	case D_TOO_MANY_RULES: v.h->nr_rules = UWPROF_TABLE_MAX_RULES + 1; break;
	case D_RESERVED: v.rules[0].saved_off = -16; break;
	case D_CFA_TYPE: v.rules[0].cfa_type = 9; break;
	case D_FLAGS: v.rules[0].flags |= 0x80; break;
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
	default:
		return damage_layout(&v, which) ? size : 0;
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
		snprintf(desc, sizeof(desc), "check refuses: %s",
			 damage_name[i]);
		if (!size) {
			printf("ok %d - %s # SKIP the blob has no room for it\n",
			       n++, desc);
			free(copy);
			continue;
		}
		ret = uwprof_blob_check(copy, size, err, sizeof(err));
		check(ret && strstr(err, "table blob+0x"), desc,
		      ret ? err : "accepted");
		free(copy);
	}
	check(uwprof_blob_check(NULL, 0, err, sizeof(err)) != 0,
	      "check refuses NULL", NULL);
	uwprof_blob_free(&b);
	return failed ? 1 : 0;
}
