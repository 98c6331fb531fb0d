"""Layer 3: reports of a finished run (JSON, Markdown, HTML, JUnit, JSONL, charts)."""
