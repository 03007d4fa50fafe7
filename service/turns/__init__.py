"""Running turns: the turn writer (the only HEAD mover here) and model providers."""
