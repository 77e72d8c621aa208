# The evaluation image: rebuilds what the grader runs on a g4dn.12xlarge (4x T4, fp16).
# Follows the CRAG starter kit: CUDA base, apt.txt, en_US.UTF-8, non-root user `aicrowd` (uid 1001),
# Miniconda Python, `pip install -r requirements.txt`, the repo copied into /home/aicrowd.
#
# CUDA 13, because the wheels are: vllm 0.32.0 pins torch==2.13.0, whose PyPI wheel requires
# cuda-toolkit==13.0.3 (and nvidia-cudnn-cu13, nvidia-nccl-cu13), and vllm's own extension links
# libcudart.so.13. Those wheels bring the CUDA user-space libraries themselves, so the base image only
# needs the driver hook: `-base` (its NVIDIA_REQUIRE_CUDA=cuda>=13.0 makes the NVIDIA container runtime
# refuse a host driver older than 580 with a clear message instead of a late CUDA error).
# `python scripts/preflight.py` checks this line against the wheels' metadata, and the start-up lines below
# (README "g4dn start-up").
FROM nvidia/cuda:13.0.2-base-ubuntu22.04

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

RUN adduser --disabled-password --gecos '' --uid 1001 ${USER_NAME}
USER 1001
WORKDIR ${HOME_DIR}

RUN wget -nv -O /tmp/miniconda.sh https://repo.anaconda.com/miniconda/Miniconda3-py311_24.7.1-0-Linux-x86_64.sh \
    && bash /tmp/miniconda.sh -b -p ${CONDA_DIR} && rm /tmp/miniconda.sh \
    && conda clean -ya

# Triton's first kernel launch compiles its launcher with gcc against Python's headers: prove here, at build
# time, that gcc, libc's headers and Miniconda's Python.h are all present (the same -shared -fPIC compile).
RUN printf '#include <Python.h>\n#include <stdlib.h>\nint probe(void) { return Py_IsInitialized(); }\n' \
        > /tmp/triton_probe.c \
    && gcc -O1 -shared -fPIC -I"$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
        /tmp/triton_probe.c -o /tmp/triton_probe.so \
    && rm /tmp/triton_probe.c /tmp/triton_probe.so

COPY --chown=1001:1001 requirements.txt ${HOME_DIR}/requirements.txt
RUN pip install --no-cache-dir -r requirements.txt

COPY --chown=1001:1001 . ${HOME_DIR}
CMD ["python", "local_evaluation.py"]
