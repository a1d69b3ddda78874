// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's consecutive windows written to a directory
 * (tool/agent_output.c, tool/agent_files.c) on the host, with a fake
 * window source: each window's "profile" is a text naming its span,
 * padded to a chosen size, handed over when the window's end has passed,
 * as the recorder's windows are. Checked: the spans follow each other
 * without a gap, the files are named so that they sort by time, at most
 * --keep-files files and --keep-bytes bytes remain, other files in the
 * directory are left alone, a temporary file left by a killed agent is
 * removed, and failures (the directory removed, a file size limit, a
 * profile larger than the byte budget) are said once per kind, counted,
 * and the writes resume when the cause is gone. A reload (SIGHUP's new
 * settings) while a window is in progress: that window is not cut and
 * goes where the new settings say, the next has the new interval.
 *
 *   agent-out-test SCRATCH-DIR
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "capture.h"
#include "tap.h"

/* ------------------------------------------------------- the fake source */

struct fake_win {
	uint64_t	start, end;
};

struct fake_src {
	pthread_mutex_t	lock;
	pthread_cond_t	cond;
	int		stopping;
	size_t		size;		/* bytes of each profile */
	uint64_t	spans[64][2];	/* as asked, in order */
	size_t		nr_spans;
	uint64_t	got[64][2];	/* as handed out, in order */
	size_t		nr_got;
};

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int fake_queue(void *ctx, uint64_t start, uint64_t end, void **h)
{
	struct fake_src *s = ctx;
	struct fake_win *w;

	pthread_mutex_lock(&s->lock);
	if (s->stopping) {
		pthread_mutex_unlock(&s->lock);
		return -ESHUTDOWN;
	}
	if (s->nr_spans < 64) {
		s->spans[s->nr_spans][0] = start;
		s->spans[s->nr_spans][1] = end;
		s->nr_spans++;
	}
	pthread_mutex_unlock(&s->lock);
	w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->start = start;
	w->end = end;
	*h = w;
	return 0;
}

/* Until the window's end (or the stop, which ends it early). */
static int fake_wait(void *ctx, void *h, uint8_t **buf, size_t *len,
		     uint64_t span[2], char *msg, size_t msglen)
{
	struct fake_src *s = ctx;
	struct fake_win *w = h;
	char *p;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping && mono() < w->end) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
	if (s->stopping && mono() < w->start) {
		pthread_mutex_unlock(&s->lock);
		free(w);
		snprintf(msg, msglen, "stopping");
		return 503;
	}
	span[0] = w->start;
	span[1] = s->stopping && mono() < w->end ? mono() : w->end;
	if (s->nr_got < 64) {
		s->got[s->nr_got][0] = span[0];
		s->got[s->nr_got][1] = span[1];
		s->nr_got++;
	}
	pthread_mutex_unlock(&s->lock);
	free(w);
	p = malloc(s->size);
	if (!p)
		return 500;
	memset(p, '.', s->size);
	snprintf(p, s->size, "span %llu %llu",
		 (unsigned long long)span[0], (unsigned long long)span[1]);
	*buf = (uint8_t *)p;
	*len = s->size;
	return 200;
}

