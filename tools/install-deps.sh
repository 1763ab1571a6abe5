#!/usr/bin/env bash
# Installs what Hourglass needs on Debian 12, only if something is missing.
# Called by `make test`, `make demo` and `make bench`; safe to run again.
set -euo pipefail

PKGS=(build-essential pkg-config libdpdk-dev dpdk dpdk-dev libevent-dev
      libprotobuf-c-dev protobuf-c-compiler libcriterion-dev libjansson-dev
      iproute2 ethtool iputils-ping procps clang libclang-rt-14-dev libleveldb-dev
      libbpf-dev strace)

updated=
apt_install() {
	export DEBIAN_FRONTEND=noninteractive
	[ -n "$updated" ] || apt-get update -qq
	updated=1
	apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing ${missing[*]}; run as root" >&2
		exit 1
	fi
	echo "install-deps: installing ${missing[*]}"
	apt_install "${missing[@]}"
fi

# pytest (the integration tests) and matplotlib (the benches' plots):
# Debian's packages for Debian's interpreter; pip only for an interpreter
# of the user's own (pyenv, a venv), which Debian's packages do not reach.
PY=${PYTHON:-python3}
pymissing=()
$PY -c 'import pytest' 2>/dev/null || pymissing+=(pytest)
$PY -c 'import matplotlib' 2>/dev/null || pymissing+=(matplotlib)
if [ ${#pymissing[@]} -gt 0 ]; then
	case "$(readlink -f "$(command -v "$PY")")" in
	/usr/bin/python3*)
		debs=("${pymissing[@]/#/python3-}")
		if [ "$(id -u)" -ne 0 ]; then
			echo "install-deps: missing ${debs[*]}; run as root" >&2
			exit 1
		fi
		echo "install-deps: installing ${debs[*]}"
		apt_install "${debs[@]}" ;;
	*)
		echo "install-deps: pip installing ${pymissing[*]} for $PY"
		$PY -m pip install -q "${pymissing[@]}" ;;
	esac
fi
exit 0
