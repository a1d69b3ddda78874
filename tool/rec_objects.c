// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder's objects: one per file (or the vDSO) the profiled
 * processes map, with its table compiled or taken from the cache, uploaded
 * to the module, kept for finishing walks, and its OBJECT record; and the
 * command's own objects compiled before it starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder.h"

static struct rec_obj *obj_new(struct recorder *r)
{
	struct rec_obj *o;

	if (r->nr_objs == r->cap_objs) {
		size_t cap = r->cap_objs ? r->cap_objs * 2 : 64;
		struct rec_obj *nv = realloc(r->objs, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		/* r->vdso points into the array. */
		if (r->vdso)
			r->vdso = nv + (r->vdso - r->objs);
		r->objs = nv;
		r->cap_objs = cap;
	}
	o = &r->objs[r->nr_objs];
	memset(o, 0, sizeof(*o));
	o->id = r->last_obj_id + 1;
	return o;
}

/* obj_new()'s object is complete: its id is taken. */
static void obj_commit(struct recorder *r)
{
	r->last_obj_id = r->objs[r->nr_objs].id;
	r->nr_objs++;
}

struct rec_obj *rec_obj_by_id(struct recorder *r, uint64_t id)
{
	size_t lo = 0, hi = r->nr_objs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->objs[mid].id == id)
			return &r->objs[mid];
		if (r->objs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/*
 * Keeps an uploaded blob to finish walks from snapshots with, checked as
 * the module checks it here rather than when a walk first needs it: such
 * walks come right after a process starts, while it runs, and the check
 * reads every row.
 */
static void obj_keep_table(struct rec_obj *o, struct uwprof_blob *b)
{
	o->tab = malloc(sizeof(*o->tab));
	if (!o->tab)
		return;
	if (uwprof_snap_table_init(o->tab, b->data, b->size)) {
		free(o->tab);
		o->tab = NULL;
		return;
	}
	b->data = NULL;		/* the table owns it now */
}

void rec_obj_tables_free(struct rec_obj *o)
{
	if (o->tab) {
		uwprof_snap_table_free(o->tab);
		free(o->tab);
		o->tab = NULL;
	}
}

/*
 * Compiles (or finds in the cache) and uploads an object's table; on any
 * failure the object is used without a table (frame-pointer fallback) and
 * the reason is said once.
 */
static void obj_table(struct recorder *r, struct rec_obj *o, const char *open_path,
		      int fd, const void *image, size_t image_size, uid_t owner)
{
	struct uwprof_blob b;
	int ret;

	if (o->has_info && o->info.machine != r->elf_machine) {
		if (!r->o.quiet)
			fprintf(stderr,
				"uwprof record: %s: not an object of this machine's architecture; no table\n",
				o->path);
		o->no_table = 1;
		return;
	}
	ret = uwprof_tcache_get(&r->cache, open_path, fd, image, image_size,
				owner, &b);
	if (ret) {
		if (!r->o.quiet) {
			if (ret == -ENODATA)
				fprintf(stderr,
					"uwprof record: %s: no unwind information; its frames use frame pointers\n",
					o->path);
			else
				fprintf(stderr,
					"uwprof record: %s; its frames use frame pointers\n",
					b.err);
		}
		uwprof_blob_free(&b);
		o->no_table = 1;
		return;
	}
	ret = uwprof_dev_table_add(&r->dev, o->id, b.data, b.size);
	if (!ret && r->o.snapshot_size)
		obj_keep_table(o, &b);
	uwprof_blob_free(&b);
	if (ret) {
		if (ret == -ENOSPC && !r->warned_mem) {
			fprintf(stderr,
				"uwprof record: the module's table memory is full (parameter table_mem_max): further objects use frame pointers\n");
			r->warned_mem = 1;
		} else if (ret != -ENOSPC) {
			fprintf(stderr,
				"uwprof record: %s: uploading its table: %s\n",
				o->path, strerror(-ret));
		}
		o->no_table = 1;
	}
}

/* The fixed part of an object's record in the profile file. */
static void obj_fixed(const struct recorder *r, const struct rec_obj *o,
		      struct uwprof_pf_obj_fixed *f)
{
	memset(f, 0, sizeof(*f));
	f->object_id = o->id;
	f->arch = r->arch;
	f->flags = (uint16_t)((o->vdso ? UWPROF_PF_OBJ_VDSO : 0) |
			      (o->no_table ? UWPROF_PF_OBJ_NO_TABLE : 0));
	if (o->has_info) {
		f->build_id_size = o->info.build_id_size;
		memcpy(f->build_id, o->info.build_id, o->info.build_id_size);
	}
}

static void obj_write(struct recorder *r, const struct rec_obj *o,
		      const void *image, uint64_t image_size)
{
	struct uwprof_pf_obj_fixed f;

	obj_fixed(r, o, &f);
	if (o->no_table)
		r->objects_no_table++;
	rec_w_object(r, &f, o->path, image, image_size);
}

/* The object already known for a mapping, or NULL. */
struct rec_obj *rec_obj_lookup(struct recorder *r,
			       const struct uwprof_pm_entry *e)
{
	struct rec_obj *o;
	size_t i;

	if (e->kind == UWPROF_PM_VDSO)
		return r->vdso;
	for (i = 0; i < r->nr_objs; i++) {
		o = &r->objs[i];
		if (o->vdso || o->stale)
			continue;
		if (e->inode ? (o->inode == e->inode &&
				o->dev_major == e->dev_major &&
				o->dev_minor == e->dev_minor) :
			       !strcmp(o->path, e->path))
			return o;
	}
	return NULL;
}

/* Notes the file's identity beyond its inode number (see rec_obj). */
static void obj_note_file(struct rec_obj *o, const struct stat *st)
{
	o->ctime = st->st_ctim;
	o->size = (uint64_t)st->st_size;
}

/*
 * Whether a known object is still the file 'e' maps. Objects are found by
 * device and inode number, and once no process maps a file its inode
 * number may go to another (a program rebuilt, or copied over in place):
 * that one must not be unwound with the old file's table. One that is not
 * the same is never found again, and dropped once unused. When the file
 * cannot be looked at (the process is gone), the inode is trusted.
 */
static int obj_still_same(struct rec_obj *o, pid_t pid,
			  const struct uwprof_pm_entry *e)
{
	char path[PATH_MAX + 64], err[PATH_MAX + 256];
	struct stat st;
	int fd;

	if (!o->has_info)
		return 1;
	fd = uwprof_pm_object_open(pid, e, path, sizeof(path), &st, err,
				   sizeof(err));
	if (fd < 0)
		return 1;
	close(fd);
	if ((uint64_t)st.st_size == o->size &&
	    st.st_ctim.tv_sec == o->ctime.tv_sec &&
	    st.st_ctim.tv_nsec == o->ctime.tv_nsec)
		return 1;
	o->stale = 1;
	return 0;
}

/* A copy of an object already loaded (same build-id and path) shares its table. */
static struct rec_obj *obj_same_copy(struct recorder *r,
				     const struct uwprof_pm_entry *e,
				     const struct uwprof_elf_info *info,
				     const struct stat *st)
{
	struct rec_obj *o;
	size_t i;

	for (i = 0; i < r->nr_objs; i++) {
		o = &r->objs[i];
		if (o->has_info && !o->vdso && !o->stale &&
		    o->info.build_id_size == info->build_id_size &&
		    !memcmp(o->info.build_id, info->build_id,
			    info->build_id_size) &&
		    !strcmp(o->path, e->path)) {
			/* Found under the identity the maps show now. */
			o->dev_major = e->dev_major;
			o->dev_minor = e->dev_minor;
			o->inode = e->inode;
			obj_note_file(o, st);
			return o;
		}
	}
	return NULL;
}

/*
 * The file is opened once, checked to be the mapped inode (procmaps.h),
 * and everything read of it goes through that descriptor: a path swapped
 * for a FIFO, a device or another file gets the object no table, with one
 * line saying why, and nothing else happens.
 */
struct rec_obj *rec_obj_for_file(struct recorder *r, pid_t pid,
				 const struct uwprof_pm_entry *e)
{
	char open_path[PATH_MAX + 64], err[PATH_MAX + 256];
	struct uwprof_elf_info info;
	struct rec_obj *o;
	struct stat st;
	int fd, have;

	o = rec_obj_lookup(r, e);
	if (o && obj_still_same(o, pid, e))
		return o;
	fd = uwprof_pm_object_open(pid, e, open_path, sizeof(open_path), &st,
				   err, sizeof(err));
	have = fd >= 0 && !uwprof_elf_info_fd(fd, &info);
	if (have && info.build_id_size) {
		o = obj_same_copy(r, e, &info, &st);
		if (o) {
			close(fd);
			return o;
		}
	}
	o = obj_new(r);
	if (o)
		o->path = strdup(e->path);
	if (!o || !o->path) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	o->dev_major = e->dev_major;
	o->dev_minor = e->dev_minor;
	o->inode = e->inode;
	if (have) {
		o->info = info;
		o->has_info = 1;
		obj_note_file(o, &st);
		obj_table(r, o, open_path, fd, NULL, 0, st.st_uid);
	} else {
		if (!r->o.quiet) {
			if (fd < 0)
				fprintf(stderr,
					"uwprof record: %s; its frames use frame pointers\n",
					err);
			else
				fprintf(stderr,
					"uwprof record: %s: cannot read it; its frames use frame pointers\n",
					e->path);
		}
		o->no_table = 1;
	}
	if (fd >= 0)
		close(fd);
	obj_commit(r);
	obj_write(r, o, NULL, 0);
	return o;
}

/*
 * Every 64-bit process of one kernel maps the same vDSO, so it is read,
 * compiled and stored once.
 */
struct rec_obj *rec_obj_for_vdso(struct recorder *r, pid_t pid,
				 const struct uwprof_pm_entry *e)
{
	struct rec_obj *o;
	void *img = NULL;
	size_t size = (size_t)(e->end - e->start);
	char proc[32];
	struct stat ps;

	if (r->vdso)
		return r->vdso;
	/* Its owner's: a process may write to its own copy of the vDSO. */
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (stat(proc, &ps))
		return NULL;
	if (uwprof_pm_read_mem(pid, e->start, e->end, &img))
		return NULL;
	o = obj_new(r);
	if (!o) {
		free(img);
		return NULL;
	}
	o->path = strdup("[vdso]");
	if (!o->path) {
		free(img);
		return NULL;
	}
	o->vdso = 1;
	if (!uwprof_elf_info_mem(img, size, &o->info)) {
		o->has_info = 1;
		obj_table(r, o, "[vdso]", -1, img, size, ps.st_uid);
	} else {
		o->no_table = 1;
	}
	obj_commit(r);
	r->vdso = o;
	obj_write(r, o, img, size);
	if (r->no_file && !r->vdso_image) {
		/* The agent writes it again into every window it opens. */
		r->vdso_image = img;
		r->vdso_size = size;
		return o;
	}
	free(img);
	return o;
}

/* ----------------------------------------------------- command prewarm */

/* Resolves the command the way execvp() will. */
static int find_in_path(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *q;

	if (strchr(cmd, '/')) {
		snprintf(out, len, "%s", cmd);
		return access(out, X_OK);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p; p = *q ? q + 1 : q) {
		q = strchrnul(p, ':');
		snprintf(out, len, "%.*s/%s", (int)(q - p), p, cmd);
		if (!access(out, X_OK))
			return 0;
	}
	return -1;
}

static void prewarm_one(struct recorder *r, const char *path)
{
	struct uwprof_pm_entry e = { .kind = UWPROF_PM_FILE };
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) || !S_ISREG(st.st_mode))
		return;
	e.path = real;
	e.inode = st.st_ino;
	e.dev_major = major(st.st_dev);
	e.dev_minor = minor(st.st_dev);
	rec_obj_for_file(r, r->self, &e);
}

