// SPDX-License-Identifier: GPL-2.0
/*
 * Unload suite: the module cannot be removed while a session's file is
 * open or its rings are mapped (even after the fd was closed), and can be
 * removed right after a sampling process was killed. Each unload is
 * followed by a reload, so the module is left as it was found.
 *
 * The reload needs uwprof.ko: $UWPROF_KO, else the guest harness's build
 * directories next to this program's (../../<arch>-<series>/module-src).
 */
#include "uwprof_test.h"

#include <glob.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "uwprof_harness.h"

static int uwt_rmmod(void)
{
	return syscall(SYS_delete_module, "uwprof", O_NONBLOCK) ? -errno : 0;
}

static int uwt_insmod(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * A module image this kernel accepts: while uwprof is loaded, the kernel
 * checks an image completely and then answers EEXIST for it.
 */
static int find_ko(char *out, size_t len)
{
	const char *env = getenv("UWPROF_KO");
	glob_t g;
	size_t i;
	int ret = -ENOENT;

	if (env && uwt_insmod(env) == -EEXIST) {
		snprintf(out, len, "%s", env);
		return 0;
	}
	if (glob("../../*/module-src/uwprof.ko", 0, NULL, &g))
		return -ENOENT;
	for (i = 0; i < g.gl_pathc; i++) {
		if (uwt_insmod(g.gl_pathv[i]) == -EEXIST) {
			snprintf(out, len, "%s", g.gl_pathv[i]);
			ret = 0;
			break;
		}
	}
	globfree(&g);
	return ret;
}

static bool dev_present(void)
{
	int i;

	/* devtmpfs adds the node asynchronously. */
	for (i = 0; i < 300; i++) {
		if (!access(UWT_DEV, F_OK))
			return true;
		uwt_sleep_ms(10);
	}
	return false;
}

FIXTURE(unload) {
	char ko[PATH_MAX];
};

FIXTURE_SETUP(unload)
{
	if (access("/sys/module/uwprof", F_OK))
		SKIP(return, "uwprof.ko not loaded");
	if (getuid())
		SKIP(return, "needs root");
	if (find_ko(self->ko, sizeof(self->ko)))
		SKIP(return, "no loadable uwprof.ko found to reload (set UWPROF_KO)");
}

FIXTURE_TEARDOWN(unload)
{
	/* Leave the module loaded whatever happened. */
	if (access("/sys/module/uwprof", F_OK))
		uwt_insmod(self->ko);
}

/* Unload fails while in use; which errno is the kernel's choice. */
static bool busy(int err)
{
	return err == -EBUSY || err == -EAGAIN;
}

TEST_F(unload, refused_while_open)
{
	const char *why;
	int fd = uwt_open(&why);

	ASSERT_GE(fd, 0) TH_LOG("%s", why);
	EXPECT_TRUE(busy(uwt_rmmod()));
	close(fd);
	ASSERT_EQ(0, uwt_rmmod());
	EXPECT_EQ(0, uwt_insmod(self->ko));
	EXPECT_TRUE(dev_present());
}

TEST_F(unload, refused_while_mapped)
{
	uint32_t pid = getpid();
	struct uwt_rings r;
	const char *why;
	int fd = uwt_open(&why);

	ASSERT_GE(fd, 0) TH_LOG("%s", why);
	ASSERT_EQ(0, uwt_start(fd, UWPROF_START_CPU_CLOCK, 1000, 64, 0, &pid, 1));
	ASSERT_EQ(0, uwt_rings_map(fd, &r));
	/* Closing the fd does not end the session: the mapping holds it. */
	close(fd);
	EXPECT_TRUE(busy(uwt_rmmod()));
	EXPECT_EQ(UWPROF_RING_VERSION, uwt_ctl(&r, 0)->version);
	uwt_rings_unmap(&r);
	ASSERT_EQ(0, uwt_rmmod());
	EXPECT_EQ(0, uwt_insmod(self->ko));
	EXPECT_TRUE(dev_present());
}

/* A profiler killed mid-run: everything is released, unload works. */
TEST_F(unload, after_killed_sampler)
{
	int ready[2], status, i, ret = 0;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct uwt_rings r;
		const char *why;
		int fd = uwt_open(&why);
		volatile unsigned long x = 0;

		if (fd < 0 || uwt_start(fd, UWPROF_START_SYSTEM_WIDE, 2000, 128,
					0, NULL, 0) ||
		    uwt_rings_map(fd, &r))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			x++;
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	uwt_sleep_ms(300);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* The file's last reference may go a moment after the exit. */
	for (i = 0; i < 100; i++) {
		ret = uwt_rmmod();
		if (!busy(ret))
			break;
		uwt_sleep_ms(20);
	}
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, uwt_insmod(self->ko));
	EXPECT_TRUE(dev_present());
}

TEST_HARNESS_MAIN
