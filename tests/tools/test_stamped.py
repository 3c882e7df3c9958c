"""What a process keeps under one settings stamp (tools/stamped.py)."""

from tools.stamped import StampedAnswers


class Reads:
    """Counts the reads an answer took."""

    def __init__(self):
        self.count = 0

    def __call__(self):
        self.count += 1
        return f"answer {self.count}"


def test_an_answer_is_read_once_while_the_stamp_stays():
    kept, read = StampedAnswers(size=10), Reads()

    assert kept.get("s1", "owner", read) == "answer 1"
    assert kept.get("s1", "owner", read) == "answer 1"
    assert read.count == 1


def test_a_new_stamp_reads_it_again():
    kept, read = StampedAnswers(size=10), Reads()
    kept.get("s1", "owner", read)

    assert kept.get("s2", "owner", read) == "answer 2"


def test_each_key_has_its_own_answer():
    kept = StampedAnswers(size=10)

    assert (kept.get("s1", "owner", lambda: "mine"), kept.get("s1", "stranger", lambda: "theirs")) == ("mine", "theirs")


def test_no_stamp_keeps_nothing():
    kept, read = StampedAnswers(size=10), Reads()
    kept.get(None, "owner", read)

    assert kept.get(None, "owner", read) == "answer 2"


def test_past_its_size_it_forgets_and_reads_again():
    kept, read = StampedAnswers(size=3), Reads()
    kept.get("s1", "first", read)
    for key in ("second", "third", "fourth"):
        kept.get("s1", key, lambda: "other")

    assert kept.get("s1", "first", read) == "answer 2"
