"""reverse-words: a continuous-reward verifiers 0.4 environment with its dataset built in code."""

from difflib import SequenceMatcher

import verifiers.v1 as vf

SENTENCES = (
    "the quick brown fox jumps",
    "rewards should differ at baseline",
    "small steps make stable training",
    "every group needs some variance",
    "check the verifier on gold answers",
    "a larger group finds rare successes",
    "inspect samples early and often",
    "keep the learning rate conservative",
    "the model reads the whole prompt",
    "long answers may be truncated",
    "binary rewards suit difficulty filtering",
    "partial credit gives a smoother signal",
    "push the environment before training",
    "watch the entropy as steps go by",
    "stop when the reward stops improving",
    "one word at a time from the end",
    "data that is too easy teaches nothing",
    "data that is too hard teaches nothing either",
    "a clean eval is worth a long run",
    "reverse these words and nothing else",
)


def reversed_words(sentence: str) -> str:
    return " ".join(reversed(sentence.split()))


def similarity(reply: str, target: str) -> float:
    """Word-level similarity, so one misplaced word costs a fraction, not everything."""
    return SequenceMatcher(None, reply.lower().split(), target.lower().split()).ratio()


class ReverseWordsData(vf.TaskData):
    answer: str


class ReverseWordsTask(vf.Task[ReverseWordsData]):
    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    @vf.reward(weight=1.0)
    async def overlap(self, trace: vf.Trace) -> float:
        return similarity(trace.last_reply, self.data.answer)

    async def validate(self, runtime) -> bool:
        return similarity(self.data.answer, self.data.answer) == 1.0


class ReverseWordsConfig(vf.TasksetConfig):
    num_tasks: int = len(SENTENCES)


class ReverseWordsTaskset(vf.Taskset[ReverseWordsTask, ReverseWordsConfig]):
    def load(self) -> list[ReverseWordsTask]:
        return [
            ReverseWordsTask(
                ReverseWordsData(
                    prompt=f"Reverse the order of the words in this sentence: {sentence}",
                    system_prompt="Reply with the reversed sentence only, in lower case.",
                    answer=reversed_words(sentence),
                ),
                self.config.task,
            )
            for sentence in SENTENCES[: self.config.num_tasks]
        ]


__all__ = ["ReverseWordsTaskset"]
