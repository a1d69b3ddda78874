// SPDX-License-Identifier: GPL-2.0
/*
 * The profile file's reader: the whole file mapped, the file header and
 * every record's frame checked here, each payload decoded by
 * profile_decode.c; and the lookups the report makes in what was read.
 * The writer is profile_write.c; the format is in profile_file.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile_decode.h"
#include "profile_file.h"

_Static_assert(sizeof(struct uwprof_pf_file_hdr) == 16, "file header");
_Static_assert(sizeof(struct uwprof_pf_hdr_fixed) == 40, "header record");
_Static_assert(sizeof(struct uwprof_pf_obj_fixed) == 40, "object record");
_Static_assert(sizeof(struct uwprof_pf_map) == 48, "map entry");
_Static_assert(sizeof(struct uwprof_pf_maps_fixed) == 24, "maps record");
_Static_assert(sizeof(struct uwprof_pf_sample_fixed) == 40, "sample record");
_Static_assert(sizeof(struct uwprof_pf_samples_fixed) == 8, "samples record");
_Static_assert(sizeof(struct uwprof_pf_lost_rec) == 24, "lost record");
_Static_assert(sizeof(struct uwprof_pf_exit_rec) == 16, "exit record");
_Static_assert(sizeof(struct uwprof_pf_thread_fixed) == 16, "thread record");
_Static_assert(sizeof(struct uwprof_pf_stats) % 8 == 0, "stats record");
_Static_assert(UWPROF_PF_STOP__COUNT <= 16, "stats.stop[] holds every stop reason");
_Static_assert(UWPROF_STATS_STOPS == UWPROF_PF_STOP_SNAPSHOT_SHORT &&
	       UWPROF_STOP_TIME == UWPROF_STATS_STOPS &&
	       UWPROF_STOP_PYTHON == UWPROF_STOP_TIME + 1 &&
	       UWPROF_STOP__COUNT == UWPROF_STOP_PYTHON + 1,
	       "the module's stop reasons past the first ten have file numbers of their own");

static int pf_maps_cmp(const void *a, const void *b)
{
	const struct uwprof_pf_maps *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	/* Same pid and time: keep file order (later replaces earlier). */
	return x->maps < y->maps ? -1 : x->maps > y->maps;
}

