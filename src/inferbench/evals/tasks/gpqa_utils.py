"""GPQA's choice shuffling, as InferenceX applies it: every question `n_repeats` times with
its four answers in an order drawn from one seeded generator; `answer` is the correct
letter. Loaded by lm-eval from the task file beside it (`!function gpqa_utils.process_docs`).
"""

from __future__ import annotations

import random
from typing import Any

LETTERS = "ABCD"


def process_docs(dataset: Any, n_repeats: int = 2, seed: int = 3407) -> Any:
    import datasets  # lm-eval's dependency, present wherever this runs

    rng = random.Random(seed)
    docs = list(dataset)
    rows = []
    for repeat in range(n_repeats):
        for doc in docs:
            choices = [
                doc["Correct Answer"],
                doc["Incorrect Answer 1"],
                doc["Incorrect Answer 2"],
                doc["Incorrect Answer 3"],
            ]
            order = rng.sample(range(4), 4)
            row = dict(doc)
            row["A"], row["B"], row["C"], row["D"] = (choices[j] for j in order)
            row["answer"] = LETTERS[order.index(0)]
            row["repeat_id"] = repeat
            rows.append(row)
    return datasets.Dataset.from_list(rows)
