/* SPDX-License-Identifier: BSD-3-Clause */
#include "budget.h"

uint64_t
hg_budget_refill(uint64_t granted, uint64_t consumed, uint64_t elapsed,
		 double boost, double weight, double weight_sum, uint64_t cap)
{
	int64_t b = (int64_t)(granted - consumed);
	double e = weight_sum > 0 ? boost * (double)elapsed * weight / weight_sum : 0;
	int64_t room = (int64_t)cap - b;	/* < 0 after a cap was lowered */
	int64_t add = e < (double)room ? (int64_t)e : room;

	return granted + (uint64_t)add;
}
