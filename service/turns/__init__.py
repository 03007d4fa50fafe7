"""Running turns: the turn writer (the only HEAD mover here), model providers, the
provider-neutral prompt shape (messages.py) and replay."""
