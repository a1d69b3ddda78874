// SPDX-License-Identifier: GPL-2.0
/*
 * The push of 'uwprof agent --push' in a build without libcurl: the
 * option is refused when the command line is read (agent_push_available),
 * so nothing below is reached with a URL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

int agent_push_available(void)
{
	return 0;
}

int agent_push_url_check(const char *url, int form, char *err, size_t errlen)
{
	(void)url;
	(void)form;
	snprintf(err, errlen,
		 "--push: this uwprof was built without libcurl (install libcurl4-openssl-dev and rebuild)");
	return -EOPNOTSUPP;
}

int agent_push_start(struct agent_push *p, const struct agent_out_opts *o,
		     int form, char *err, size_t errlen)
{
	(void)o;
	(void)form;
	memset(p, 0, sizeof(*p));
	snprintf(err, errlen,
		 "--push: this uwprof was built without libcurl (install libcurl4-openssl-dev and rebuild)");
	return -EOPNOTSUPP;
}

void agent_push_enqueue(struct agent_push *p, uint8_t *buf, size_t len,
			uint64_t from_real_ns, uint64_t until_real_ns)
{
	(void)p;
	(void)len;
	(void)from_real_ns;
	(void)until_real_ns;
	free(buf);
}

void agent_push_stop(struct agent_push *p)
{
	(void)p;
}