static int pf_ksym_cmp(const void *a, const void *b)
{
	const struct uwprof_pf_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The file header; returns where the records start, or -EINVAL. */
static long pf_file_header(struct uwprof_pf *pf, char *err, size_t errlen)
{
	struct uwprof_pf_file_hdr fh;

	if (pf->size < sizeof(fh)) {
		snprintf(err, errlen, "%s: truncated: %zu bytes, no file header",
			 pf->path, pf->size);
		return -EINVAL;
	}
	memcpy(&fh, pf->data, sizeof(fh));
	if (memcmp(fh.magic, UWPROF_PF_MAGIC, sizeof(fh.magic))) {
		snprintf(err, errlen, "%s: not a uwprof profile (bad magic)",
			 pf->path);
		return -EINVAL;
	}
	if (fh.version < UWPROF_PF_VERSION_MIN || fh.version > UWPROF_PF_VERSION) {
		snprintf(err, errlen,
			 "%s: profile format version %u, this uwprof reads %u to %u",
			 pf->path, fh.version, UWPROF_PF_VERSION_MIN,
			 UWPROF_PF_VERSION);
		return -EINVAL;
	}
	if (fh.hdr_size < sizeof(fh) || (fh.hdr_size & 7) ||
	    fh.hdr_size > pf->size) {
		snprintf(err, errlen, "%s: bad file header size %u", pf->path,
			 fh.hdr_size);
		return -EINVAL;
	}
	pf->hdr.version = fh.version;
	return fh.hdr_size;
}

/*
 * The frame of the record at 'off' (its type and size) into 'r', checked
 * against the file's end; 0 or -EINVAL.
 */
static int pf_frame(const struct uwprof_pf *pf, size_t off, int ended,
		    struct uwprof_pf_rec *r, char *err, size_t errlen)
{
	const char *tn;

	if (pf->size - off < sizeof(*r)) {
		snprintf(err, errlen,
			 "%s: truncated: %zu stray bytes at offset %zu",
			 pf->path, pf->size - off, off);
		return -EINVAL;
	}
	memcpy(r, pf->data + off, sizeof(*r));
	tn = pf_decode_type_name(r->type);
	if (r->size < sizeof(*r) || (r->size & 7)) {
		snprintf(err, errlen,
			 "%s: corrupt: %s record (type %u) at offset %zu has size %u",
			 pf->path, tn, r->type, off, r->size);
		return -EINVAL;
	}
	if (r->size > pf->size - off) {
		snprintf(err, errlen,
			 "%s: truncated: %s record at offset %zu needs %u bytes, %zu left",
			 pf->path, tn, off, r->size, pf->size - off);
		return -EINVAL;
	}
	if (ended) {
		snprintf(err, errlen,
			 "%s: corrupt: %s record at offset %zu after the end record",
			 pf->path, tn, off);
		return -EINVAL;
	}
	return 0;
}

/* One framed record's payload, decoded; 0 or -errno with 'err' said. */
static int pf_record(struct pf_priv *pp, size_t off,
		     const struct uwprof_pf_rec *r, int first, char *err,
		     size_t errlen)
{
	struct uwprof_pf *pf = &pp->pub;
	const char *tn = pf_decode_type_name(r->type);
	struct pf_cur c;
	int ret;

	c.p = pf->data + off + sizeof(*r);
	c.left = r->size - sizeof(*r);
	c.err = 0;
	c.why = NULL;
	pp->why[0] = 0;
	if (first && r->type != UWPROF_PF_HEADER) {
		snprintf(err, errlen,
			 "%s: corrupt: first record at offset %zu is %s, not header",
			 pf->path, off, tn);
		return -EINVAL;
	}
	ret = first ? pf_decode_header(pp, &c) : pf_decode_one(pp, r->type, &c);
	if (ret == -ENOMEM) {
		snprintf(err, errlen, "%s: out of memory", pf->path);
		return -ENOMEM;
	}
	if (ret) {
		const char *why = pp->why[0] ? pp->why : c.why;

		snprintf(err, errlen,
			 "%s: corrupt: %s record at offset %zu (size %u) is malformed%s%s",
			 pf->path, tn, off, r->size, why ? ": " : "",
			 why ? why : "");
		return -EINVAL;
	}
	return 0;
}

static int pf_parse(struct pf_priv *pp, char *err, size_t errlen)
{
	struct uwprof_pf *pf = &pp->pub;
	long start = pf_file_header(pf, err, errlen);
	size_t off;
	int first = 1, ended = 0, ret;

	if (start < 0)
		return (int)start;
	for (off = (size_t)start; off < pf->size;) {
		struct uwprof_pf_rec r;

		ret = pf_frame(pf, off, ended, &r, err, errlen);
		if (ret)
			return ret;
		if (r.type == UWPROF_PF_END && !first) {
			ended = 1;
			off += r.size;
			continue;
		}
		ret = pf_record(pp, off, &r, first, err, errlen);
		if (ret)
			return ret;
		first = 0;
		off += r.size;
	}
	if (first) {
		snprintf(err, errlen, "%s: truncated: no header record", pf->path);
		return -EINVAL;
	}
	if (!ended) {
		snprintf(err, errlen,
			 "%s: truncated: ends at offset %zu without an end record",
			 pf->path, pf->size);
		return -EINVAL;
	}
	if (pf->nr_maps)
		qsort(pf->maps, pf->nr_maps, sizeof(*pf->maps), pf_maps_cmp);
	if (pf->nr_ksyms)
		qsort(pf->ksyms, pf->nr_ksyms, sizeof(*pf->ksyms), pf_ksym_cmp);
	return 0;
}

int uwprof_pf_open(const char *path, struct uwprof_pf **out, char *err,
		   size_t errlen)
{
	struct pf_priv *pp;
	struct stat st;
	void *m;
	int fd, ret;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	pp = calloc(1, sizeof(*pp));
	if (pp)
		pp->pub.path = strdup(path);
	if (!pp || !pp->pub.path) {
		free(pp);
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	pp->pub.size = (size_t)st.st_size;
	if (pp->pub.size) {
		m = mmap(NULL, pp->pub.size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			ret = -errno;
			snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
			close(fd);
			pp->pub.size = 0;
			uwprof_pf_close(&pp->pub);
			return ret;
		}
		pp->pub.data = m;
	}
	close(fd);
	ret = pf_parse(pp, err, errlen);
	if (ret) {
		uwprof_pf_close(&pp->pub);
		return ret;
	}
	*out = &pp->pub;
	return 0;
}

void uwprof_pf_close(struct uwprof_pf *pf)
{
	struct pf_priv *pp = (struct pf_priv *)pf;
	size_t i;

	if (!pf)
		return;
	if (pf->data)
		munmap((void *)pf->data, pf->size);
	for (i = 0; i < pp->strs.n; i++)
		free(pp->strs.v[i]);
	free(pp->strs.v);
	free(pf->objects);
	free(pf->maps);
	free(pf->samples);
	free(pf->exits);
	free(pf->threads);
	free(pf->cgroups);
	free(pf->ksyms);
	free(pf->jitsyms);
	free(pf->pycodes);
	free(pf->pyinterps);
	free(pp->stacks);
	for (i = 0; i < pp->nr_ips_blocks; i++)
		free(pp->ips_blocks[i]);
	free(pp->ips_blocks);
	uwprof_u64map_free(&pp->stack_ids);
	free(pf->path);
	free(pp);
}

const struct uwprof_pf_object *uwprof_pf_object_find(const struct uwprof_pf *pf,
						     uint64_t object_id)
{
	size_t i;

	for (i = 0; i < pf->nr_objects; i++)
		if (pf->objects[i].object_id == object_id)
			return &pf->objects[i];
	return NULL;
}

/* Whether 'pid' exec'd in (lo, hi]. */
static int pf_exec_between(const struct uwprof_pf *pf, uint32_t pid,
			   uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < pf->nr_exits; i++) {
		const struct uwprof_pf_exit_rec *e = &pf->exits[i];

		if (e->pid == pid && e->exec && e->time_ns > lo &&
		    e->time_ns <= hi)
			return 1;
	}
	return 0;
}

const struct uwprof_pf_maps *uwprof_pf_maps_for(const struct uwprof_pf *pf,
						uint32_t pid, uint64_t time_ns)
{
	size_t lo = 0, hi = pf->nr_maps, first;
	const struct uwprof_pf_maps *m;

	/* First snapshot of 'pid'. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pf->maps[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	if (first == pf->nr_maps || pf->maps[first].pid != pid)
		return NULL;
	/* Last snapshot of 'pid' taken at or before time_ns. */
	hi = first;
	while (hi + 1 < pf->nr_maps && pf->maps[hi + 1].pid == pid &&
	       pf->maps[hi + 1].time_ns <= time_ns)
		hi++;
	m = &pf->maps[hi];
	if (m->time_ns <= time_ns) {
		if (!pf_exec_between(pf, pid, m->time_ns, time_ns))
			return m;
		/* Exec'd since: the next snapshot, if it is the new image's. */
		if (hi + 1 < pf->nr_maps && pf->maps[hi + 1].pid == pid)
			return &pf->maps[hi + 1];
		return NULL;
	}
	/* Only later snapshots: the first, unless an exec separates them. */
	if (pf_exec_between(pf, pid, time_ns, m->time_ns - 1))
		return NULL;
	return m;
}

const struct uwprof_pf_map *uwprof_pf_map_find(const struct uwprof_pf_maps *m,
					       uint64_t ip)
{
	size_t lo = 0, hi;

	if (!m)
		return NULL;
	hi = m->nr_maps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < m->maps[mid].start)
			hi = mid;
		else if (ip >= m->maps[mid].end)
			lo = mid + 1;
		else
			return &m->maps[mid];
	}
	return NULL;
}

