"""A number of bytes as a person reads it (512 B, 1.5 KB, 10.0 MB): in the refusals of a request's body
(agentweb/request_limits.py) and an upload's (attachments/), and in a thread's export (sharing/export.py)."""


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
