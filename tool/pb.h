/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal protobuf encoder over a growable buffer: varints, fixed64,
 * length-delimited fields and finished sub-messages appended to their
 * parent; the gzip stream a finished message is written as; and the two
 * reading steps a small answer needs. Shared by
 * the pprof (pprof.c) and OTLP (otlp.c) writers. Errors are sticky: after
 * the first failed allocation every call does nothing and 'err' says
 * -ENOMEM. Single-threaded per buffer.
 */
#ifndef UWPROF_TOOL_PB_H
#define UWPROF_TOOL_PB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Wire types. */
#define UWPROF_PB_VARINT	0
#define UWPROF_PB_FIXED64	1
#define UWPROF_PB_LEN		2

struct uwprof_pb {
	uint8_t		*p;
	size_t		len;
	size_t		cap;
	int		err;		/* -ENOMEM, sticky */
};

void uwprof_pb_varint(struct uwprof_pb *b, uint64_t v);
void uwprof_pb_key(struct uwprof_pb *b, unsigned int field, unsigned int wire);
/* A varint field; proto3 leaves zero values out. */
void uwprof_pb_uint(struct uwprof_pb *b, unsigned int field, uint64_t v);
/* A fixed64 field, left out when zero. */
void uwprof_pb_fixed64(struct uwprof_pb *b, unsigned int field, uint64_t v);
/* Eight little-endian bytes, no key (inside a packed fixed64 field). */
void uwprof_pb_raw64(struct uwprof_pb *b, uint64_t v);
/* 'n' bytes as they are (already encoded fields). */
void uwprof_pb_raw(struct uwprof_pb *b, const void *p, size_t n);
void uwprof_pb_bytes(struct uwprof_pb *b, unsigned int field, const void *p,
		     size_t n);
void uwprof_pb_str(struct uwprof_pb *b, unsigned int field, const char *s);
/*
 * Append the finished sub-message 'sub' as field 'field' (also when
 * empty: a present zero-value message) and empty 'sub' for reuse; an
 * error of 'sub' becomes the parent's.
 */
void uwprof_pb_msg(struct uwprof_pb *b, unsigned int field,
		   struct uwprof_pb *sub);
/* The first error of any of 'n' buffers, or 0. */
int uwprof_pb_error(struct uwprof_pb *const *v, size_t n);
void uwprof_pb_free(struct uwprof_pb *b);

/*
 * Reading, for the short answers the agent parses: a varint at *p (before
 * 'end'), and skipping one field of wire type 'wire'. Both advance *p and
 * return 0, or -1 when the bytes are cut or malformed.
 */
int uwprof_pb_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);
int uwprof_pb_skip(const uint8_t **p, const uint8_t *end, unsigned int wire);

/*
 * Write 'n' bytes to 'f' as one gzip stream (header and trailer, as pprof
 * and OTLP/HTTP's Content-Encoding: gzip expect). Returns 0 or a negative
 * errno.
 */
int uwprof_pb_gzip(FILE *f, const uint8_t *p, size_t n);

#endif /* UWPROF_TOOL_PB_H */
