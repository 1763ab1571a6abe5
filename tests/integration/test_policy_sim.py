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
    """Each class's p99.9 slowdown at the peak load (0.2 simulated s)."""
    out = subprocess.run([SIM, "--workload", "extreme", "--policies", "TS", "--steps", "2",
                          "--slo", "1e9", "--seconds", "0.2", "--requests", "2000000",
                          *extra], capture_output=True, text=True, timeout=60, check=True)
    points = [json.loads(l) for l in out.stdout.splitlines()]
    peak = [p for p in points if p["kind"] == "point"][-1]
    assert not peak["overloaded"]
    return peak["p999_slowdown"]


def short_at_peak(*extra):
    return at_peak("--ts-queue", "type", *extra)["short"]


def test_shortest_type_first_bounds_a_short_wait_by_one_slice_and_its_cost():
    # a 0.5 us request waits at most one slice and the 1 us that follows
    assert short_at_peak() <= (4 + 1 + 0.5) / 0.5, "5 us period: 4 us slice + 1 us"
    assert short_at_peak("--ts-cost", "worker") <= (5 + 1 + 0.5) / 0.5
    assert short_at_peak("--ts-cost", "request") <= (5 + 0.5) / 0.5, "worker free at once"


def test_shinjukus_slo_choice_lets_aged_long_requests_go_first():
    # a long request that waited 1000x a short one's wait is as late
    # against its SLO, so shorts queue behind it beyond any slice
    assert at_peak()["short"] > 2 * (5 + 1 + 0.5) / 0.5


def test_preempted_to_the_head_long_requests_finish_in_order():
    # round robin (to the tail) stretches every long request at once
    assert at_peak("--ts-queue", "type")["long"] < 0.8 * at_peak(
        "--ts-queue", "type", "--ts-requeue", "tail")["long"]


def test_a_reading_it_does_not_know_is_refused():
    for opt in (["--ts-queue", "fifo"], ["--ts-cost", "nobody"], ["--ts-requeue", "mid"],
                ["--quantum-us", "1"]):
        r = subprocess.run([SIM, *opt], capture_output=True, text=True, timeout=10)
        assert r.returncode == 2 and "usage" in r.stderr, opt