/* As the recorder's windows: a new end for a window not handed out yet. */
static void fake_retime(void *ctx, void *h, uint64_t end)
{
	struct fake_src *s = ctx;
	struct fake_win *w = h;

	pthread_mutex_lock(&s->lock);
	w->end = end;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void fake_stop(struct fake_src *s)
{
	pthread_mutex_lock(&s->lock);
	s->stopping = 1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* ----------------------------------------------------------- helpers */

struct listing {
	char	names[64][64];
	size_t	n;
	size_t	others;		/* files not named as ours */
	uint64_t bytes;
};

static void list_dir(const char *dir, struct listing *l)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	memset(l, 0, sizeof(*l));
	while (d && (de = readdir(d))) {
		struct stat st;
		char p[512];

		if (de->d_name[0] == '.' && (!de->d_name[1] ||
					     !strcmp(de->d_name, "..")))
			continue;
		if (strncmp(de->d_name, "uwprof-", 7)) {
			l->others++;
			continue;
		}
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (!stat(p, &st))
			l->bytes += (uint64_t)st.st_size;
		if (l->n < 64 && strlen(de->d_name) < 64)
			memcpy(l->names[l->n++], de->d_name, strlen(de->d_name) + 1);
	}
	if (d)
		closedir(d);
	qsort(l->names, l->n, 64, (int (*)(const void *, const void *))strcmp);
}

/* The span written into a file: its start, or 0. */
static uint64_t file_start(const char *dir, const char *name)
{
	unsigned long long a = 0, b = 0;
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	if (!f)
		return 0;
	if (fscanf(f, "span %llu %llu", &a, &b) != 2)
		a = 0;
	fclose(f);
	return a;
}

static struct agent_out_opts opts(const char *dir, unsigned int interval,
				  uint64_t files, uint64_t bytes)
{
	struct agent_out_opts o = {
		.dir = dir, .interval_s = interval, .keep_files = files,
		.keep_bytes = bytes, .freq = 19,
	};

	return o;
}

static void run_for(struct agent_out *out, struct fake_src *s, double secs)
{
	usleep((useconds_t)(secs * 1e6));
	fake_stop(s);
	agent_out_stop(out);
}

static void fake_init(struct fake_src *s, size_t size)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->size = size;
}

/* ------------------------------------------------------------- checks */

/* 1 s windows, at most 3 files: rotation, names, spans, retention. */
static void check_rotation(const char *top)
{
	struct agent_out_opts o;
	struct agent_out_counts c;
	struct agent_out out;
	struct fake_src s;
	struct listing l;
	char dir[256], err[256], p[512];
	size_t i;
	int ok_spans = 1, sorted = 1, fd;

	snprintf(dir, sizeof(dir), "%s/rot", top);
	mkdir(dir, 0755);
	snprintf(p, sizeof(p), "%s/notes.txt", dir);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	close(fd);
	/* A killed agent's temporary file. */
	snprintf(p, sizeof(p), "%s/.uwprof-20240101T000000Z.pb.gz.AbC123", dir);
	fd = open(p, O_CREAT | O_WRONLY, 0600);
	close(fd);
	fake_init(&s, 100);
	o = opts(dir, 1, 3, 1 << 20);
	ok(!agent_out_start(&out, &o, &(struct agent_period_src){
			fake_queue, fake_wait, &s, fake_retime, NULL }, err, sizeof(err)),
	   "rotation: starts on %s", dir);
	ok(access(p, F_OK) && errno == ENOENT,
	   "a temporary file an earlier agent left is removed at start");
	run_for(&out, &s, 5.5);
	agent_out_counts(&out, &c);
	for (i = 1; i < s.nr_spans; i++)
		ok_spans &= s.spans[i][0] == s.spans[i - 1][1] &&
			    s.spans[i][1] - s.spans[i][0] == 1000000000ULL;
	ok(s.nr_spans >= 5 && ok_spans,
	   "%zu windows asked for, each 1 s, each starting where the last ended",
	   s.nr_spans);
	list_dir(dir, &l);
	ok(c.files_written >= 5 && l.n == 3 && c.files_removed == c.files_written - 3,
	   "--keep-files 3: %llu written, %llu removed, %zu left",
	   (unsigned long long)c.files_written,
	   (unsigned long long)c.files_removed, l.n);
	for (i = 1; i < l.n; i++)
		sorted &= file_start(dir, l.names[i - 1]) <
			  file_start(dir, l.names[i]);
	ok(l.n && sorted && strlen(l.names[0]) == strlen("uwprof-20240101T000000Z.pb.gz"),
	   "names sort as the windows' starts do (%s .. %s)", l.names[0],
	   l.n ? l.names[l.n - 1] : "");
	ok(l.others == 1, "the directory's other file is left alone");
	ok(c.windows == c.files_written && !c.file_errors && !c.windows_failed,
	   "every window written, no error counted");
}

