"""The editor's desk: ``brief desk``, a web application over the CLI's functions."""
