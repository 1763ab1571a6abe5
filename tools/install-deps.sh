#!/usr/bin/env bash
# Installs what Hourglass needs on Debian 12, only if something is missing.
# Called by `make test`, `make demo` and `make bench`; safe to run again.
set -euo pipefail

PKGS=(build-essential pkg-config libdpdk-dev dpdk dpdk-dev libevent-dev
      libprotobuf-c-dev protobuf-c-compiler libcriterion-dev libjansson-dev
      iproute2 ethtool iputils-ping procps clang libclang-rt-14-dev libleveldb-dev)

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
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
pymissing=()
$PY -c 'import pytest' 2>/dev/null || pymissing+=(pytest)
$PY -c 'import matplotlib' 2>/dev/null || pymissing+=(matplotlib)
if [ ${#pymissing[@]} -gt 0 ]; then
	echo "install-deps: pip installing ${pymissing[*]}"
	$PY -m pip install -q "${pymissing[@]}" 2>/dev/null ||
		$PY -m pip install -q --break-system-packages "${pymissing[@]}"
fi
exit 0