/* At most --keep-bytes; a profile larger than it alone is refused. */
static void check_bytes(const char *top, struct capture *log)
{
	struct agent_out_opts o;
	struct agent_out_counts c;
	struct agent_out out;
	struct fake_src s;
	struct listing l;
	char dir[256], err[256];

	snprintf(dir, sizeof(dir), "%s/bytes", top);
	fake_init(&s, 1000);
	o = opts(dir, 1, 100, 2500);
	ok(!agent_out_start(&out, &o, &(struct agent_period_src){
			fake_queue, fake_wait, &s, fake_retime, NULL }, err, sizeof(err)),
	   "bytes: starts, creating %s", dir);
	run_for(&out, &s, 4.5);
	agent_out_counts(&out, &c);
	list_dir(dir, &l);
	ok(c.files_written >= 4 && l.n == 2 && l.bytes <= 2500,
	   "--keep-bytes 2500 with 1000-byte profiles: %zu files, %llu bytes left of %llu written",
	   l.n, (unsigned long long)l.bytes, (unsigned long long)c.files_written);

	fake_init(&s, 3000);
	ok(!agent_out_start(&out, &o, &(struct agent_period_src){
			fake_queue, fake_wait, &s, fake_retime, NULL }, err, sizeof(err)),
	   "bytes: starts again");
	run_for(&out, &s, 2.5);
	agent_out_counts(&out, &c);
	list_dir(dir, &l);
	ok(!c.files_written && c.file_errors >= 2 && l.n == 2 &&
	   capture_said(log, "exceeds --keep-bytes") == 1,
	   "a 3000-byte profile over --keep-bytes 2500: not written, %llu errors, said once",
	   (unsigned long long)c.file_errors);
}

/* The directory removed, then back; a file size limit. */
static void check_failures(const char *top, struct capture *log)
{
	struct agent_out_opts o;
	struct agent_out_counts c;
	struct agent_out out;
	struct fake_src s;
	struct listing l;
	struct rlimit old, lim;
	char dir[256], err[256];

	snprintf(dir, sizeof(dir), "%s/gone", top);
	fake_init(&s, 100);
	o = opts(dir, 1, 100, 1 << 20);
	ok(!agent_out_start(&out, &o, &(struct agent_period_src){
			fake_queue, fake_wait, &s, fake_retime, NULL }, err, sizeof(err)),
	   "failures: starts on %s", dir);
	usleep(1500000);
	list_dir(dir, &l);
	for (size_t i = 0; i < l.n; i++) {
		char p[512];

		snprintf(p, sizeof(p), "%s/%s", dir, l.names[i]);
		unlink(p);
	}
	rmdir(dir);
	usleep(3000000);
	agent_out_counts(&out, &c);
	ok(c.file_errors >= 2 && capture_said(log, "No such file or directory") == 1,
	   "directory removed: %llu failed writes, said once",
	   (unsigned long long)c.file_errors);
	mkdir(dir, 0700);
	usleep(2000000);
	list_dir(dir, &l);
	ok(l.n >= 1 && capture_said(log, "writing profiles again") == 1,
	   "directory back: writing resumes (%zu files), said once", l.n);

	/* A file size limit: each write fails with EFBIG. */
	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_cur = 50;
	lim.rlim_max = old.rlim_max;
	fflush(stdout);		/* TAP output to a file must not meet the limit */
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &lim);
	usleep(3000000);
	setrlimit(RLIMIT_FSIZE, &old);
	run_for(&out, &s, 2.0);
	ok(capture_said(log, "File too large") == 1,
	   "writes over a file size limit fail (EFBIG), said once");
	ok(capture_said(log, "writing profiles again") == 2,
	   "and resume once the limit is gone");
	ok(out.windows == out.files.written + out.files.errors,
	   "every window either written or counted as an error");
}

static void check_bad_dir(const char *top)
{
	struct agent_out_opts o;
	struct agent_out out;
	struct fake_src s;
	char dir[256], err[256];
	int fd;

	fake_init(&s, 10);
	snprintf(dir, sizeof(dir), "%s/a-file", top);
	fd = open(dir, O_CREAT | O_WRONLY, 0644);
	close(fd);
	o = opts(dir, 1, 3, 1000);
	ok(agent_out_start(&out, &o, &(struct agent_period_src){
			fake_queue, fake_wait, &s, fake_retime, NULL }, err,
			sizeof(err)) == -ENOTDIR &&
	   out.files_failed && strstr(err, dir),
	   "a file given as the directory is refused: %s", err);
	snprintf(dir, sizeof(dir), "%s/no/such/parent", top);
	o.dir = dir;
	ok(agent_out_start(&out, &o, &(struct agent_period_src){
			fake_queue, fake_wait, &s, fake_retime, NULL }, err,
			sizeof(err)) == -ENOENT &&
	   out.files_failed, "a directory whose parent is missing is refused: %s",
	   err);
}

