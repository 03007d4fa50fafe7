"""ctxdag's Python client package (`ctxdag.client`); the service itself is `service`."""
