"""The chat target: one chat call with the arm's system prompt (``target``), and the
simulated choice among skills it offers (``skill_choice``)."""