/*
 * A reload (agent_out_reload()) while a window is in progress: that window
 * keeps its span and goes to the new directory, the next one has the new
 * interval and follows it without a gap, the counts carry on; a reload
 * whose directory cannot be used is said and changes nothing.
 */
static void check_reload(const char *top, struct capture *log)
{
	struct agent_out_opts o;
	struct agent_out_counts c;
	struct agent_out out;
	struct fake_src s;
	struct listing la, lb;
	char da[256], db[256], bad[300], err[256];
	const uint64_t sec = 1000000000ULL;
	uint64_t t0;
	size_t i;
	int gapless = 1, fd;

	snprintf(da, sizeof(da), "%s/reload-a", top);
	snprintf(db, sizeof(db), "%s/reload-b", top);
	/* A directory under a regular file: never usable. */
	snprintf(bad, sizeof(bad), "%s/reload-file", top);
	fd = open(bad, O_CREAT | O_WRONLY, 0644);
	close(fd);
	strcat(bad, "/dir");
	fake_init(&s, 100);
	o = opts(da, 1, 100, 1 << 20);
	t0 = mono();
	ok(!agent_out_start(&out, &o, &(struct agent_period_src){
			fake_queue, fake_wait, &s, fake_retime, NULL }, err, sizeof(err)),
	   "reload: starts on %s, 1 s windows", da);
	/* In the second window: [1, 2) s. */
	usleep((useconds_t)((t0 + 1300000000ULL - mono()) / 1000));
	o = opts(db, 2, 100, 1 << 20);
	ok(!agent_out_reload(&out, &o), "reload to %s, 2 s windows", db);
	/* In the third window, [2, 4) s: a directory that cannot be used. */
	usleep((useconds_t)((t0 + 2500000000ULL - mono()) / 1000));
	o = opts(bad, 1, 100, 1 << 20);
	ok(!agent_out_reload(&out, &o), "reload to %s", bad);
	usleep((useconds_t)((t0 + 4600000000ULL - mono()) / 1000));
	fake_stop(&s);
	agent_out_stop(&out);
	agent_out_counts(&out, &c);
	list_dir(da, &la);
	list_dir(db, &lb);
	for (i = 1; i < s.nr_got; i++)
		gapless &= s.got[i][0] == s.got[i - 1][1];
	ok(s.nr_got == 4 && gapless &&
	   s.got[0][1] - s.got[0][0] == sec && s.got[1][1] - s.got[1][0] == sec &&
	   s.got[2][1] - s.got[2][0] == 2 * sec,
	   "windows 1 s, 1 s (in progress at the reload: not cut), 2 s (retimed), then the stop's; no gap (%zu)",
	   s.nr_got);
	ok(la.n == 1 && file_start(da, la.names[0]) == s.got[0][0],
	   "the first directory has the window ended before the reload (%zu files)",
	   la.n);
	ok(lb.n == 3 && file_start(db, lb.names[0]) == s.got[1][0] &&
	   file_start(db, lb.names[1]) == s.got[2][0],
	   "the second has the window in progress at the reload and the later ones (%zu files)",
	   lb.n);
	ok(capture_said(log, "reload: --output-dir") == 1 &&
	   capture_said(log, "the profiles go where they went") == 1,
	   "a reload to an unusable directory is said once, the profiles go on");
	ok(c.files_written == 4 && c.windows == 4 && !c.file_errors,
	   "the counts carry on across directories: %llu written",
	   (unsigned long long)c.files_written);
}

int main(int argc, char **argv)
{
	static struct capture log = { .lock = PTHREAD_MUTEX_INITIALIZER };

	if (argc != 2) {
		fprintf(stderr, "usage: agent-out-test SCRATCH-DIR\n");
		return 2;
	}
	check_bad_dir(argv[1]);
	check_rotation(argv[1]);
	/* The agent's messages, captured to count them (and shown as "# "). */
	if (capture_start(&log)) {
		perror("capturing stderr");
		return 1;
	}
	check_bytes(argv[1], &log);
	check_failures(argv[1], &log);
	check_reload(argv[1], &log);
	capture_finish(&log);
	return tap_done();
}
