"""ok-env: twenty requests to answer with the single word "ok"; a reply is right or wrong."""

import verifiers.v1 as vf


class OkTask(vf.Task[vf.TaskData]):
    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    @vf.reward(weight=1.0)
    async def said_ok(self, trace: vf.Trace) -> float:
        return 1.0 if trace.last_reply.strip().strip(".!").lower() == "ok" else 0.0


class OkTaskset(vf.Taskset[OkTask, vf.TasksetConfig]):
    def load(self) -> list[OkTask]:
        return [OkTask(vf.TaskData(prompt=f"Request {i}: reply with the single word ok."), self.config.task)
                for i in range(20)]


__all__ = ["OkTaskset"]
