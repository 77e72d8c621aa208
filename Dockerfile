# The evaluation image: rebuilds what the grader runs on a g4dn.12xlarge (4x T4, fp16).
# Follows the CRAG starter kit: CUDA base, apt.txt, en_US.UTF-8, non-root user `aicrowd` (uid 1001),
# Miniconda Python, `pip install -r requirements.txt`, the repo copied into /home/aicrowd and installed (editable).
# Built here up to what needs a GPU on a stand-in base: `make image-gpu` (docs/gpu.md "Building the images here").
#
# CUDA 13 by default, because the wheels are: vllm 0.32.0 pins torch==2.13.0, whose PyPI wheel requires
# cuda-toolkit==13.0.3 (and nvidia-cudnn-cu13, nvidia-nccl-cu13), and vllm's own extension links
# libcudart.so.13. Those wheels bring the CUDA user-space libraries (libcudart, cuBLAS, ...) themselves; the
# driver API (libcuda.so) is the host's, mounted by the NVIDIA container runtime. The `-base` image adds
# cuda-compat-13-0 (/usr/local/cuda/compat, the 580-branch libcuda) and NVIDIA_REQUIRE_CUDA="cuda>=13.0
# brand=unknown,driver>=535,driver<536 ..." (branches 535, 550, 565, 570, 575; brands tesla, nvidia, grid and
# others, not GeForce/Titan). The runtime admits a host whose driver reports CUDA >= 13.0 OR matches one brand
# clause (space = or, comma = and), so it does not refuse a 535 driver on a T4, and mounts the compat libcuda in
# place of the older host one (forward compatibility: NVIDIA data center GPUs only). Whether vllm 0.32 runs that
# way on a T4 is untested. The CUDA 12 fallback (requirements-cu12.txt: vllm 0.19.1, torch 2.10.0 cu128, host
# driver >= 525.60.13) builds with
#   docker build --build-arg CUDA_BASE=nvidia/cuda:12.8.1-base-ubuntu22.04 \
#       --build-arg REQUIREMENTS=requirements-cu12.txt -t crag-submission-cu12 .
# (the grader builds the defaults: change both ARG defaults to submit it). Sources: docs/gpu.md "The host driver".
# `python scripts/preflight.py` resolves both requirement files and checks each torch wheel's CUDA against its
# base image, and the start-up lines below (docs/gpu.md "g4dn start-up").
ARG CUDA_BASE=nvidia/cuda:13.0.2-base-ubuntu22.04
FROM ${CUDA_BASE}

ENV DEBIAN_FRONTEND=noninteractive \
    LANG=en_US.UTF-8 LANGUAGE=en_US:en LC_ALL=en_US.UTF-8 \
    USER_NAME=aicrowd HOME_DIR=/home/aicrowd \
    CONDA_DIR=/home/aicrowd/.conda \
    PATH=/home/aicrowd/.conda/bin:${PATH} \
    CRAG_PROFILE=g4dn \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    VLLM_WORKER_MULTIPROC_METHOD=spawn \
    PYTORCH_NVML_BASED_CUDA_CHECK=1

