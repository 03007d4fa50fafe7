"""Local stand-ins for external services, for tests that must not leave the machine."""
