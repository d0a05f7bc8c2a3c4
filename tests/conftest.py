import os

from hypothesis import settings

# CI runs more examples; a developer's run stays quick. Both are deterministic (derandomize).
settings.register_profile("dev", max_examples=60, deadline=None, derandomize=True)
settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
