"""frontend stage."""
