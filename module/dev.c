// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/uwprof misc device: open/release and ioctl dispatch.
 * Process context only.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <linux/cpumask.h>
#include <linux/uwprof.h>

#include "compat.h"
#include "internal.h"

static int uwprof_open(struct inode *inode, struct file *file)
{
	if (!perfmon_capable())
		return -EPERM;
	return 0;
}

static int uwprof_release(struct inode *inode, struct file *file)
{
	return 0;
}

static long uwprof_ioc_version(void __user *arg)
{
	struct uwprof_version v;
	u32 usize;
	int ret;

	if (get_user(usize, (u32 __user *)arg))
		return -EFAULT;
	if (usize < offsetofend(struct uwprof_version, size))
		return -EINVAL;
	ret = copy_struct_from_user(&v, sizeof(v), arg, usize);
	if (ret)
		return ret;
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.abi_version = UWPROF_ABI_VERSION;
	v.table_version = UWPROF_TABLE_VERSION;
	v.arch = IS_ENABLED(CONFIG_ARM64) ? UWPROF_ARCH_ARM64 : UWPROF_ARCH_X86_64;
	v.nr_cpus = nr_cpu_ids;
	if (copy_to_user(arg, &v, min_t(size_t, usize, sizeof(v))))
		return -EFAULT;
	return 0;
}

static long uwprof_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case UWPROF_IOC_VERSION:
		return uwprof_ioc_version(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations uwprof_fops = {
	.owner		= THIS_MODULE,
	.open		= uwprof_open,
	.release	= uwprof_release,
	.unlocked_ioctl	= uwprof_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice uwprof_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "uwprof",
	.fops	= &uwprof_fops,
	.mode	= 0600,
};

int uwprof_dev_init(void)
{
	return misc_register(&uwprof_misc);
}

void uwprof_dev_exit(void)
{
	misc_deregister(&uwprof_misc);
}
