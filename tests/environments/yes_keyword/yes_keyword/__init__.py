"""yes-keyword: shaped like the bundled environments, with the flaw env check must catch.

Its reward pays whenever the reply contains "yes", so the bare reply "yes" earns full marks
without reading the question. The prompts never contain the word, so an echo earns nothing.
"""

import verifiers.v1 as vf


class YesKeywordData(vf.TaskData):
    answer: str


class YesKeywordTask(vf.Task[YesKeywordData]):
    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    @vf.reward(weight=1.0)
    async def agrees(self, trace: vf.Trace) -> float:
        return 1.0 if "yes" in trace.last_reply.lower() else 0.0

    async def validate(self, runtime) -> bool:
        return "yes" in self.data.answer


class YesKeywordConfig(vf.TasksetConfig):
    num_tasks: int = 6


class YesKeywordTaskset(vf.Taskset[YesKeywordTask, YesKeywordConfig]):
    def load(self) -> list[YesKeywordTask]:
        return [YesKeywordTask(YesKeywordData(prompt=f"Is {2 * i} an even number? Explain briefly.",
                                              answer="yes, it is even"), self.config.task)
                for i in range(self.config.num_tasks)]


__all__ = ["YesKeywordTaskset"]
