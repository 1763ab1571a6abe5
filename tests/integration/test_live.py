"""Live changes of every time-protection setting while traffic flows: no
request is lost. Its own daemon, so that no other tenant's backlog is in
the way (with protection switched off for a moment, a backlogged neighbour
would legitimately delay this tenant)."""
import json
import os
import subprocess
import time

from hg import BIN, DAEMON_IP


def test_live_changes_lose_nothing(net, daemon, cleanup):
    daemon.hgctl("tenant", "add", "steady", "--ports", "8510-8510")
    cleanup.append(daemon.echo("steady", 8510, cpus="0"))
    load = net.popen("taskset", "-c", "0", os.path.join(BIN, "hgload"),
                     "--target", f"{DAEMON_IP}:8510", "--rate", "1000", "--duration", "3",
                     "--flows", "4", "--timeout-ms", "3000", "--json",
                     stdout=subprocess.PIPE, text=True)
    changes = [("tenant", "set", "steady", "--weight", "5"),
               ("tenant", "set", "steady", "--cap", "30000"),
               ("config", "set", "boost", "0.5"),
               ("config", "set", "refill-ns", "5000"),
               ("config", "set", "protection", "off"),
               ("config", "set", "protection", "on"),
               ("config", "set", "rx-overbudget", "admit"),
               ("config", "set", "rx-overbudget", "drop"),
               ("config", "set", "refill-ns", "1000"),
               ("config", "set", "boost", "0.85"),
               ("tenant", "set", "steady", "--weight", "1", "--cap", "15000")]
    for c in changes:
        time.sleep(0.2)
        daemon.hgctl(*c)
    out = json.loads(load.communicate(timeout=30)[0])
    st = daemon.tenant_stats("steady")["cores"][0]
    assert out["sent"] > 2500 and out["lost"] == 0, (out, st["drops"])
