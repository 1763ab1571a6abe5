/* SPDX-License-Identifier: BSD-3-Clause
 *
 * libFuzzer target: the tenant settings table's parser. The input is
 * lines of KEY=VALUE applied to one tenant's settings (the first byte
 * says whether as an add or a set); whatever is accepted must pass or
 * fail the cross-field check cleanly and read back as itself. */
#include <stdint.h>
#include <string.h>

#include "../../slowpath/tenant_cfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
read_back(const struct hg_tenant_cfg *c)
{
	const struct hg_settings *tab = hg_tenant_settings();
	const struct hg_setting *t = tab->row;
	struct hg_tenant_cfg copy = *c;
	unsigned changed = 0;
	char v[96], err[160];
	size_t i;

	for (i = 0; i < tab->n; i++) {
		hg_setting_format(&t[i], c, v, sizeof(v));
		if (hg_tenant_cfg_set(&copy, t[i].name, v, 1, &changed, err,
				      sizeof(err)) != 0 || changed != 0)
			__builtin_trap();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hg_tenant_cfg c;
	char text[1024], err[160], *line, *save, *eq;
	unsigned changed = 0;
	int adding;

	if (size < 1 || size >= sizeof(text))
		return -1;
	adding = data[0] & 1;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	hg_tenant_cfg_defaults(&c, 15000);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		if ((eq = strchr(line, '=')) == NULL)
			continue;
		*eq = '\0';
		if (hg_tenant_cfg_set(&c, line, eq + 1, adding, &changed, err,
				      sizeof(err)) != 0 && err[0] == '\0')
			__builtin_trap();	/* a refusal always says why */
	}
	err[0] = '\0';
	if (hg_tenant_cfg_check(&c, err, sizeof(err)) != 0 && err[0] == '\0')
		__builtin_trap();
	read_back(&c);
	return 0;
}
