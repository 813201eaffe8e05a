"""What the tests run against as real processes and servers: an ACP agent written with the SDK
(`acp_agent/`) and an OpenAI-compatible server (`openai_fake/`). The benchmarks use them too.
`clock`: a clock a test moves by hand (a delay tested without waiting for it)."""
