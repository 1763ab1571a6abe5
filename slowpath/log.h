/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HG_SLOWPATH_LOG_H
#define HG_SLOWPATH_LOG_H

#include <rte_log.h>

/* Registered as "hourglass": --log-level=hourglass*:debug works. */
extern int hg_logtype;

#define HG_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, hg_logtype, "hourglass: " fmt "\n", ##__VA_ARGS__)

/* From here on every log line carries its time (after EAL's start). */
void hg_log_stamped(void);

#endif /* HG_SLOWPATH_LOG_H */
