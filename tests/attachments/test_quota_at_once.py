"""The attachment quota holds when a person's uploads arrive at once (issue 36: twenty parallel uploads stored
1.19 MB under a 1 MB quota): the check and the row that takes the space are one step per person."""

import pytest

from tests.support.concurrency import DATABASES, at_once, migrated

FILE = 100 * 1024
QUOTA = 1024 * 1024  # room for ten of them

SETUP = f"""
from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Sum
from attachments.models import Attachment
from attachments.services import Refused, store_upload

settings.AGENTWEB_ATTACHMENT_QUOTA_BYTES = {QUOTA}
owner = User.objects.create_user("uploader")
other = User.objects.create_user("neighbour")


def attempt(n):
    store_upload(owner=other if n == 0 else owner, name=f"notes-{{n}}.txt", data=b"x" * {FILE})


def after():
    import os
    files = sum(len(names) for _, _, names in os.walk(settings.MEDIA_ROOT))
    return {{"stored": Attachment.objects.filter(owner=owner).aggregate(total=Sum("size"))["total"], "files": files}}
"""


@pytest.mark.parametrize("database", DATABASES)
def test_twenty_uploads_at_once_store_no_more_than_the_quota(database, tmp_path):
    with migrated(database, tmp_path) as env:
        outcomes, after = at_once(env, SETUP, count=21)

    assert outcomes[0] == "ok"  # another person's upload is not held back by this one's quota
    assert sorted(outcomes[1:]) == ["Refused"] * 10 + ["ok"] * 10
    assert after == {"stored": 10 * FILE, "files": 11}  # a refused upload leaves no file behind
