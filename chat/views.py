from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render

from modelconfig.services import available_models

from . import services
from .access import NotFound, get_thread_for_user
from .llm.demo import CONNECT_HELP


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return _thread_page(request, thread=None)


@login_required
def thread_page(request: HttpRequest, thread_id) -> HttpResponse:
    try:
        thread = get_thread_for_user(request.user, thread_id)
    except NotFound:
        raise Http404("No such thread.") from None
    return _thread_page(request, thread=thread)


def _thread_page(request: HttpRequest, *, thread) -> HttpResponse:
    get_token(request)  # sets the CSRF cookie the sidebar's rename and delete requests send back
    context = {
        "thread": thread,
        "threads": services.list_threads(user=request.user),
        "model_info": services.thread_model_info(thread),
        # The picker's entries: ids, names and labels, never a key.
        "available_models": available_models(),
        "connect_help": CONNECT_HELP,
    }
    return render(request, "chat/thread.html", context)
