"""Layer 2: LLM providers behind one async interface (:mod:`agentsproof.llm.base`), chosen
by :mod:`agentsproof.llm.registry`; retries, throttling, the response cache, prices."""
