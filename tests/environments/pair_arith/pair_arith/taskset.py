"""pair-arith: the same addition put to two seats, `alice` and `bob`, each scored on its own trace."""

import re

import verifiers.v1 as vf


class PairArithData(vf.TaskData):
    answer: str


class PairArithTask(vf.Task[PairArithData]):
    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    @vf.reward(weight=1.0)
    async def correct(self, trace: vf.Trace) -> float:
        found = re.findall(r"-?\d+", trace.last_reply or "")
        return 1.0 if found and found[-1] == self.data.answer else 0.0

    async def validate(self, runtime) -> bool:
        return True


class PairArithTaskset(vf.Taskset[PairArithTask, vf.TasksetConfig]):
    def load(self) -> list[PairArithTask]:
        return [PairArithTask(PairArithData(idx=i, prompt=f"What is {i} + {i + 2}? Reply with the number only.",
                                            answer=str(2 * i + 2)), self.config.task) for i in range(4)]


class PairArithEnvConfig(vf.EnvConfig):
    alice: vf.AgentConfig = vf.AgentConfig()
    bob: vf.AgentConfig = vf.AgentConfig()


class PairArithEnv(vf.Env[PairArithEnvConfig]):
    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.alice.run(task)
        await agents.bob.run(task)
