import os

from hypothesis import settings

# A checker's own bug raises (rope_lib.exercises.answers.guarded) in the tests and in the
# notebooks' kernels nbval starts from here, instead of showing as a learner's feedback.
os.environ["ROPE_STRICT_CHECKERS"] = "1"

# CI runs more examples; a developer's run stays quick. Both are deterministic (derandomize).
settings.register_profile("dev", max_examples=60, deadline=None, derandomize=True)
settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
