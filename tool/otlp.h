/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OTLP output: the profile as an OpenTelemetry profiles signal message,
 * opentelemetry.proto.collector.profiles.v1development.
 * ExportProfilesServiceRequest, encoded with pb.c (schema: tool/proto/,
 * written from the field numbers of the opentelemetry-proto release
 * below). One ResourceProfiles per process (host.name, process.pid,
 * process.executable.name and .path), one Profile per sample type it has
 * samples of (cpu, off_cpu; nanoseconds), samples carrying their thread,
 * stop reason and cgroup as attributes and their wall-clock timestamps;
 * one dictionary (otlp_dict.c) shared by all. Called from the report
 * command; nothing here prints.
 */
#ifndef UWPROF_TOOL_OTLP_H
#define UWPROF_TOOL_OTLP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The opentelemetry-proto release whose field numbers are encoded. */
#define UWPROF_OTLP_PROTO_VERSION	"v1.11.0"
#define UWPROF_OTLP_PROTO_COMMIT	"790608c4d51e6ffc12210b541e8514cbed9e91a4"

struct uwprof_rep;

/*
 * The encoded request, not compressed, in *buf (malloc'd, *len bytes):
 * an OTLP/HTTP body as it is, or for the sender to compress. Returns 0 or
 * a negative errno (*buf NULL).
 */
int uwprof_otlp_encode(const struct uwprof_rep *r, uint8_t **buf,
		       size_t *len);

/* Write the request to 'f' gzip-compressed. Returns 0 or a negative errno. */
int uwprof_otlp_write(const struct uwprof_rep *r, FILE *f);

#endif /* UWPROF_TOOL_OTLP_H */
