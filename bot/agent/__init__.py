"""The conversation loop per thread over the Anthropic Messages API. Knows nothing of Slack or subprocesses."""
