"""``AgentSettings``: the ``agent:`` section of the YAML configuration.

``extra="forbid"`` so a typo (``max_token``) fails at startup instead of silently running with a default.
Every limit has a safe default so a first run needs only an API key.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AgentSettings(BaseModel):
    """Model, limits and budgets of the conversation loop."""

    model_config = ConfigDict(extra="forbid")

    model: str = "claude-sonnet-5-5"
    max_tokens: int = Field(default=4096, gt=0, description="max_tokens of each Messages API request")
    system_prompt: str = Field(
        default="You are an on-call assistant. Investigate with the tools you are given and answer concisely.",
        description="operator's prompt; the fixed safety preamble and each application's llm_extra_info are"
        " added around it",
    )
    max_iterations_per_turn: int = Field(
        default=12, gt=0, description="model requests per user turn (pause_turn continuations included)"
    )
    max_conversation_tokens: int = Field(
        default=2_000_000, gt=0,
        description="tokens a conversation may consume in total (input incl. cache reads/writes + output of"
        " every request); a spend budget, checked before each request",
    )
    user_rate_limit_per_minute: int = Field(default=20, gt=0, description="user messages per user per minute")
    transcript_retention_seconds: int = Field(default=7 * 86400, gt=0)
    transcript_max_messages: int = Field(default=200, gt=1)
    transcript_max_bytes: int = Field(default=2_000_000, gt=0)
    request_timeout: float = Field(default=120.0, gt=0, description="seconds per HTTP request to the API")
    max_retries: int = Field(default=3, ge=0, description="SDK retries (429, 529, 5xx, network) per request")
    lock_ttl_seconds: float = Field(
        default=30.0, gt=0, description="per-conversation lock TTL; renewed every third of it while working"
    )
    reclaim_after_seconds: float = Field(
        default=60.0, gt=0, description="idle time after which another agent replica takes over an unacked event"
    )
