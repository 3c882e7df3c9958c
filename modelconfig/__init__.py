"""Model configurations kept in the database and managed in the admin; the environment's model is the fallback."""
