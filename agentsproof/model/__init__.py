"""Layer 1: the nouns — results, items and cases, what every grader config shares, run
options and the record of a run's settings, evals.json models, the skill folder. No run logic."""
