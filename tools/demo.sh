#!/usr/bin/env bash
# make demo: a test network, the daemon with two tenants, an echo app for
# each, open-loop load at both from the namespace, and what each got.
set -euo pipefail
cd "$(dirname "$0")/.."
HG_BIN=${HG_BUILD:-build}/bin
. tools/netns.sh

pids=()
cleanup() {
	local i
	# apps first, the daemon last
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill "${pids[i]}" 2>/dev/null || true
		wait "${pids[i]}" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	hg_net_down
}
trap cleanup EXIT INT TERM

hg_net_up demo
hg_daemon_start demo sleep
pids+=("$HG_DAEMON_PID")
ctl() { "$HG_BIN/hgctl" --ctl "$HG_CTL" "$@"; }

# Default caps: a datagram through net_af_packet costs more than the
# configured 15,000 cycles, and the daemon raises each tenant's effective
# cap to two batches of its measured cost (tenant list: EFF.CAP).
ctl tenant add gold --weight 1 --ports 7000-7009
ctl tenant add bronze --weight 1 --ports 8000-8009
"$HG_BIN/hg-echo" --ctl "$HG_APP_CTL" --tenant gold --port 7000 --threads 1 >/tmp/hgdemo-gold.log &
pids+=($!)
"$HG_BIN/hg-echo" --ctl "$HG_APP_CTL" --tenant bronze --port 8000 --threads 1 >/tmp/hgdemo-bronze.log &
pids+=($!)
sleep 0.5
echo "== tenants"
ctl tenant list
echo
echo "== driving load for 4 s: gold 2000 rps x 4 flows, bronze 5000 rps x 32 flows (64 B)"
ip netns exec "$HG_NS" "$HG_BIN/hgload" --target "$HG_DAEMON_IP:7000" --rate 2000 \
	--duration 4 --flows 4 --size 64 >/tmp/hgdemo-gold.out &
g=$!
ip netns exec "$HG_NS" "$HG_BIN/hgload" --target "$HG_DAEMON_IP:8000" --rate 5000 \
	--duration 4 --flows 32 --size 64 >/tmp/hgdemo-bronze.out &
b=$!
wait $g $b
echo
echo "== gold got"
cat /tmp/hgdemo-gold.out
echo
echo "== bronze got"
cat /tmp/hgdemo-bronze.out
echo
echo "== hgctl stats"
ctl stats
