/* SPDX-License-Identifier: BSD-3-Clause */
#include "log.h"

/* The slow path's log type, in a file of its own: every slow-path file
 * logs, and none should depend on main.c for it. */
RTE_LOG_REGISTER(hg_logtype, hourglass, INFO);
