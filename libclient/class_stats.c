/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Request classes: a request's class, and what a worker
 * measured of each class (proto/hg_shm.h, struct hg_class_shm), written
 * to the region where the daemon reads them for `hgctl stats`.
 */
#include <rte_cycles.h>

#include "client.h"
#include "hg_rpc.h"

uint32_t
hg_classify(const hg_app_t *app, const struct hg_msg *m)
{
	struct hg_rpc_req r;
	int (*fn)(const void *, size_t);
	int c;

	if (hg_rpc_parse(m, &r) == 0)
		return r.type % HG_CLASSES_SHM;
	fn = __atomic_load_n(&app->classifier, __ATOMIC_ACQUIRE);
	if (fn == NULL)
		return 0;
	c = fn(m->data, m->len);
	return c >= 0 ? (uint32_t)c % HG_CLASSES_SHM : 0;
}

void
hg_class_record(hg_ctx_t *w, uint32_t cls, uint64_t queue_tsc,
		uint64_t service_tsc)
{
	struct hg_class_shm *c = &w->classes->c[cls % HG_CLASSES_SHM];
	uint64_t svc = service_tsc ? service_tsc : 1;

	/* one writer per context: plain stores, the daemon reads them */
	c->requests++;
	c->service_tsc += service_tsc;
	c->queue_tsc += queue_tsc;
	c->service_hist[hg_hist_bin(service_tsc, HG_HIST_SVC_BASE)]++;
	c->slowdown_hist[hg_hist_bin((queue_tsc + svc) * 16 / svc,
				     HG_HIST_SLOW_BASE)]++;
}