/*
 * Compiles and uploads the tables of the command's program, its loader,
 * the libraries the loader lists for it ('ld.so --list', which does not
 * run the program) and the vDSO before the command starts, so the process
 * never runs while its tables are being compiled.
 */
void rec_prewarm_cmd(struct recorder *r)
{
	char exe[PATH_MAX], interp[PATH_MAX], line[PATH_MAX + 128];
	struct uwprof_pm pm;
	int fds[2], status;
	size_t i;
	pid_t pid;
	FILE *f;

	if (!uwprof_pm_read(r->self, &pm)) {
		for (i = 0; i < pm.n; i++)
			if (pm.v[i].kind == UWPROF_PM_VDSO)
				rec_obj_for_vdso(r, r->self, &pm.v[i]);
		uwprof_pm_free(&pm);
	}
	if (find_in_path(r->o.cmd[0], exe, sizeof(exe)))
		return;
	prewarm_one(r, exe);
	if (uwprof_elf_interp(exe, interp, sizeof(interp)))
		return;
	prewarm_one(r, interp);
	if (pipe2(fds, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(fds[1], 1);
		if (null >= 0)
			dup2(null, 2);
		execl(interp, interp, "--list", exe, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "=> "), *end;

		p = p ? p + 3 : line + strspn(line, " \t");
		if (*p != '/')
			continue;
		end = strstr(p, " (");
		if (end)
			*end = 0;
		p[strcspn(p, "\n")] = 0;
		prewarm_one(r, p);
	}
	if (f)
		fclose(f);
	else
		close(fds[0]);
	waitpid(pid, &status, 0);
}


/*
 * Every object known so far into 'w' (an agent's new window), so that its
 * samples of objects uploaded before it opened can be symbolized.
 */
void rec_objs_replay(struct recorder *r, struct uwprof_pfw *w)
{
	size_t i;

	for (i = 0; i < r->nr_objs; i++) {
		const struct rec_obj *o = &r->objs[i];
		struct uwprof_pf_obj_fixed f;

		obj_fixed(r, o, &f);
		uwprof_pfw_object(w, &f, o->path, o->vdso ? r->vdso_image : NULL,
				  o->vdso ? r->vdso_size : 0);
	}
}

static int id_used(const uint64_t *used, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (used[mid] == id)
			return 1;
		if (used[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static void obj_release(struct recorder *r, struct rec_obj *o)
{
	int ret;

	if (!o->no_table) {
		ret = uwprof_dev_object_del(&r->dev, o->id);
		if (ret && ret != -ENOENT)
			fprintf(stderr, "%s: %s: dropping its table: %s\n",
				r->name, o->path, strerror(-ret));
	}
	rec_obj_tables_free(o);
	free(o->path);
	r->objects_dropped++;
}

void rec_objs_drop_unused(struct recorder *r, uint64_t now_ns,
			  const uint64_t *used, size_t nr_used)
{
	struct rec_obj *vdso = NULL;
	size_t i, n = 0;

	for (i = 0; i < r->nr_objs; i++) {
		struct rec_obj *o = &r->objs[i];

		if (o->vdso || id_used(used, nr_used, o->id))
			o->unused_ns = 0;
		else if (!o->unused_ns && !o->stale)
			o->unused_ns = now_ns;
		else if (o->stale || now_ns - o->unused_ns >= REC_OBJ_KEEP_NS) {
			obj_release(r, o);
			continue;
		}
		if (n != i)
			r->objs[n] = *o;
		if (r->objs[n].vdso)
			vdso = &r->objs[n];
		n++;
	}
	r->nr_objs = n;
	r->vdso = vdso;
}
