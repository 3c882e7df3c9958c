"""What a process keeps under one settings stamp (tools/settings_cache.py SettingsCache)."""

from tools.settings_cache import SettingsCache


class Reads:
    """Counts the reads an answer took."""

    def __init__(self):
        self.count = 0

    def __call__(self):
        self.count += 1
        return f"answer {self.count}"


def cache(size: int = 10) -> SettingsCache:
    return SettingsCache({"toolsets": size, "agents": size})


def test_an_answer_is_read_once_while_the_stamp_stays():
    kept, read = cache(), Reads()

    assert kept.get("s1", "toolsets", "owner", read) == "answer 1"
    assert kept.get("s1", "toolsets", "owner", read) == "answer 1"
    assert read.count == 1


def test_a_new_stamp_reads_it_again():
    kept, read = cache(), Reads()
    kept.get("s1", "toolsets", "owner", read)

    assert kept.get("s2", "toolsets", "owner", read) == "answer 2"


def test_a_new_stamp_asked_for_by_one_section_forgets_every_sections_answers():
    kept, tools, agents = cache(), Reads(), Reads()
    kept.get("s1", "toolsets", "owner", tools)
    kept.get("s1", "agents", 7, agents)
    kept.get("s2", "toolsets", "owner", tools)

    assert kept.get("s2", "agents", 7, agents) == "answer 2"


def test_each_section_and_key_has_its_own_answer():
    kept = cache()

    mine, theirs = kept.get("s1", "toolsets", "owner", lambda: "mine"), kept.get("s1", "toolsets", "x", lambda: "x")
    agent = kept.get("s1", "agents", "owner", lambda: "agent")
    assert (mine, theirs, agent) == ("mine", "x", "agent")


def test_no_stamp_keeps_nothing():
    kept, read = cache(), Reads()
    kept.get(None, "toolsets", "owner", read)

    assert kept.get(None, "toolsets", "owner", read) == "answer 2"


def test_past_its_size_a_section_forgets_and_reads_again():
    kept, read = cache(size=3), Reads()
    kept.get("s1", "toolsets", "first", read)
    for key in ("second", "third", "fourth"):
        kept.get("s1", "toolsets", key, lambda: "other")

    assert kept.get("s1", "toolsets", "first", read) == "answer 2"
