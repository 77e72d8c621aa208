# The evaluation image: rebuilds what the grader runs on a g4dn.12xlarge (4x T4, CUDA 12, fp16).
# Follows the CRAG starter kit: CUDA base, apt.txt, en_US.UTF-8, non-root user `aicrowd` (uid 1001),
# Miniconda Python, `pip install -r requirements.txt`, the repo copied into /home/aicrowd.
FROM nvidia/cuda:12.8.1-cudnn-runtime-ubuntu22.04

ENV DEBIAN_FRONTEND=noninteractive \
    LANG=en_US.UTF-8 LANGUAGE=en_US:en LC_ALL=en_US.UTF-8 \
    USER_NAME=aicrowd HOME_DIR=/home/aicrowd \
    CONDA_DIR=/home/aicrowd/.conda \
    PATH=/home/aicrowd/.conda/bin:${PATH} \
    CRAG_PROFILE=g4dn \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    VLLM_ATTENTION_BACKEND=TRITON_ATTN

COPY apt.txt /tmp/apt.txt
RUN apt-get update -qq && apt-get install -qq -y --no-install-recommends locales wget ca-certificates \
        $(grep -v '^#' /tmp/apt.txt) \
    && locale-gen en_US.UTF-8 \
    && rm -rf /var/lib/apt/lists/*

RUN adduser --disabled-password --gecos '' --uid 1001 ${USER_NAME}
USER ${USER_NAME}
WORKDIR ${HOME_DIR}

RUN wget -nv -O /tmp/miniconda.sh https://repo.anaconda.com/miniconda/Miniconda3-py311_24.7.1-0-Linux-x86_64.sh \
    && bash /tmp/miniconda.sh -b -p ${CONDA_DIR} && rm /tmp/miniconda.sh \
    && conda install -y cmake && conda clean -ya

COPY --chown=1001:1001 requirements.txt ${HOME_DIR}/requirements.txt
RUN pip install --no-cache-dir -r requirements.txt

COPY --chown=1001:1001 . ${HOME_DIR}
CMD ["python", "local_evaluation.py"]
