/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A tenant's shared-memory region: memfd creation, layout (proto/hg_shm.h),
 * ring initialisation, and the daemon-private ring geometry pages.
 */
#ifndef HG_SLOWPATH_REGION_H
#define HG_SLOWPATH_REGION_H

#include <stddef.h>

#include "../fastpath/dp.h"

struct hg_region {
	int fd;
	uint8_t *base;
	size_t size;
};

/* Creates the region of tenant slot and fills tn's layout copy, base and
 * ring pointers. Returns 0 or -errno with a reason in err; on failure r
 * holds nothing (fd -1) and nothing is left open or mapped. */
int hg_region_create(struct hg_region *r, struct hg_tenant *tn,
		     const char *name, uint32_t slot, uint32_t n_cores,
		     char *err, size_t errlen);
void hg_region_destroy(struct hg_region *r);

/* Resets every ring of a context before it is handed to an app. */
/* -EIO if the app's view of a geometry page could not be restored (the
 * app then only confuses itself). */
int hg_region_reset_ctx(const struct hg_region *r, struct hg_tenant *tn,
			 uint32_t ctx, uint32_t n_cores);
/* Re-initialises an app slot's block and wait queue for a new app. */
int hg_region_reset_app(struct hg_tenant *tn, uint32_t app);

#endif /* HG_SLOWPATH_REGION_H */
