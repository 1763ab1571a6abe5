/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target: the --config file as `hgctl config reload` applies
 * it to a running registry. The input is two files separated by the
 * first 0xff byte: the first is applied, then the second (so the diff
 * of one against the other runs: tenants added, removed, changed). A
 * refusal always says why; whatever is accepted must leave the registry
 * consistent, and every input ends with every tenant deleted. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../slowpath/config.h"
#include "../../slowpath/config_reload.h"
#include "fuzz_env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct hg_registry reg;
static int fd = -1;
static char path[64];

static void
setup(void)
{
	if (fd >= 0)
		return;
	hg_registry_init(&reg, fuzz_env());
	if ((fd = memfd_create("hgfz.conf", 0)) < 0)
		__builtin_trap();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
}

/* Each tenant from the file holds its ports in the fast path's map. */
static void
check_ports(void)
{
	const struct hg_tenant_sp *t;
	uint32_t p;
	unsigned i;

	for (i = 0; i < HG_MAX_TENANTS; i++) {
		t = &reg.t[i];
		if (!t->used || t->releasing)
			continue;
		for (p = t->cfg.port_lo; t->cfg.port_hi && p <= t->cfg.port_hi; p++)
			if (HG_PORT_TENANT(reg.dp->port_map[p]) != (int)i)
				__builtin_trap();
	}
}

static void
apply(const uint8_t *d, size_t n)
{
	struct hg_reload_report rep = { 0 };
	char err[320] = "";

	if (ftruncate(fd, 0) < 0 || pwrite(fd, d, n, 0) != (ssize_t)n)
		__builtin_trap();
	if (hg_config_reload(&reg, &rep, err, sizeof(err)) < 0 && err[0] == '\0')
		__builtin_trap();
	hg_reload_report_free(&rep);
	check_ports();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *cut = memchr(data, 0xff, size);
	size_t first = cut ? (size_t)(cut - data) : size;

	setup();
	hg_config_defaults();
	snprintf(hg_cfg.config, sizeof(hg_cfg.config), "%s", path);
	apply(data, first);
	if (cut != NULL)
		apply(cut + 1, size - first - 1);
	fuzz_del_all(&reg);
	return 0;
}
