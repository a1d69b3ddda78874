// SPDX-License-Identifier: GPL-2.0
/*
 * The protobuf encoder and gzip stream (see pb.h). Called from the pprof
 * and OTLP writers.
 */
#include <errno.h>
#include <string.h>

#include <zlib.h>

#include "pb.h"
#include "vec.h"

static void pb_reserve(struct uwprof_pb *b, size_t n)
{
	if (!b->err && VEC_RESERVE(b->p, b->cap, b->len + n, 4096))
		b->err = -ENOMEM;
}

void uwprof_pb_varint(struct uwprof_pb *b, uint64_t v)
{
	pb_reserve(b, 10);
	if (b->err)
		return;
	while (v >= 0x80) {
		b->p[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->p[b->len++] = (uint8_t)v;
}

void uwprof_pb_key(struct uwprof_pb *b, unsigned int field, unsigned int wire)
{
	uwprof_pb_varint(b, (uint64_t)field << 3 | wire);
}

void uwprof_pb_uint(struct uwprof_pb *b, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	uwprof_pb_key(b, field, UWPROF_PB_VARINT);
	uwprof_pb_varint(b, v);
}

void uwprof_pb_raw64(struct uwprof_pb *b, uint64_t v)
{
	int i;

	pb_reserve(b, 8);
	if (b->err)
		return;
	for (i = 0; i < 8; i++)
		b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

void uwprof_pb_fixed64(struct uwprof_pb *b, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	uwprof_pb_key(b, field, UWPROF_PB_FIXED64);
	uwprof_pb_raw64(b, v);
}

void uwprof_pb_raw(struct uwprof_pb *b, const void *p, size_t n)
{
	pb_reserve(b, n);
	if (b->err || !n)
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void uwprof_pb_bytes(struct uwprof_pb *b, unsigned int field, const void *p,
		     size_t n)
{
	uwprof_pb_key(b, field, UWPROF_PB_LEN);
	uwprof_pb_varint(b, n);
	uwprof_pb_raw(b, p, n);
}

void uwprof_pb_str(struct uwprof_pb *b, unsigned int field, const char *s)
{
	uwprof_pb_bytes(b, field, s, strlen(s));
}

void uwprof_pb_msg(struct uwprof_pb *b, unsigned int field,
		   struct uwprof_pb *sub)
{
	if (sub->err && !b->err)
		b->err = sub->err;
	uwprof_pb_bytes(b, field, sub->p, sub->len);
	sub->len = 0;
}

int uwprof_pb_error(struct uwprof_pb *const *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i]->err)
			return v[i]->err;
	return 0;
}

void uwprof_pb_free(struct uwprof_pb *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

int uwprof_pb_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift;

	*v = 0;
	for (shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

int uwprof_pb_skip(const uint8_t **p, const uint8_t *end, unsigned int wire)
{
	uint64_t v;

	switch (wire) {
	case UWPROF_PB_VARINT:
		return uwprof_pb_read_varint(p, end, &v);
	case UWPROF_PB_FIXED64:
		v = 8;
		break;
	case UWPROF_PB_LEN:
		if (uwprof_pb_read_varint(p, end, &v))
			return -1;
		break;
	case 5:			/* fixed32 */
		v = 4;
		break;
	default:
		return -1;
	}
	if (v > (uint64_t)(end - *p))
		return -1;
	*p += v;
	return 0;
}

int uwprof_pb_gzip(FILE *f, const uint8_t *p, size_t n)
{
	uint8_t buf[65536];
	z_stream z;
	int zr, ret = 0;
	size_t have;

	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip header and trailer */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)p;
	z.avail_in = (uInt)n;	/* profiles stay far below 4 GiB */
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			ret = -EIO;
			break;
		}
		have = sizeof(buf) - z.avail_out;
		if (have && fwrite(buf, 1, have, f) != have) {
			ret = -(errno ? errno : EIO);
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return ret;
}
