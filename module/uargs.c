// SPDX-License-Identifier: GPL-2.0
/*
 * Copying ioctl structs in and out of user space by the rules of the
 * uapi header: every struct starts with its __u32 size, so older and newer
 * callers work with this module. Used by the ioctl handlers of dev.c,
 * store.c and sample.c. Process context only.
 */
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "internal.h"

/*
 * The caller's struct size, checked: for output-only structs it says how
 * much the caller can take.
 * Return: the number of bytes to copy out, or a negative errno.
 */
long uwprof_dev_out_size(void __user *arg, size_t min)
{
	u32 usize;

	if (get_user(usize, (u32 __user *)arg))
		return -EFAULT;
	if (usize < min)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return usize;
}

/*
 * Reads an extensible ioctl struct whose first field is the __u32 size:
 * smaller than 'min' (the struct's first ABI version) is invalid, larger
 * is accepted when the extra bytes are zero (copy_struct_from_user).
 */
int uwprof_dev_copy_args(void *dst, size_t ksize, size_t min, void __user *arg)
{
	long usize = uwprof_dev_out_size(arg, min);

	if (usize < 0)
		return usize;
	return copy_struct_from_user(dst, ksize, arg, usize);
}

/*
 * Copies 'src' out up to the caller's 'usize' from uwprof_dev_out_size();
 * a newer caller's fields this module does not know read as zero.
 */
int uwprof_dev_put(void __user *arg, const void *src, size_t ksize, long usize)
{
	if (copy_to_user(arg, src, min_t(size_t, ksize, usize)))
		return -EFAULT;
	if (usize > ksize && clear_user(arg + ksize, usize - ksize))
		return -EFAULT;
	return 0;
}
