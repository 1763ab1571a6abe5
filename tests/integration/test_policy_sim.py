"""hg-policy-sim's TS readings (bench/policies): what each choice bounds.

No daemon: the simulator runs the policy code over simulated queues. At the
peak of `extreme` (99.5% 0.5 us / 0.5% 500 us, 16 workers) long requests
hold every worker; how long a short one then waits is what sets TS's place
against Perséphone's anchor, so each reading's bound is asserted here."""
import json
import os
import subprocess

from hg import BIN

SIM = os.path.join(BIN, "hg-policy-sim")


def at_peak(*extra):
    """The short class's p99.9 slowdown at the peak load (0.2 simulated s)."""
    out = subprocess.run([SIM, "--workload", "extreme", "--policies", "TS", "--steps", "2",
                          "--slo", "1e9", "--seconds", "0.2", "--requests", "2000000",
                          *extra], capture_output=True, text=True, timeout=60, check=True)
    points = [json.loads(l) for l in out.stdout.splitlines()]
    peak = [p for p in points if p["kind"] == "point"][-1]
    assert not peak["overloaded"]
    return peak["p999_slowdown"]["short"]


def test_type_order_bounds_a_short_wait_by_one_slice_and_its_preemption():
    # a 0.5 us request waits at most a 5 us slice and the worker's 1 us
    assert at_peak() <= (5 + 1 + 0.5) / 0.5


def test_cost_on_the_request_frees_the_worker_at_the_slice_end():
    assert at_peak("--ts-cost", "request") <= (5 + 0.5) / 0.5


def test_shinjukus_slo_choice_lets_aged_long_requests_go_first():
    # a long request that waited 1000x a short one's wait is as late
    # against its SLO, so shorts queue behind it beyond any slice
    assert at_peak("--ts-queue", "slo") > 2 * (5 + 1 + 0.5) / 0.5


def test_a_reading_it_does_not_know_is_refused():
    for opt in (["--ts-queue", "fifo"], ["--ts-cost", "nobody"]):
        r = subprocess.run([SIM, *opt], capture_output=True, text=True, timeout=10)
        assert r.returncode == 2 and "usage" in r.stderr
