"""The on-call front end: alerts open investigations, threads become incident timelines.

Beside ``bot/slack/`` as another front end: it starts conversations (through the agent's inbox) and reads the
audit trail, and it posts only through the agent's outbox (which the Slack poster consumes), never through
Slack calls of its own.
"""
