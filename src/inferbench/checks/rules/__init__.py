"""The rules, one module per subject. Importing this package registers every rule.

IB0xx engine   IB1xx master entries   IB2xx recipe references and recipes
IB3xx master entry vs its recipe   IB4xx clusters   IB5xx changelog   IB6xx naming   IB7xx images
(IB15x, accepted.py: values InferenceX's generator accepts but that are wrong)
"""

from inferbench.checks.rules import (  # noqa: F401  (imported to register their rules)
    accepted,
    changelog,
    cluster,
    deployment,
    engine_flags,
    golden_al,
    images,
    master,
    naming,
    recipe,
    references,
)
