#!/usr/bin/env bash
# Run every test: installs graphviz, Chromium and the dev extras first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_setup.sh
setup_env dev graphviz chromium npm  # npm: axe-core for the accessibility audit
# The linter first: its rules are in pyproject.toml, and every `# noqa` names one that runs.
ruff check .
python -m pytest "$@"
# The engine again on a strict Array-API namespace: any NumPy assumption fails here.
AUTODIFF_VIZ_BACKEND=array_api_strict python -m pytest -q -p no:cacheprovider \
  tests/test_guides.py tests/test_engine.py tests/test_gradcheck.py tests/test_backends.py \
  tests/test_forward.py tests/test_models.py tests/test_fast_paths.py tests/test_conv.py tests/test_more_ops.py \
  tests/test_keras_extras.py tests/test_tf_function.py tests/test_tf_arguments.py tests/test_op_lanes.py \
  tests/test_reach.py tests/test_direct_rules.py