# vLLM starts its engine and its 4 tensor-parallel workers by fork by default (vllm/envs.py), and only switches
# to spawn by itself when torch has lazily initialised CUDA; a plain torch.cuda.is_available() before the engine
# (cudaGetDeviceCount -> cuInit) goes unnoticed and every forked worker fails. Spawn makes the workers fresh
# processes whatever ran before (the grader's script must keep its `if __name__ == "__main__":` guard);
# the NVML-based check makes torch's own availability probes leave CUDA uninitialised.

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# apt.txt: one Debian package per line (the starter kit's convention); comments and blank lines skipped.
COPY apt.txt /tmp/apt.txt
RUN apt-get update -qq \
    && grep -v -e '^#' -e '^[[:space:]]*$' /tmp/apt.txt \
       | xargs apt-get install -qq -y --no-install-recommends locales wget ca-certificates \
    && locale-gen en_US.UTF-8 \
    && rm -rf /var/lib/apt/lists/*

# The stand-in's Python (PYTHON_FROM=system) is the base's: added here as root, with the headers Triton compiles
# against. ARG PYTHON_PACKAGES stays empty on the CUDA base, where Miniconda brings its own.
ARG PYTHON_PACKAGES=""
# hadolint ignore=DL3008
RUN if [ -n "${PYTHON_PACKAGES}" ]; then apt-get update -qq \
        && apt-get install -qq -y --no-install-recommends ${PYTHON_PACKAGES} && rm -rf /var/lib/apt/lists/*; fi

RUN adduser --disabled-password --gecos '' --uid 1001 ${USER_NAME}
USER 1001
WORKDIR ${HOME_DIR}

# Python 3.11, the version every pin is resolved for. Miniconda stays the default: the CUDA base is Ubuntu 22.04,
# whose own packages are Python 3.10 and a 3.11 release candidate (python3.11 3.11.0~rc1-1~22.04.1 in jammy-updates),
# which pip ranks below 3.11, so pins requiring Python >= 3.11 would not install; the grader reaches
# repo.anaconda.com. PYTHON_FROM=system takes the base's own python3 instead, in a virtualenv at the same path, for a
# base whose python3 is 3.11 (Debian bookworm: the stand-in base `scripts/image.py build --variant gpu` builds on
# where Miniconda cannot be downloaded; it then installs python3, python3-venv and python3-dev as root first).
ARG PYTHON_FROM=miniconda
RUN if [ "${PYTHON_FROM}" = system ]; then python3 -m venv ${CONDA_DIR}; else \
        wget -nv -O /tmp/miniconda.sh https://repo.anaconda.com/miniconda/Miniconda3-py311_24.7.1-0-Linux-x86_64.sh \
        && bash /tmp/miniconda.sh -b -p ${CONDA_DIR} && rm /tmp/miniconda.sh \
        && conda clean -ya; fi

# Triton's first kernel launch compiles its launcher with gcc against Python's headers: prove here, at build
# time, that gcc, libc's headers and Miniconda's Python.h are all present (the same -shared -fPIC compile).
RUN printf '#include <Python.h>\n#include <stdlib.h>\nint probe(void) { return Py_IsInitialized(); }\n' \
        > /tmp/triton_probe.c \
    && gcc -O1 -shared -fPIC -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
        /tmp/triton_probe.c -o /tmp/triton_probe.so \
    && rm /tmp/triton_probe.c /tmp/triton_probe.so

# Where pip finds packages: PyPI by default, what the grader reaches. Behind a proxy or with a mirror,
# `scripts/image.py build --variant gpu` passes the machine's own (as for submission/Dockerfile.cpu): PIP_* (pip
# reads them from the environment) and PIP_CA_URL, the CA bundle TLS is verified against, fetched once into the
# user's pip configuration.
ARG PIP_INDEX_URL=https://pypi.org/simple
ARG PIP_EXTRA_INDEX_URL=
ARG PIP_FIND_LINKS=
ARG PIP_TRUSTED_HOST=
ARG PIP_CA_URL=
RUN if [ -n "${PIP_CA_URL}" ]; then mkdir -p ${HOME_DIR}/.config/pip \
        && python -c 'import sys, urllib.request; open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1]).read())' \
            "${PIP_CA_URL}" ${HOME_DIR}/.config/pip/ca.crt \
        && printf '[global]\ncert = %s\n' ${HOME_DIR}/.config/pip/ca.crt > ${HOME_DIR}/.config/pip/pip.conf; fi

# requirements.txt (CUDA 13), or requirements-cu12.txt with the CUDA 12 base (see the top of this file).
ARG REQUIREMENTS=requirements.txt
COPY --chown=1001:1001 ${REQUIREMENTS} ${HOME_DIR}/${REQUIREMENTS}
RUN pip install --no-cache-dir -r "${REQUIREMENTS}"

COPY --chown=1001:1001 . ${HOME_DIR}
# The package itself, editable, so that the documented in-image commands (`python scripts/gpu_smoke.py`,
# `scripts/serve_vllm.py`, `scripts/current_results.py`) import it as they do in `make setup`'s virtualenv.
RUN pip install --no-cache-dir --no-deps -e .
CMD ["python", "local_evaluation.py"]
