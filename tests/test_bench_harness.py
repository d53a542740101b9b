"""The benchmark's timing harness measures steady time per call, whatever a library's first calls cost.

These test the harness, not anyone's speed: the calls are fakes that advance a
clock the harness is given, so every expected number follows from the fake's
durations.  Needs no peer library.
"""
import doctest
import importlib.util
import math
import pathlib

import pytest

BENCH_PATH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "bench.py"
_spec = importlib.util.spec_from_file_location("bench_harness_under_test", BENCH_PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


class FakeClock:
    """A clock that moves only when a fake call says it took some time."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def library(self, first, steady):
        """A call taking ``first[i]`` seconds on its i-th call, then ``steady`` seconds each."""
        durations = iter(first)

        def call():
            self.now += next(durations, steady)
        return call


def measure(first, steady, rounds=5, min_round=0.2):
    """What ``serve`` replies for a fake library: (warm-up reply, [(calls, seconds)] per round)."""
    clock, out = FakeClock(), []
    bench.serve(clock.library(first, steady), ["round"] * rounds, out.append, clock, min_round)
    assert len(out) == rounds + 1
    return out[0], [(r["calls"], r["seconds"]) for r in out[1:]]


def per_call(rounds):
    return [seconds / calls for calls, seconds in rounds]


def test_slow_first_call_does_not_change_the_steady_time():
    steady = 1e-4
    _, cold = measure([0.3], steady)  # like PyTorch's first grad-of-grad
    _, plain = measure([], steady)
    assert per_call(cold) == pytest.approx([steady] * 5, rel=1e-9)
    assert per_call(plain) == pytest.approx([steady] * 5, rel=1e-9)


def test_slow_first_call_does_not_shrink_the_round():
    # The old harness timed the first call and chose 0.25 s / 0.3 s -> 1 call per round.
    warm, rounds = measure([0.3], 1e-4)
    assert warm["settled"]
    assert warm["calls"] == pytest.approx(math.ceil(0.2 / 1e-4), abs=1)
    assert all(calls >= 2000 for calls, _ in rounds)


def test_first_few_slow_calls_are_all_warmed_away():
    first = [0.3, 0.3, 0.3, 0.1, 0.03, 0.01, 0.003]  # lazy set-up spread over several calls
    warm, rounds = measure(first, 2e-4)
    assert warm["warm"] == pytest.approx(2e-4, rel=1e-9)
    assert warm["warm_calls"] > len(first)
    assert per_call(rounds) == pytest.approx([2e-4] * 5, rel=1e-9)


@pytest.mark.parametrize("steady", [1e-6, 7.5e-4, 0.013, 0.07, 0.35])
def test_known_time_is_measured_and_rounds_last_the_minimum(steady):
    _, rounds = measure([], steady, rounds=3, min_round=0.2)
    assert per_call(rounds) == pytest.approx([steady] * 3, rel=1e-9)
    for calls, seconds in rounds:
        assert seconds >= 0.2
        assert seconds < 0.2 + steady + 1e-9  # one call past the minimum at most


def test_a_round_short_of_the_minimum_keeps_calling():
    # The call count came from a warm-up that saw 10 ms; calls now take 1 ms.
    clock = FakeClock()
    calls, seconds = bench.run_round(clock.library([], 1e-3), 20, clock, min_round=0.2)
    assert seconds >= 0.2
    assert calls == pytest.approx(200, abs=1)


def test_warm_up_that_never_settles_stops_at_its_budget():
    clock = FakeClock()
    k = iter(range(10 ** 9))

    def worsening():  # every call 1.5x the one before: no two batches agree
        clock.now += 1e-3 * 1.5 ** next(k)
    _, _, settled = bench.warm_up(worsening, clock, budget=5.0)
    assert not settled
    assert clock.now >= 5.0


def test_round_order_turns_so_each_library_leads_in_turn():
    libs = ["autodiff_viz", "torch", "autograd"]
    orders = [bench.round_order(libs, r) for r in range(3)]
    assert [o[0] for o in orders] == libs
    assert all(sorted(o) == sorted(libs) for o in orders)


def test_ratios_are_paired_by_round():
    ours, theirs = [0.30, 0.20, 0.24], [0.10, 0.10, 0.12]
    ratios = bench.paired_ratios(ours, theirs)
    assert ratios == pytest.approx([3.0, 2.0, 2.0])
    assert bench.spread(ratios) == pytest.approx((2.0, 2.0, 3.0))


def test_thread_settings_reach_the_children(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    pinned, defaults = bench.child_env(1), bench.child_env(None)
    assert [pinned[v] for v in bench.THREAD_VARS] == ["1"] * len(bench.THREAD_VARS)
    assert "intra_op_parallelism_threads=1" in pinned["XLA_FLAGS"]
    assert not set(bench.THREAD_VARS) & set(defaults)  # the libraries choose


def test_children_time_each_library_in_its_own_process():
    env = bench.child_env(1)
    times, info, notes = bench.time_workload([bench.OURS, "numpy"], "W2", rounds=3, env=env,
                                             min_round=0.02, gap=0.0)
    assert notes == {}
    assert sorted(times) == sorted([bench.OURS, "numpy"])
    for lib, t in times.items():
        assert len(t) == 3 and all(x > 0 for x in t)
        assert info[lib]["library"] == lib and info[lib]["calls"] >= 1


def test_a_library_that_cannot_load_is_a_note_not_a_crash():
    times, _, notes = bench.time_workload(["no_such_library"], "W2", rounds=1, env=bench.child_env(1))
    assert times == {}
    assert "no_such_library" in notes["no_such_library"]


def test_a_build_timed_under_the_wrong_name_is_refused():
    # Here autodiff_viz is the pure package: a child told to time the compiled build must not time it instead.
    times, _, notes = bench.time_workload([bench.COMPILED], "W2", rounds=1, env=bench.child_env(1))
    assert times == {}
    assert "found the pure build of autodiff_viz" in notes[bench.COMPILED]


def test_each_build_is_reported_against_the_reference_and_its_target(capsys):
    times = {bench.OURS: [0.6e-3, 0.7e-3], bench.COMPILED: [0.5e-3, 0.5e-3], "torch": [1e-3, 1e-3]}
    info = {lib: {"settled": True, "calls": 10, "warm_calls": 50} for lib in times}
    ratios = bench.report_times("W2", times, info, 2)
    assert ratios[bench.OURS, "torch"] == pytest.approx((0.65, 0.6, 0.7))
    assert ratios[bench.COMPILED, "torch"] == pytest.approx((0.5, 0.5, 0.5))
    out = capsys.readouterr().out
    assert "target: autodiff_viz / torch <= 0.6: 0.65 -> MISSED" in out
    assert "target: compiled / torch <= 0.6: 0.50 -> met" in out


def test_docstring_examples_hold():
    assert doctest.testmod(bench).failed == 0
