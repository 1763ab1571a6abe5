/* SPDX-License-Identifier: BSD-3-Clause */
#include "drops.h"

/* Names of the drop counters as hgctl and telemetry show them. */
#define HG_NAME_ENTRY(name, str) str,
const char *const hg_core_drop_names[HG_DROP_N] = { HG_CORE_DROPS(HG_NAME_ENTRY) };
const char *const hg_tenant_drop_names[HG_TDROP_N] = { HG_TENANT_DROPS(HG_NAME_ENTRY) };
#undef HG_NAME_ENTRY
