/* SPDX-License-Identifier: BSD-3-Clause
 *
 * How an idle fast-path core waits under --idle sleep (nap.c): blocked on
 * its RX queues' interrupts where the PMD hands out their fd (net_tap:
 * the tap queue's fd; port.c asks for them) and on a wake-up eventfd the
 * slow path writes after a command, with a timeout that grows with
 * idleness (10 us .. 1 ms): the apps' transmit rings ring no bell, so
 * the core still looks at them when the timeout ends. Without (net_
 * af_packet; net_memif, whose PMD keeps its queues' eventfds inside) it
 * waits for the wake-up or the timeout.
 */
#ifndef HG_FASTPATH_NAP_H
#define HG_FASTPATH_NAP_H

#include <stdint.h>

#include "dp.h"

/* Arms core c's naps once the port has started: an epoll set of its RX
 * queues' interrupt fds (those the PMD has) and its wake-up eventfd.
 * Returns the queues armed (0: it sleeps the timeout out). */
unsigned hg_nap_init(struct hg_dp *dp, struct hg_fp_core *c);
void hg_nap_fini(struct hg_fp_core *c);

/* Waits up to us microseconds, or until a datagram arrives on an armed
 * queue or the slow path rings the core; returns 1 if woken so. */
int hg_nap(struct hg_fp_core *c, unsigned us);

/* The slow path, after a command for core c: cut its nap short. */
void hg_nap_wake(struct hg_fp_core *c);

#endif /* HG_FASTPATH_NAP_H */