static int pf_maps_hold(const struct uwprof_pf_maps *m, const uint64_t *ips,
			size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!uwprof_pf_map_find(m, ips[i]))
			return 0;
	return 1;
}

const struct uwprof_pf_maps *uwprof_pf_maps_for_ips(const struct uwprof_pf *pf,
						    uint32_t pid,
						    uint64_t time_ns,
						    const uint64_t *ips, size_t n)
{
	const struct uwprof_pf_maps *m = uwprof_pf_maps_for(pf, pid, time_ns);
	const struct uwprof_pf_maps *end = pf->maps + pf->nr_maps, *later;

	if (!m || pf_maps_hold(m, ips, n))
		return m;
	for (later = m + 1; later < end && later->pid == pid; later++) {
		if (later->time_ns <= time_ns)
			continue;
		if (pf_exec_between(pf, pid, time_ns, later->time_ns - 1))
			break;
		if (pf_maps_hold(later, ips, n))
			return later;
	}
	return m;
}

const struct uwprof_pf_map *uwprof_pf_resolve(const struct uwprof_pf *pf,
					      uint32_t pid, uint64_t time_ns,
					      uint64_t ip,
					      const struct uwprof_pf_object **obj)
{
	const struct uwprof_pf_map *map;

	map = uwprof_pf_map_find(uwprof_pf_maps_for_ips(pf, pid, time_ns, &ip, 1),
				 ip);
	if (obj)
		*obj = map && map->object_id ?
		       uwprof_pf_object_find(pf, map->object_id) : NULL;
	return map;
}

