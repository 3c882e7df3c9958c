"""Agents from code: API keys, the OpenAI-compatible endpoint (/v1/) and the run API (/api/v1/). docs/api.md."""
