"""The chat socket's messages with values in them (languages/phrases.py, languages/sockets.py) and the demo model's
script, said in the person's language; the codes and the English stay as they were."""

import pytest
from channels.db import database_sync_to_async
from django.conf import settings

from chat.frames import MAX_CONTENT_CHARS
from chat.usage import BudgetExhausted
from languages.models import LanguageChoice
from languages.phrases import Phrase
from languages.sockets import said_in
from tests.chat.conftest import Client, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)


async def german_socket(user) -> Client:
    """A socket of a page drawn in German: the language cookie a signed-in person's page carries."""
    cookie = await database_sync_to_async(session_cookie)(user)
    return await Client(cookie + f"; {settings.LANGUAGE_COOKIE_NAME}=de".encode()).connect()


async def test_a_german_page_is_told_its_message_is_too_long_in_german_with_the_numbers_written_the_german_way(owner):
    client = await german_socket(owner)
    try:
        await client.ask("x" * (MAX_CONTENT_CHARS + 1), ref="r1")
        error = await client.receive()
    finally:
        await client.close()
    assert (error["type"], error["code"], error["ref"]) == ("error", "bad_frame", "r1")
    assert error["message"] == (
        "Inhalt: Die Nachricht hat 100.001 Zeichen; eine Nachricht darf höchstens 100.000 haben."
    )


async def test_an_english_page_reads_the_same_refusal_in_english(connect, owner):
    client = await connect(owner)
    await client.ask("x" * (MAX_CONTENT_CHARS + 1))
    error = await client.receive()
    assert error["message"] == "content: the message has 100,001 characters; a message can have at most 100,000."


def test_a_budget_refusal_is_said_with_its_plural_and_numbers_in_each_language():
    nearly = BudgetExhausted(100_000, 99_500, running=2).args[0]
    # The English is the exception's own text, for logs and the API.
    assert str(nearly).startswith(
        "Your daily token budget is nearly used (99,500 of 100,000 tokens today, and 2 answers"
    )
    assert said_in("de", nearly).startswith("Dein tägliches Token-Budget ist fast aufgebraucht (heute 99.500 von")
    assert "1 réponse encore en cours peut" in said_in("fr", BudgetExhausted(10, 9, running=1).args[0])
    assert "(2\xa0000 de 5\xa0000 tokens hoy)" in said_in("es", BudgetExhausted(5_000, 2_000).args[0])


def test_a_phrase_sent_to_another_process_is_said_there_in_the_sockets_language():
    refused = Phrase("The answer does not fit the form: %(problems)s", problems="email: 'x' is not an email")
    again = Phrase.from_data(refused.as_data(), str(refused))
    assert said_in("de", again) == "Die Antwort passt nicht zum Formular: email: 'x' is not an email"
    # Not a phrase (an older process's message): the English as it came.
    assert Phrase.from_data(None, "Some text.") == "Some text."


async def test_the_demo_model_answers_in_the_persons_chosen_language(connect, owner):
    await database_sync_to_async(LanguageChoice.choose)(owner, "de")
    client = await connect(owner)
    await client.ask("Was ist 23*19?")
    events = await client.run_to_end()
    answer = [e for e in events if e["type"] == "message.completed"][-1]["content"]
    assert "437" in answer and "Offline-Demomodell von agentweb" in answer


async def test_the_demo_model_understands_the_time_question_it_suggests_in_chinese(connect, owner):
    client = await connect(owner)
    await client.ask("Europe/Paris 现在几点？")
    events = await client.run_to_end()
    calls = [e["tool_call"]["name"] for e in events if e["type"] == "tool_call.started"]
    assert calls == ["current_time"]
