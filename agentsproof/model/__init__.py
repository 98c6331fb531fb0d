"""Layer 1: the nouns (eval-file models, grader configs, results, items and cases, the skill folder). No run logic."""
