"""API errors, budgets, and the stop reasons that end a turn with a notice instead of a crash."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.agent.transcript import cap_transcript
from bot.tools.catalog import Catalog
from tests.agent import harness
from tests.agent.test_basic import CONV
from tests.support.fake_anthropic import FakeAnthropic, error_reply, text_reply, tool_use_reply


async def test_529_then_success_is_retried_by_the_sdk(
    redis: Redis, fake: FakeAnthropic, small_catalog: Catalog
) -> None:
    fake.script(error_reply(529), text_reply("ok after retry"))
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    await agent.submit(CONV, "1-0", "U1", "hi")
    await agent.drive(CONV)
    assert len(fake.message_requests) == 2
    assert fake.message_requests[0] == fake.message_requests[1]
    assert harness.replies(await harness.outbox(redis, CONV)) == ["ok after retry"]


async def test_529_persisting_ends_turn_and_keeps_conversation(
    redis: Redis, fake: FakeAnthropic, small_catalog: Catalog
) -> None:
    fake.script(error_reply(529), error_reply(529), error_reply(529))  # max_retries=2: three attempts
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    await agent.submit(CONV, "1-0", "U1", "first question")
    await agent.drive(CONV)
    assert len(fake.message_requests) == 3 and fake.pending == 0
    events = await harness.outbox(redis, CONV)
    assert events[-2].data["kind"] == "notice" and "overloaded (HTTP 529)" in events[-2].data["text"]
    assert "Your message is kept" in events[-2].data["text"] and events[-1].kind == "idle"
    transcript, state = await agent.conversations.load(CONV)
    assert state.turn is None
    assert transcript == [{"role": "user", "content": [{"type": "text", "text": "first question"}]}]

    fake.script(text_reply("answer to both"))
    await agent.submit(CONV, "2-0", "U1", "second try")
    await agent.drive(CONV)
    assert fake.message_requests[-1]["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "first question"}, {"type": "text", "text": "second try"}]}]
    assert harness.replies(await harness.outbox(redis, CONV))[-1] == "answer to both"


async def test_iteration_budget(redis: Redis, fake: FakeAnthropic, small_catalog: Catalog) -> None:
    bad = '{"nope": true}'
    fake.script(*(tool_use_reply([(None, "service_status", bad)]) for _ in range(3)))
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings(max_iterations_per_turn=2))
    await agent.submit(CONV, "1-0", "U1", "loop forever")
    await agent.drive(CONV)
    assert len(fake.message_requests) == 2
    assert "limit of 2 model steps" in harness.replies(await harness.outbox(redis, CONV))[-1]
    transcript, _ = await agent.conversations.load(CONV)
    assert transcript[-1]["content"][0]["type"] == "tool_result"  # every tool_use keeps its result


async def test_token_budget(redis: Redis, fake: FakeAnthropic, small_catalog: Catalog) -> None:
    fake.script(text_reply("one", input_tokens=10, output_tokens=5), text_reply("two", input_tokens=10,
                                                                                output_tokens=5))
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings(max_conversation_tokens=20))
    for n in range(3):
        await agent.submit(CONV, f"{n + 1}-0", "U1", f"q{n}")
        await agent.drive(CONV)
    assert len(fake.message_requests) == 2
    texts = harness.replies(await harness.outbox(redis, CONV))
    assert texts[:2] == ["one", "two"] and "token budget (30 of 20 tokens)" in texts[2]


async def test_user_rate_limit(redis: Redis, fake: FakeAnthropic, small_catalog: Catalog) -> None:
    fake.script(text_reply("a"), text_reply("b"))
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings(user_rate_limit_per_minute=2))
    accepted = [await agent.submit(CONV, f"{n + 1}-0", "U1", f"m{n}") for n in range(3)]
    assert accepted == [True, True, False]
    assert not await agent.submit(CONV, "3-0", "U1", "m2")  # the refused event is not retried either
    assert await agent.submit("other", "9-0", "U2", "another user is not limited")
    await agent.drive(CONV)
    texts = harness.replies(await harness.outbox(redis, CONV))
    assert "too fast" in texts[0] and texts[1:] == ["a", "b"]


async def test_stop_reasons_end_with_clear_replies(
    redis: Redis, fake: FakeAnthropic, small_catalog: Catalog
) -> None:
    fake.script(
        text_reply("partial answ", stop_reason="max_tokens"),
        text_reply("", stop_reason="refusal"),
        text_reply("", stop_reason="model_context_window_exceeded"),
        text_reply("fine", stop_reason="stop_sequence"),
    )
    agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
    for n in range(4):
        await agent.submit(CONV, f"{n + 1}-0", "U1", f"q{n}")
        await agent.drive(CONV)
    texts = harness.replies(await harness.outbox(redis, CONV))
    assert texts[0].startswith("partial answ") and "cut off at the 1024-token" in texts[0]
    assert "declined" in texts[1]
    assert "context window" in texts[2]
    assert texts[3] == "fine"
    # the refused request was removed; the empty assistant contents were not stored
    assert fake.message_requests[3]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "q0"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "partial answ"}]},
        {"role": "user", "content": [{"type": "text", "text": "q2"}, {"type": "text", "text": "q3"}]},
    ]


def test_transcript_cap_cuts_only_at_user_turn_starts() -> None:
    def turn(n: int) -> list[dict[str, object]]:
        return [
            {"role": "user", "content": [{"type": "text", "text": f"q{n}"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{n}", "name": "x", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "r"}]},
            {"role": "assistant", "content": [{"type": "text", "text": f"a{n}"}]},
        ]

    transcript = turn(1) + turn(2) + turn(3)
    assert cap_transcript(transcript, 6, 10**6, keep_from=8) == 8
    assert transcript == turn(3)
    transcript = turn(1) + turn(2)
    assert cap_transcript(transcript, 3, 10**6, keep_from=4) == 4  # current turn kept whole, even over cap
    assert transcript == turn(2)
    transcript = turn(1) + turn(2)
    size = len(str(turn(2))) + 50
    assert cap_transcript(transcript, 100, size, keep_from=4) == 4
    assert cap_transcript(transcript, 100, 10**6, keep_from=0) == 0


async def test_refused_key_reaches_the_user_as_a_sentence(redis: Redis, small_catalog: Catalog) -> None:
    with FakeAnthropic(api_key="the-right-key") as fake:  # the bot's key ("test-key") was revoked
        agent = harness.build_agent(redis, fake.base_url, small_catalog, harness.settings())
        await agent.submit(CONV, "1-0", "U1", "hi")
        await agent.drive(CONV)
        assert len(fake.requests) == 1  # a 401 is not retried
    notice = next(e for e in await harness.outbox(redis, CONV) if e.data.get("kind") == "notice").data["text"]
    assert notice == (
        "I could not get an answer: the model API refused the bot's credentials (HTTP 401: invalid x-api-key);"
        " an operator needs to fix ANTHROPIC_API_KEY. Your message is kept."
    )
