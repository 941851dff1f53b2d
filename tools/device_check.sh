#!/usr/bin/env bash
# The checks to run when a task is lent a real GPU machine (the device tool), as one prepared script:
# a capture with the smoke test (a new fixture host), the gpu-marked tests, the smoke-accuracy benchmark,
# the TUI's smoke view (Pilot SVGs, and tmux when the machine has it), quick and deep smoke runs, and the raw
# tool outputs the parsers are checked against. Everything lands in $OUT (at most 8 files come back).
#
# Here, first: mkdir -p .whl && pip download the runtime wheels the image lacks (textual, rich, distro, ...)
# and `pip wheel --no-deps -w .whl .`; then run it with carry [".whl"]:
#     bash tools/device_check.sh
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
PY=${GPU_DOCTOR_TORCH_PYTHON:-/opt/torch/.venv/bin/python}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1 GPU_DOCTOR_TORCH_PYTHON=$PY
RAW=/tmp/raw
mkdir -p "$RAW"
step() { echo; echo "=== $* ($(date +%T))"; }
{
    if [ -n "${SKIP_RAW:-}" ]; then echo "raw outputs skipped"; else
    step raw tool outputs
    nvidia-smi >"$RAW/nvidia-smi.txt" 2>&1
    cat "$RAW/nvidia-smi.txt"
    nvidia-smi -q >"$RAW/nvidia-smi-q.txt" 2>&1
    nvidia-smi -q -x >"$RAW/nvidia-smi-q.xml" 2>&1
    nvidia-smi topo -m >"$RAW/nvidia-smi-topo-m.txt" 2>&1
    nvidia-smi nvlink -s >"$RAW/nvidia-smi-nvlink-s.txt" 2>&1
    cat /proc/driver/nvidia/version >"$RAW/proc-driver-nvidia-version.txt" 2>&1
    uname -a >"$RAW/uname.txt"
    timeout 60 "$PY" -m torch.utils.collect_env >"$RAW/collect_env.txt" 2>&1
    head -60 "$RAW/collect_env.txt"
    tar czf "$OUT/raw.tgz" -C /tmp raw
    fi

    step capture with the smoke test and measurements
    timeout 150 gpu-doctor capture --python "$PY" --smoke --measure /tmp/capture
    tar czf "$OUT/capture.tgz" -C /tmp capture
    timeout 60 gpu-doctor --root /tmp/capture --smoke --plain -v >"$OUT/report.txt" 2>&1
    echo "report: exit $?"; head -80 "$OUT/report.txt"

    step pytest -m gpu
    timeout 150 python3 -m pytest -o addopts= -ra -m gpu -p no:cacheprovider -q tests/test_real_gpu.py

    step smoke accuracy
    timeout 150 python3 benchmarks/smoke_accuracy.py --python "$PY" --doctor /tmp/site/bin/gpu-doctor

    step transfer timing
    timeout 60 "$PY" benchmarks/transfer_timing.py

    step the TUI smoke view, Pilot
    timeout 120 python3 tools/tui_smoke_pilot.py --python "$PY" --out "$OUT" --limit 100

    if command -v tmux >/dev/null; then
        step the TUI smoke view, tmux, quick mode
        tmux new-session -d -s doc -x 110 -y 40 "gpu-doctor --python $PY --smoke quick; sleep 600"
        for _ in $(seq 1 90); do
            sleep 1
            tmux capture-pane -p -t doc | grep -q "Finished after" && break
        done
        sleep 1
        tmux capture-pane -p -t doc
        tmux kill-server
    fi

    [ -n "${SKIP_MODES:-}" ] && { step done; exit 0; }
    step quick smoke, JSON
    timeout 90 gpu-doctor smoke --mode quick --json --python "$PY" --yes >/tmp/quick.json 2>/tmp/quick.err
    python3 -c "import json,sys; d=json.load(open('/tmp/quick.json')); print(json.dumps(d.get('smoke'), indent=1)[:6000]); [print(f['status'], f['check_id'], f['summary']) for f in d['findings']]"

    step deep smoke, JSON
    timeout 120 gpu-doctor smoke --mode deep --json --python "$PY" --yes >/tmp/deep.json 2>/tmp/deep.err
    python3 -c "import json,sys; d=json.load(open('/tmp/deep.json')); s=d.get('smoke') or {}; print(json.dumps(s, indent=1)[:6000]); [print(f['status'], f['check_id'], f['summary']) for f in d['findings']]"
    tar czf "$OUT/smoke-json.tgz" -C /tmp quick.json deep.json quick.err deep.err
    step done
} 2>&1 | tee "$OUT/log.txt"
