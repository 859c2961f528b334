"""LLM access: the gateway every call goes through (``gateway``), the lean OpenAI-compatible chat model
(``http_chat``), the answer cache, the request scheduler, and the embedded local model: its catalogue and server
(``local``, ``local_server``)."""
