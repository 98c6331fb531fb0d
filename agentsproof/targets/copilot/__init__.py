"""The copilot target: the GitHub Copilot CLI through its SDK (``target``), its permission
guard (``guard``) and its run inside a trial's container (``container``)."""
