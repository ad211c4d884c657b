"""tiny-arith: a binary-reward verifiers 0.4 environment with its dataset built in code."""

import re

import verifiers.v1 as vf

_INTEGER = re.compile(r"-?\d+")


def last_integer(text: str) -> str | None:
    """The answer is the last integer in the reply, so working shown before it is allowed."""
    found = _INTEGER.findall(text)
    return found[-1] if found else None


def is_correct(reply: str, answer: str) -> bool:
    return last_integer(reply) == answer


class TinyArithData(vf.TaskData):
    answer: str


class TinyArithTask(vf.Task[TinyArithData]):
    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    @vf.reward(weight=1.0)
    async def correct(self, trace: vf.Trace) -> float:
        return 1.0 if is_correct(trace.last_reply, self.data.answer) else 0.0

    async def validate(self, runtime) -> bool:
        # The gold answer must pass the very check rollouts are scored with.
        return is_correct(self.data.answer, self.data.answer)


class TinyArithConfig(vf.TasksetConfig):
    num_tasks: int = 20


def problem(i: int) -> tuple[int, int]:
    """Operands spread over a few magnitudes, deterministic so runs are comparable."""
    return 3 + 7 * i, 11 + (13 * i * i) % 90


class TinyArithTaskset(vf.Taskset[TinyArithTask, TinyArithConfig]):
    def load(self) -> list[TinyArithTask]:
        tasks = []
        for i in range(self.config.num_tasks):
            a, b = problem(i)
            data = TinyArithData(
                prompt=f"What is {a} + {b}? Reply with the number only.",
                system_prompt="You are a careful calculator.",
                answer=str(a + b),
            )
            tasks.append(TinyArithTask(data, self.config.task))
        return tasks


__all__ = ["TinyArithTaskset"]
