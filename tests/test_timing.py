"""Where a command's time went (tools/framework/timing.py), as `eval run` and `env check` say it: the
programs' own wall times, rlpilot's around them, and the parts that add up to rlpilot's. The real commands'
splits are checked in test_eval_e2e.py and test_envs_check.py."""

from __future__ import annotations

import time

from tools.framework.timing import OTHER, STARTING, Span, Stopwatch, TimingSplit


def split(programs: dict[str, float], parts: dict[str, float]) -> TimingSplit:
    ours = sum(parts.values())
    return TimingSplit(seconds=sum(programs.values()) + ours, rlpilot=ours,
                       programs=[Span(what=k, seconds=v) for k, v in programs.items()],
                       parts=[Span(what=k, seconds=v) for k, v in parts.items()])


def test_one_program_and_rlpilots_parts_in_one_line():
    shown = split({"vf-eval": 24.1}, {STARTING: 0.6, "checking the plan": 0.3, OTHER: 0.02}).render()
    # A part under a twentieth of a second is not worth a word; its time is still in rlpilot's.
    assert shown == "vf-eval 24.1 s; rlpilot around it 0.9 s, 4% as long (starting rlpilot 0.6 s, " \
                    "checking the plan 0.3 s)"


def test_several_programs_and_none():
    assert split({"vf-validate": 8.0, "vf-eval": 12.0}, {"reading the source": 1.0}).render() == \
        "vf-validate 8.0 s, vf-eval 12.0 s; rlpilot around them 1.0 s, 5% as long (reading the source 1.0 s)"
    assert split({}, {"reading the source": 0.4}).render() == "rlpilot 0.4 s (reading the source 0.4 s)"


def test_the_stopwatch_adds_up_and_names_the_start_it_was_given():
    clock = Stopwatch(time.monotonic() - 2.0)  # a command that began two seconds before the tool
    with clock.part("checking the plan"):
        pass
    clock.program("vf-eval", 1.5)
    made = clock.split()
    parts = {part.what: part.seconds for part in made.parts}
    assert list(parts) == [STARTING, "checking the plan", OTHER] and parts[STARTING] >= 2.0
    assert made.seconds == round(1.5 + made.rlpilot, 3) and round(sum(parts.values()), 3) == made.rlpilot
    assert [part.what for part in Stopwatch().split().parts] == [OTHER]  # a chat's call starts with the tool
