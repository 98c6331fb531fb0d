"""agentsproof: does this skill or agent make the model's answers better, and by how much?"""

__version__ = "0.1.0"
