"""The http target: an agent behind a JSON endpoint (``target``) and what it sends and
reads (``reply``)."""
