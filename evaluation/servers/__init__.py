"""LLM servers started for a run or a test and stopped by their process id: llama.cpp's (`llamacpp_server`) and
vLLM's OpenAI server (`vllm_server`); the profiles reach them through models/llm/openai_backend.py."""
