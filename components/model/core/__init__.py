"""Building blocks every model uses: errors with file and field, field types, messages, labels."""
