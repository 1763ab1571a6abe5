/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HG_SLOWPATH_LOG_H
#define HG_SLOWPATH_LOG_H

#include <rte_log.h>

/* Registered as "hourglass": --log-level=hourglass*:debug works. */
extern int hg_logtype;

#define HG_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, hg_logtype, "hourglass: " fmt "\n", ##__VA_ARGS__)

#endif /* HG_SLOWPATH_LOG_H */
