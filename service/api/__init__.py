"""The HTTP service: FastAPI with the GraphQL schema at /graphql. Thin: no Cypher, no rules."""
