"""Sums of two small numbers, scored by the last number in the reply: the v0 API (verifiers <= 0.3)."""

import re

import verifiers as vf
from datasets import Dataset


def correct(completion, answer, **kwargs) -> float:
    text = completion[-1]["content"] if isinstance(completion, list) and completion else str(completion or "")
    numbers = re.findall(r"-?\d+", text or "")
    return 1.0 if numbers and numbers[-1] == answer else 0.0


def load_environment(num_examples: int = 8, **kwargs) -> vf.Environment:
    # Built in code: the checks and the smoke eval run with no download.
    dataset = Dataset.from_list([{"question": f"What is {i + 3} plus {i}? Reply with the sum.",
                                  "answer": str(2 * i + 3)} for i in range(num_examples)])
    return vf.SingleTurnEnv(dataset=dataset, system_prompt="Answer briefly.",
                            rubric=vf.Rubric(funcs=[correct], weights=[1.0]), **kwargs)