/* [*lo, *hi): the times between the execs of 'pid' around 'time_ns'. */
static void pf_image_span(const struct uwprof_pf *pf, uint32_t pid,
			  uint64_t time_ns, uint64_t *lo, uint64_t *hi)
{
	size_t i;

	*lo = 0;
	*hi = UINT64_MAX;
	for (i = 0; i < pf->nr_exits; i++) {
		const struct uwprof_pf_exit_rec *e = &pf->exits[i];

		if (e->pid != pid || !e->exec)
			continue;
		if (e->time_ns <= time_ns && e->time_ns > *lo)
			*lo = e->time_ns;
		else if (e->time_ns > time_ns && e->time_ns < *hi)
			*hi = e->time_ns;
	}
}

/* The last name recorded for the thread in [lo, hi), other than 'not'. */
/*
 * A thread record says the thread had that name at its time: the sample
 * takes the latest one at or before it, else the first after it (a name
 * read from /proc after the sample, with no rename in between).
 */
static const char *pf_comm_in(const struct uwprof_pf *pf, uint32_t pid,
			      uint32_t tid, uint64_t lo, uint64_t hi,
			      const char *not, uint64_t at)
{
	const struct uwprof_pf_thread *t, *before = NULL, *after = NULL;
	size_t i;

	for (i = 0; i < pf->nr_threads; i++) {
		t = &pf->threads[i];
		if (t->tid != tid || t->pid != pid || t->time_ns < lo ||
		    t->time_ns >= hi || (not && !strcmp(t->comm, not)))
			continue;
		if (t->time_ns <= at) {
			if (!before || t->time_ns >= before->time_ns)
				before = t;
		} else if (!after || t->time_ns < after->time_ns) {
			after = t;
		}
	}
	if (before || after)
		return (before ? before : after)->comm;
	for (i = pf->nr_maps; i-- > 0;)
		if (pf->maps[i].pid == pid && pf->maps[i].comm &&
		    pf->maps[i].comm[0] && pf->maps[i].time_ns >= lo &&
		    pf->maps[i].time_ns < hi &&
		    (!not || strcmp(pf->maps[i].comm, not)))
			return pf->maps[i].comm;
	return NULL;
}

