"""`manage.py schedules add|list|pause|resume|remove` (docs/background.md): for operators' scripts. `add`
prints the new schedule's id alone on stdout; an error goes to stderr with a non-zero status, and nothing is written."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from schedules import services
from schedules.models import PROMPT_CHARS, Schedule
from schedules.timing import in_words


class Command(BaseCommand):
    help = "Make, list, pause, resume or remove schedules (an agent asked a prompt at set times, as its owner)."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        add = actions.add_parser("add", help="Make a schedule; prints its id.")
        add.add_argument("username")
        add.add_argument("--agent", required=True, help="The agent's slug.")
        add.add_argument("--prompt", required=True, help="What the agent is asked; may say {date} and {time}.")
        when = add.add_mutually_exclusive_group(required=True)
        when.add_argument("--cron", help='Five cron fields, such as "0 9 * * 1-5".')
        when.add_argument("--every", type=int, metavar="MINUTES")
        add.add_argument("--tz", default="UTC", help="The cron expression's IANA time zone (default UTC).")
        add.add_argument("--thread", choices=["new", "one"], default="new", help="A new thread each time, or one.")
        actions.add_parser("list", help="Every schedule: id, owner, agent, when, next run, paused.")
        for name in ("pause", "resume", "remove"):
            actions.add_parser(name).add_argument("id", type=int)

    def handle(self, *args, **options):
        action = options["action"]
        if action == "add":
            self.add(options)
        elif action == "list":
            self.list()
        else:
            schedule = Schedule.objects.filter(pk=options["id"]).first()
            if schedule is None:
                raise CommandError(f"No schedule {options['id']}.")
            if action == "pause":
                services.pause(schedule)
            elif action == "resume":
                services.resume(schedule)
            else:
                schedule.delete()

    def add(self, options) -> None:
        owner = get_user_model().objects.filter(username=options["username"]).first()
        if owner is None:
            raise CommandError(f"No user {options['username']!r}.")
        if len(options["prompt"]) > PROMPT_CHARS:
            raise CommandError(f"The prompt has more than {PROMPT_CHARS} characters.")
        cron = options["cron"]
        schedule = Schedule(
            owner=owner,
            agent=options["agent"],
            prompt=options["prompt"],
            kind=Schedule.Kind.CRON if cron is not None else Schedule.Kind.EVERY,
            cron=cron or "",
            time_zone=options["tz"],
            every_minutes=options["every"],
            target=options["thread"],
        )
        try:
            services.save(schedule)
        except ValidationError as error:
            raise CommandError(" ".join(m for ms in error.message_dict.values() for m in ms)) from None
        self.stdout.write(str(schedule.pk))

    def list(self) -> None:
        for s in Schedule.objects.select_related("owner").order_by("pk"):
            when = in_words(s.kind, s.cron, s.time_zone, s.every_minutes) or f"{s.cron} ({s.time_zone})"
            state = f"paused: {s.pause_reason}" if s.paused else f"next {s.next_run_at:%Y-%m-%d %H:%M} UTC"
            self.stdout.write(f"{s.pk}\t{s.owner.username}\t{s.agent}\t{when}\t{s.target}\t{state}")
