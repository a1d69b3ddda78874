// SPDX-License-Identifier: GPL-2.0
/*
 * Where the recorder's records go: the profile file of 'uwprof record',
 * and the open windows of 'uwprof agent' (each a profile of its own,
 * written while a request waits for it). A window's write error stays in
 * its writer (uwprof_pfw.error) and fails only that window; an error of
 * the recording's file stops the recording (rec_out).
 */
#include "recorder.h"

#define EACH_TEE(r, i) for ((i) = 0; (i) < (r)->nr_tees; (i)++)

void rec_w_object(struct recorder *r, const struct uwprof_pf_obj_fixed *f,
		  const char *path, const void *image, uint64_t image_size)
{
	size_t i;

	if (!r->no_file)
		rec_out(r, uwprof_pfw_object(&r->w, f, path, image, image_size));
	EACH_TEE(r, i)
		uwprof_pfw_object(r->tees[i], f, path, image, image_size);
}

void rec_w_maps(struct recorder *r, uint64_t time_ns, uint32_t pid,
		const char *comm, const struct uwprof_pf_map *maps, uint32_t nr)
{
	size_t i;

	if (!r->no_file)
		rec_out(r, uwprof_pfw_maps(&r->w, time_ns, pid, comm, maps, nr));
	EACH_TEE(r, i)
		uwprof_pfw_maps(r->tees[i], time_ns, pid, comm, maps, nr);
}

void rec_w_sample(struct recorder *r, const struct uwprof_rec_sample *s)
{
	size_t i;

	if (!r->no_file)
		rec_out(r, uwprof_pfw_sample(&r->w, s));
	EACH_TEE(r, i)
		uwprof_pfw_sample(r->tees[i], s);
}

void rec_w_lost(struct recorder *r, uint64_t time_ns, uint32_t cpu,
		uint64_t count)
{
	size_t i;

	if (!r->no_file)
		rec_out(r, uwprof_pfw_lost(&r->w, time_ns, cpu, count));
	EACH_TEE(r, i)
		uwprof_pfw_lost(r->tees[i], time_ns, cpu, count);
}

void rec_w_exit(struct recorder *r, uint64_t time_ns, uint32_t pid,
		uint32_t exec)
{
	size_t i;

	if (!r->no_file)
		rec_out(r, uwprof_pfw_exit(&r->w, time_ns, pid, exec));
	EACH_TEE(r, i)
		uwprof_pfw_exit(r->tees[i], time_ns, pid, exec);
}

void rec_w_thread(struct recorder *r, uint64_t time_ns, uint32_t pid,
		  uint32_t tid, const char *comm)
{
	size_t i;

	if (!r->no_file)
		rec_out(r, uwprof_pfw_thread(&r->w, time_ns, pid, tid, comm));
	EACH_TEE(r, i)
		uwprof_pfw_thread(r->tees[i], time_ns, pid, tid, comm);
}

void rec_w_cgroup(struct recorder *r, uint64_t time_ns, uint32_t pid,
		  const char *path)
{
	size_t i;

	if (!r->no_file)
		rec_out(r, uwprof_pfw_cgroup(&r->w, time_ns, pid, path));
	EACH_TEE(r, i)
		uwprof_pfw_cgroup(r->tees[i], time_ns, pid, path);
}

void rec_w_pyinterp(struct recorder *r, const struct uwprof_pf_pyinterp *p)
{
	size_t i;

	if (!r->no_file)
		rec_out(r, uwprof_pfw_pyinterp(&r->w, p));
	EACH_TEE(r, i)
		uwprof_pfw_pyinterp(r->tees[i], p);
}

void rec_w_jitsyms(struct recorder *r, uint64_t time_ns, uint32_t pid,
		   uint32_t source, const struct uwprof_pf_jitsym *syms,
		   uint64_t nr)
{
	size_t i;

	if (!r->no_file)
		rec_out(r, uwprof_pfw_jitsyms(&r->w, time_ns, pid, source, syms,
					      nr));
	EACH_TEE(r, i)
		uwprof_pfw_jitsyms(r->tees[i], time_ns, pid, source, syms, nr);
}

void rec_w_pycode(struct recorder *r, const struct uwprof_pf_pycode *c)
{
	size_t i;

	if (!r->no_file)
		rec_out(r, uwprof_pfw_pycode(&r->w, c));
	EACH_TEE(r, i)
		uwprof_pfw_pycode(r->tees[i], c);
}
