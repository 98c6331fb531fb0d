"""``python -m agentsproof``: the same command line as the ``agentsproof`` script."""

from agentsproof.cli import main

if __name__ == "__main__":
    main()