/* The name the exec at 'time_ns' gave the process (recorded at that time). */
static const char *pf_exec_comm(const struct uwprof_pf *pf, uint32_t pid,
				uint64_t time_ns)
{
	size_t i;

	for (i = 0; i < pf->nr_threads; i++)
		if (pf->threads[i].pid == pid && pf->threads[i].tid == pid &&
		    pf->threads[i].time_ns == time_ns)
			return pf->threads[i].comm;
	return NULL;
}

const char *uwprof_pf_comm(const struct uwprof_pf *pf, uint32_t pid,
			   uint32_t tid, uint64_t time_ns)
{
	const char *c;
	uint64_t lo, hi;

	pf_image_span(pf, pid, time_ns, &lo, &hi);
	/*
	 * The exec renames the process a little before it is reported: a name
	 * read from /proc in between is the next image's, so within an image
	 * that exec'd, a name other than the one the exec gave wins.
	 */
	c = NULL;
	if (hi != UINT64_MAX)
		c = pf_comm_in(pf, pid, tid, lo, hi, pf_exec_comm(pf, pid, hi),
			       time_ns);
	if (!c)
		c = pf_comm_in(pf, pid, tid, lo, hi, NULL, time_ns);
	/*
	 * No name was taken while that image ran (it exec'd again before the
	 * recorder read it): the nearest one recorded, rather than none.
	 */
	return c ? c : pf_comm_in(pf, pid, tid, 0, UINT64_MAX, NULL, time_ns);
}

const char *uwprof_pf_cgroup(const struct uwprof_pf *pf, uint32_t pid,
			     uint64_t time_ns)
{
	const struct uwprof_pf_cgroup *best = NULL, *after = NULL;
	size_t i;

	for (i = 0; i < pf->nr_cgroups; i++) {
		const struct uwprof_pf_cgroup *c = &pf->cgroups[i];

		if (c->pid != pid)
			continue;
		if (c->time_ns <= time_ns) {
			if (!best || c->time_ns >= best->time_ns)
				best = c;
		} else if (!after || c->time_ns < after->time_ns) {
			after = c;
		}
	}
	best = best ? best : after;
	return best ? best->path : NULL;
}

const char *uwprof_pf_stop_name(unsigned int stop)
{
	static const char *const names[UWPROF_PF_STOP__COUNT] = {
		[UWPROF_STOP_OK] = "complete",
		[UWPROF_STOP_FP_END] = "fp-chain-end",
		[UWPROF_STOP_DEPTH] = "max-depth",
		[UWPROF_STOP_NO_MAP] = "no-mapping",
		[UWPROF_STOP_NO_ROW] = "no-table-row",
		[UWPROF_STOP_UNSUPPORTED] = "unsupported-rule",
		[UWPROF_STOP_READ] = "stack-unreadable",
		[UWPROF_STOP_BAD_SP] = "bad-sp",
		[UWPROF_STOP_BAD_PC] = "bad-pc",
		[UWPROF_STOP_NO_PROCESS] = "process-not-uploaded-yet",
		[UWPROF_PF_STOP_SNAPSHOT_SHORT] = "snapshot-too-short",
		[UWPROF_PF_STOP_EXEC] = "in-execve",
		[UWPROF_PF_STOP_TIME] = "walk-time-limit",
		[UWPROF_PF_STOP_PYTHON] = "python-chain",
	};

	return stop < UWPROF_PF_STOP__COUNT && names[stop] ? names[stop] : "unknown";
}

unsigned int uwprof_pf_stop_of_module(unsigned int stop)
{
	if (stop == UWPROF_STOP_TIME)
		return UWPROF_PF_STOP_TIME;
	return stop == UWPROF_STOP_PYTHON ? UWPROF_PF_STOP_PYTHON : stop;
}

const struct uwprof_pf_ksym *uwprof_pf_ksym_find(const struct uwprof_pf *pf,
						 uint64_t addr)
{
	size_t lo = 0, hi = pf->nr_ksyms;
	const struct uwprof_pf_ksym *k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pf->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	k = &pf->ksyms[lo - 1];
	if (k->size && addr - k->addr >= k->size)
		return NULL;
	return k;
}
