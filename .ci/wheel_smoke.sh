#!/usr/bin/env bash
# The built wheel, installed alone: every command once, run from a directory outside the source tree
# on a copy of sample_data, so that nothing is read from the checkout (package data, entry point).
#   .ci/wheel_smoke.sh PYTHON     (PYTHON: the interpreter to make the fresh venv with)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
py=${1:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
left() { find . -maxdepth 2 \( -name build -o -name '*.egg-info' \) -not -path './.git/*' | sort; }
before=$(left)
uv build --wheel --out-dir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
# the build backend (hatchling) builds from the tree: no build/ or *.egg-info left in it (issue 40)
[ "$(left)" = "$before" ] || { echo "the build left in the tree: $(left)"; exit 1; }
uv venv -q --python "$py" "$work/venv"
uv pip install -q --python "$work/venv/bin/python" -c constraints.txt "$work"/dist/uqeval-*.whl
cp -r sample_data "$work/data"
cd "$work"
export PATH="$work/venv/bin:$PATH"
g=data/gaussian.parquet
run() { echo "+ $*"; "$@" >"$work/out" 2>&1 || { cat "$work/out"; echo "FAILED: $*"; exit 1; }; }
run uqeval --version
run uqeval config list
uqeval config show default >default.toml
cmp -s default.toml "$src/configs/default.toml" || { echo "FAILED: uqeval config show default"; exit 1; }
uqeval config show ci >ci.toml
run uqeval score $g --config default.toml --format json --output score.json
run uqeval coverage $g --format json
run uqeval ucc $g --format json
run uqeval recalibrate $g --method std-scaling --format json
run uqeval compare $g data/gaussian_const.parquet --bootstrap 50 --permutations 50 --format json
printf '[rules]\n"scoring_rule.crps" = { max = 100 }\n' >rules.toml
run uqeval check score.json --rules rules.toml
run uqeval plot $g --kind calibration -o calibration.png
run uqeval report $g -o report.html
run uqeval explain crps
uqeval schema score >score.schema.json  # package data: uqeval/schemas/*.schema.json
cmp -s score.schema.json "$src/uqeval/schemas/score.schema.json" || { echo "FAILED: uqeval schema score"; exit 1; }
python3 - <<'PY'
import json
from pathlib import Path

assert json.loads(Path("score.json").read_text())["metrics"]["scoring_rule"]["crps"] > 0
assert Path("calibration.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
assert "gaussian.parquet" in Path("report.html").read_text(encoding="utf-8")
PY
"$work/venv/bin/python" -c "import importlib.resources as r, uqeval; assert r.files('uqeval').joinpath('py.typed').is_file(); print('uqeval', uqeval.__version__, 'from', uqeval.__file__)" | grep -v "$src"
echo "wheel smoke: every command ran from the installed wheel"
