"""Delete one chat as its owner does (POST /t/<id>/delete), in a process of its own as another Daphne process would:
`python -m bench.data.delete_one USER_ID THREAD_ID` prints {"delete_ms", "delete_status"} (bench/data/measure.py
runs it while another person's turns run in its own process)."""

import json
import os
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentweb.settings")


def main() -> int:
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    user_id, thread_id = int(sys.argv[1]), sys.argv[2]
    client = Client()
    client.force_login(get_user_model().objects.get(pk=user_id))
    client.get("/")
    started = time.perf_counter()
    response = client.post(f"/t/{thread_id}/delete", HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    elapsed = time.perf_counter() - started
    print(json.dumps({"delete_ms": round(elapsed * 1000, 1), "delete_status": response.status_code}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
