# Test network of design.md §10, sourced by the demo and the benchmarks:
# a namespace holding one end of a veth pair (198.18.0.2/24); the other end
# carries no address and is handed to hourglassd through net_af_packet.
# hg_net_up TAG sets HG_NS, HG_IF (daemon side), HG_PEER_IF; hg_net_down
# removes them. Traffic only ever goes to 198.18.0.1 inside this network.

HG_DAEMON_IP=198.18.0.1
HG_PEER_IP=198.18.0.2

hg_net_up() {
	HG_NS="hg$1"
	HG_IF="hg$1a"
	HG_PEER_IF="hg$1b"
	hg_net_down
	ip netns add "$HG_NS"
	ip link add "$HG_IF" type veth peer name "$HG_PEER_IF"
	ip link set "$HG_PEER_IF" netns "$HG_NS"
	ip link set "$HG_IF" up
	sysctl -qw "net.ipv6.conf.$HG_IF.disable_ipv6=1" || true
	ip -n "$HG_NS" addr add "$HG_PEER_IP/24" dev "$HG_PEER_IF"
	ip -n "$HG_NS" link set "$HG_PEER_IF" up
	ip -n "$HG_NS" link set lo up
	ip netns exec "$HG_NS" ethtool -K "$HG_PEER_IF" tx off tso off gso off >/dev/null
}

hg_net_down() {
	if [ -n "${HG_NS:-}" ]; then ip netns del "$HG_NS" 2>/dev/null || true; fi
	if [ -n "${HG_IF:-}" ]; then ip link del "$HG_IF" 2>/dev/null || true; fi
}

# hg_daemon_start TAG IDLE [ARGS...]: starts hourglassd on $HG_IF, waits for
# its control sockets; sets HG_DAEMON_PID, HG_CTL (operator) and HG_APP_CTL.
hg_daemon_start() {
	local tag=$1 idle=$2 i
	shift 2
	HG_CTL=/tmp/hg$tag.sock
	HG_APP_CTL=/tmp/hg$tag.app.sock
	"$HG_BIN/hourglassd" --no-huge -m 512 --no-pci --file-prefix "hg$tag" \
		-l 0-1 --vdev="net_af_packet0,iface=$HG_IF" -- \
		--ip "$HG_DAEMON_IP/24" --ctl "$HG_CTL" --app-ctl "$HG_APP_CTL" --idle "$idle" "$@" \
		>"/tmp/hg$tag.log" 2>&1 &
	HG_DAEMON_PID=$!
	for i in $(seq 200); do
		[ -S "$HG_CTL" ] && [ -S "$HG_APP_CTL" ] && return 0
		kill -0 "$HG_DAEMON_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "hourglassd did not start:" >&2
	cat "/tmp/hg$tag.log" >&2
	return 1
}
