"""Indexes whose SQL differs by database."""

from django.db import models
from django.db.models.expressions import OrderBy


class DescNullsLastIndex(models.Index):
    """An index with columns in `F(...).desc(nulls_last=True)` order, as a query orders them. PostgreSQL's descending
    index puts NULLs first, so only one made NULLS LAST serves that order; SQLite's descending order puts them last
    already, and its CREATE INDEX refuses the words: there the columns are plain DESC (the same order)."""

    def create_sql(self, model, schema_editor, using="", **kwargs):
        if schema_editor.connection.vendor != "sqlite":
            return super().create_sql(model, schema_editor, using=using, **kwargs)
        plain = [
            OrderBy(e.expression, descending=True) if isinstance(e, OrderBy) and e.descending and e.nulls_last else e
            for e in self.expressions
        ]
        index = models.Index(*plain, name=self.name, condition=self.condition, db_tablespace=self.db_tablespace)
        return index.create_sql(model, schema_editor, using=using, **kwargs)
