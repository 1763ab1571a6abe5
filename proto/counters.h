/* SPDX-License-Identifier: BSD-3-Clause
 *
 * The daemon's counters, defined once. Each row names the field that
 * counts (in its scope's record), the name stats, JSON and telemetry give
 * it, its unit, and what it counts:
 *
 *   X(field, name, unit, help)
 *
 * The daemon (slowpath/stats.c) reads every row of a table into its
 * stats reply as (name, value) pairs, and into telemetry; hgctl prints
 * whatever pairs come, in JSON under their names and as text with the
 * unit from here. Adding a counter takes the line that counts it and a
 * row here; a field a row names must be a uint64_t (stats.c asserts it).
 * Drop reasons have a table of their own (fastpath/drops.h).
 *
 * Values are totals since the daemon started, unless the unit says "now".
 */
#ifndef HG_PROTO_COUNTERS_H
#define HG_PROTO_COUNTERS_H

/* Scope core: struct hg_fp_core, one per fast-path core, written by it. */
#define HG_CORE_COUNTERS(X) \
	X(rx_pkts, rx_packets, "frames", "frames the core received") \
	X(tx_pkts, tx_packets, "frames", "frames the core sent") \
	X(busy_passes, busy_passes, "passes", "passes that did work") \
	X(idle_passes, idle_passes, "passes", "passes that found nothing to do") \
	X(busy_cycles, busy_cycles, "cycles", "TSC of the passes that did work, " \
	  "billed or not") \
	X(busy_pmd_cycles, busy_pmd_cycles, "cycles", "the part of busy_cycles " \
	  "inside the PMD's burst calls") \
	X(unattributed, unattributed_cycles, "cycles", "no tenant's: empty " \
	  "polls, ARP, ICMP, datagrams for no tenant") \
	X(preempted, preempted_cycles, "cycles", "the part of unattributed_cycles " \
	  "that was the OS's, which refills no budget: charges cut to their " \
	  "bound") \
	X(left_cpu, left_cpu, "times", "the core's thread was taken off its " \
	  "CPU, as rseq showed it (naps not counted)") \
	X(stolen, stolen_cycles, "cycles", "the core's thread waited on its " \
	  "CPU's run queue (schedstat): another thread had its CPU") \
	X(flushes, flushes, "calls", "PMD sends: one per pass that had frames") \
	X(sched_yields, sched_yields, "batches", "SCHED batches nobody waited " \
	  "behind, cut short when another tenant's work arrived") \
	X(cut_passes, cut_passes, "passes", "SCHED batches cut short whose " \
	  "work (the other tenants' own queues, transmit rings and batches) " \
	  "was then served before the pass's send") \
	X(rx_cuts, rx_cuts, "bursts", "RX bursts of a tenant's own queue " \
	  "cut short when another tenant's work arrived") \
	X(rx_holds, rx_holds, "bursts", "RX bursts of a tenant's own queue " \
	  "stopped at its first frame over budget, the rest left in the link") \
	X(naps, naps, "naps", "waits of an idle core (--idle sleep)") \
	X(nap_wakes, nap_wakes, "wakes", "naps cut short by an RX interrupt or " \
	  "a command") \
	X(xdp_marks, xdp_marks, "marks", "tenants marked shed in the XDP " \
	  "program of a net_af_xdp link") \
	X(slack_held, slack_held, "passes", "SCHED passes that served no " \
	  "unfunded tenant while a shared RX queue backed up")

/* Scope tenant: struct hg_fp_tenant, per tenant and core, written by that
 * core; stats give each core's and the sum. */
#define HG_TENANT_COUNTERS(X) \
	X(doorbells, doorbells, "wakes", "armed workers woken (a system call, " \
	  "billed at RX)") \
	X(doorbell_cycles, doorbell_cycles, "cycles", "what the wakes cost, " \
	  "part of RX's cycles") \
	X(drop_cycles, over_budget_drop_cycles, "cycles", "RX's cycles spent on " \
	  "rx_over_budget drops") \
	X(drain_cycles, drain_cycles, "cycles", "RX's cycles spent on its " \
	  "datagrams dropped while a shared queue backed up: the drain's, " \
	  "billed to no budget") \
	X(credit_updates, credit_updates, "messages", "explicit credit updates " \
	  "sent to RPC sessions") \
	X(credits_granted, credits_granted, "credits", "credits sent to RPC " \
	  "sessions, in responses and updates") \
	X(sessions_trimmed, sessions_trimmed, "sessions", "RPC sessions evicted " \
	  "past a lowered max-sessions") \
	X(budget_answers, budget_answer_cuts, "answers", "RPC answers that " \
	  "granted no credit and took one back: the tenant below its " \
	  "budget-mark on a saturated core")

/* Scope control: struct hg_ctl_counters, the control sockets, written by
 * the slow path. */
#define HG_CONTROL_COUNTERS(X) \
	X(conns[0], ctl_conns, "connections now", "operator connections open") \
	X(conns[1], app_conns, "connections now", "app connections open") \
	X(conns_refused, conns_refused, "connections", "refused over " \
	  "max-ctl-conns or max-app-conns, or a guest over app-conns-reserve") \
	X(uid_refused, uid_refused, "connections", "refused over " \
	  "max-app-conns-per-uid or max-app-conns-per-guest") \
	X(accept_errors, accept_errors, "errors", "accepts that failed, e.g. " \
	  "out of descriptors") \
	X(attach_refused, attach_refused, "attaches", "refused: not the " \
	  "tenant's owner") \
	X(commands_refused, commands_refused, "commands", "operator commands " \
	  "sent on the app socket") \
	X(reads_paused, reads_paused, "pauses", "a client fell max-conn-out " \
	  "behind, or all held max-conns-buffered") \
	X(idle_closed, idle_closed, "connections", "closed for not attaching " \
	  "within attach-timeout-ms") \
	X(buffered, buffered_bytes, "bytes now", "request and reply bytes held " \
	  "for all connections") \
	X(buffered_peak, buffered_peak, "bytes", "the most buffered_bytes was")

/* A counter as hgctl knows it: its name, unit and what it counts. */
struct hg_counter_doc {
	const char *name, *unit, *help;
};

#define HG_COUNTER_DOC(field, name, unit, help) { #name, unit, help },

#endif /* HG_PROTO_COUNTERS_H */
