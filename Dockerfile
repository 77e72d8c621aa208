# The evaluation image: rebuilds what the grader runs on a g4dn.12xlarge (4x T4, fp16).
# Follows the CRAG starter kit: CUDA base, apt.txt, en_US.UTF-8, non-root user `aicrowd` (uid 1001),
# Miniconda Python, `pip install -r requirements.txt`, the repo copied into /home/aicrowd.
#
# CUDA 13, because the wheels are: vllm 0.32.0 pins torch==2.13.0, whose PyPI wheel requires
# cuda-toolkit==13.0.3 (and nvidia-cudnn-cu13, nvidia-nccl-cu13), and vllm's own extension links
# libcudart.so.13. Those wheels bring the CUDA user-space libraries themselves, so the base image only
# needs the driver hook: `-base` (its NVIDIA_REQUIRE_CUDA=cuda>=13.0 makes the NVIDIA container runtime
# refuse a host driver older than 580 with a clear message instead of a late CUDA error).
# `python scripts/preflight.py` checks this line against the wheels' metadata.
FROM nvidia/cuda:13.0.2-base-ubuntu22.04

ENV DEBIAN_FRONTEND=noninteractive \
    LANG=en_US.UTF-8 LANGUAGE=en_US:en LC_ALL=en_US.UTF-8 \
    USER_NAME=aicrowd HOME_DIR=/home/aicrowd \
    CONDA_DIR=/home/aicrowd/.conda \
    PATH=/home/aicrowd/.conda/bin:${PATH} \
    CRAG_PROFILE=g4dn \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

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
    && conda install -y cmake && conda clean -ya

COPY --chown=1001:1001 requirements.txt ${HOME_DIR}/requirements.txt
RUN pip install --no-cache-dir -r requirements.txt

COPY --chown=1001:1001 . ${HOME_DIR}
CMD ["python", "local_evaluation.py"]
