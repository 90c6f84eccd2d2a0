"""The conversation loop per thread over the Anthropic Messages API. Knows nothing of Slack or subprocesses.

Entry points: ``loop.Agent`` (``submit``, ``stop``, ``drive``), ``worker.AgentWorker`` (the role's process loop
over the inbox and the completions streams), ``settings.AgentSettings`` (the ``agent:`` config section),
``model.ModelClient``/``model.make_client``. Outbox event data is documented in ``bus.py``. Nothing is
imported here, so front ends importing ``bot.agent.bus`` do not load the Anthropic SDK.
"""
