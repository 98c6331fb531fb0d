"""An example agentsproof plugin: the ``max_words`` grader and the ``echo`` target."""
