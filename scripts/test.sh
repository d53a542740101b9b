#!/usr/bin/env bash
# Run every test: installs graphviz, Chromium and the dev extras first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_setup.sh
# npm: axe-core for the accessibility audit; build-essential and python3-dev: the compiled build below
setup_env dev graphviz chromium npm build-essential python3-dev
# The linter first: its rules are in pyproject.toml, and every `# noqa` names one that runs.
ruff check .
python -m pytest "$@"
# The engine's tests, run twice more below.
engine=(tests/test_guides.py tests/test_engine.py tests/test_gradcheck.py tests/test_backends.py
  tests/test_forward.py tests/test_models.py tests/test_fast_paths.py tests/test_conv.py tests/test_more_ops.py
  tests/test_keras_extras.py tests/test_tf_function.py tests/test_tf_arguments.py tests/test_op_lanes.py
  tests/test_reach.py tests/test_direct_rules.py)
# The engine again on a strict Array-API namespace: any NumPy assumption fails here.
AUTODIFF_VIZ_BACKEND=array_api_strict python -m pytest -q -p no:cacheprovider "${engine[@]}"
# The engine again as the compiled build (AUTODIFF_VIZ_COMPILE=1: the modules autodiff_viz/_compiled.py names,
# compiled by mypyc), unpacked outside the clone so that it is what the tests import; with the bad inputs (a
# compiled module checks its annotations as it runs) and the tests that compare bits with TF's formulas.
compiled=$(mktemp -d)
trap 'rm -rf "$compiled"' EXIT
AUTODIFF_VIZ_COMPILE=1 python -m pip wheel -q --no-deps --no-build-isolation -w "$compiled/wheel" .
python -m zipfile -e "$compiled"/wheel/autodiff_viz-*.whl "$compiled/site"
here=$PWD
on_compiled() {  # pytest on the unpacked compiled build, from outside the clone (test files named from the clone)
  (cd "$compiled" && AUTODIFF_VIZ_EXPECT_COMPILED=1 PYTHONPATH="$compiled/site" python -m pytest -q -p no:cacheprovider \
    --rootdir "$here" "${@/#/$here/}")
}
on_compiled "${engine[@]}" tests/{test_replay,test_compiled,test_bad_input,test_nonfinite}.py \
  tests/{test_tf_semantics,test_tf_gradient_order}.py
# And the compiled kernels on the strict Array-API namespace.
AUTODIFF_VIZ_BACKEND=array_api_strict on_compiled "${engine[@]}"
