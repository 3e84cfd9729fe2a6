"""Reading inputs and writing resumable outputs. No torch here."""
